// SPDX-License-Identifier: LGPL-2.1-or-later
/* The core's contract: registrations, trees that follow, costs, bounds. */
#include "unit.h"

DEFINE_TESTS(core,

)
