// SPDX-License-Identifier: LGPL-2.1-or-later
/* One cmocka group with every unit test, so the run ends with one summary. */
#include "unit.h"

TESTS(instance)
TESTS(watch)
TESTS(events)
TESTS(tree)
TESTS(core)
TESTS(walk)
TESTS(api)
TESTS(identity)
TESTS(member)
TESTS(born)
TESTS(fanotify)
TESTS(fan_fake)
TESTS(mounts)
TESTS(stream)
TESTS(pool)
TESTS(exchange)
TESTS(sym)
TESTS(truth)
TESTS(ancestor)
TESTS(relink)
TESTS(ns)
TESTS(rescan)

int main(void)
{
	static const struct { const struct CMUnitTest *t; const size_t *n; } g[] = {
		{ instance_tests, &instance_ntests },
		{ watch_tests, &watch_ntests },
		{ events_tests, &events_ntests },
		{ tree_tests, &tree_ntests },
		{ core_tests, &core_ntests },
		{ walk_tests, &walk_ntests },
		{ api_tests, &api_ntests },
		{ identity_tests, &identity_ntests },
		{ member_tests, &member_ntests },
		{ born_tests, &born_ntests },
		{ fanotify_tests, &fanotify_ntests },
		{ fan_fake_tests, &fan_fake_ntests },
		{ mounts_tests, &mounts_ntests },
		{ stream_tests, &stream_ntests },
		{ pool_tests, &pool_ntests },
		{ exchange_tests, &exchange_ntests },
		{ sym_tests, &sym_ntests },
		{ truth_tests, &truth_ntests },
		{ ancestor_tests, &ancestor_ntests },
		{ relink_tests, &relink_ntests },
		{ ns_tests, &ns_ntests },
		{ rescan_tests, &rescan_ntests },
	};
	struct CMUnitTest *all;
	size_t i, n = 0;

	for (i = 0; i < sizeof(g) / sizeof(g[0]); i++)
		n += *g[i].n;
	all = calloc(n, sizeof(*all));
	if (!all)
		return 1;
	n = 0;
	for (i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		memcpy(all + n, g[i].t, *g[i].n * sizeof(*all));
		n += *g[i].n;
	}
	if (getenv("UNIT_FILTER"))	/* e.g. UNIT_FILTER='identity_*' */
		cmocka_set_test_filter(getenv("UNIT_FILTER"));
	return _cmocka_run_group_tests("libinofd", all, n, NULL, NULL);
}
