// SPDX-License-Identifier: GPL-2.0
/*
 * lib_oracle: the model-based test of inofd_watch_tree_at() (tests/oracle),
 * built for the guest, where it runs on both backends (-B both), as root
 * and as uid 65534.  See tests/oracle/README.
 */
#include "../oracle/oracle.c"
