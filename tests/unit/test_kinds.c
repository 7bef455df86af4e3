/* SPDX-License-Identifier: MIT */
/*
 * test_kinds.c - the tables of backends (backend/backends.c) and policies
 * (policy/policy.c) are what everything else reads the names from: their
 * rows number the kinds 1, 2, ... without a gap (the tools list them by
 * asking dao_backend_name and dao_policy_name for 1, 2, ... until
 * "unknown", tools/kinds/kinds.h), each name is one row's, and
 * DAO_BACKEND and DAO_POLICY take exactly the names of the rows.
 * tools/kinds/check.t holds every other list in the tree to the same rows.
 */
#include "api/config.h"
#include "backend/backends.h"
#include "base/log.h"
#include "common.h"
#include "policy/policy.h"

/* Values probed around the enums: far past any kind dao.h will number. */
#define PROBE_LO (-4)
#define PROBE_HI 256

/* What DAO_<var>=value resolves to: the kind, or -1 when refused. */
static int resolve_env(const char *var, const char *value, bool policy)
{
	struct resolved_config rc;
	dao_status st;

	test_clear_env();
	setenv(var, value, 1);
	dao_log_scope_push(test_log_level());
	st = config_resolve(NULL, &rc);
	dao_log_scope_pop();
	test_clear_env();
	if (st != DAO_OK)
		return -1;
	return policy ? (int)rc.policy : (int)rc.backend;
}

static void test_backends(void)
{
	int rows = 0, gap = 0, bad = 0;

	for (int v = PROBE_LO; v < PROBE_HI; v++) {
		const struct dao_backend_entry *e = dao_backend_entry((dao_backend_kind)v);

		if (!e)
			continue;
		rows++;
		if (v != rows) {
			tap_diag("backend row %d is %d", rows, v);
			gap++;
		}
		if (e->kind != (dao_backend_kind)v || !e->name || !*e->name ||
		    strcmp(dao_backend_name((dao_backend_kind)v), e->name) ||
		    dao_backend_named(e->name) != e || (!e->create) != (v == DAO_BACKEND_AUTO)) {
			tap_diag("backend row %d (%s) is not its kind's", v,
				 e->name ? e->name : "?");
			bad++;
		}
		if (resolve_env("DAO_BACKEND", e->name, false) != v) {
			tap_diag("DAO_BACKEND=%s does not resolve to %d", e->name, v);
			bad++;
		}
	}
	tap_ok(rows >= 2 && !gap, "the backends' rows are kinds 1 to %d, without a gap", rows);
	tap_ok(!bad, "each row: its kind, its name (dao_backend_name, dao_backend_named, "
		     "DAO_BACKEND), a constructor but for auto");
	tap_ok(!dao_backend_entry(DAO_BACKEND_DEFAULT) &&
		       !strcmp(dao_backend_name(DAO_BACKEND_DEFAULT), "default") &&
		       !strcmp(dao_backend_name((dao_backend_kind)(rows + 1)), "unknown"),
	       "DEFAULT has no row and is named \"default\"; past the last, \"unknown\"");
	tap_ok(resolve_env("DAO_BACKEND", "default", false) == -1 &&
		       resolve_env("DAO_BACKEND", "unknown", false) == -1 &&
		       resolve_env("DAO_BACKEND", "HOST", false) == -1,
	       "DAO_BACKEND takes no name no row has (default, unknown, HOST)");
}

static void test_policies(void)
{
	int rows = 0, gap = 0, bad = 0;

	for (int v = PROBE_LO; v < PROBE_HI; v++) {
		const struct dao_policy_entry *e = policy_entry((dao_policy)v);

		if (!e)
			continue;
		rows++;
		if (v != rows) {
			tap_diag("policy row %d is %d", rows, v);
			gap++;
		}
		if (e->id != (dao_policy)v || !e->name || !*e->name ||
		    strcmp(dao_policy_name((dao_policy)v), e->name) || policy_named(e->name) != e ||
		    !e->ops || policy_ops((dao_policy)v) != e->ops ||
		    !policy_valid((dao_policy)v)) {
			tap_diag("policy row %d (%s) is not its id's", v, e->name ? e->name : "?");
			bad++;
		}
		if (resolve_env("DAO_POLICY", e->name, true) != v) {
			tap_diag("DAO_POLICY=%s does not resolve to %d", e->name, v);
			bad++;
		}
	}
	tap_ok(rows >= 2 && !gap, "the policies' rows are ids 1 to %d, without a gap", rows);
	tap_ok(!bad, "each row: its id, its name (dao_policy_name, policy_named, DAO_POLICY), "
		     "its ops");
	tap_ok(!policy_entry(DAO_POLICY_DEFAULT) && policy_valid(DAO_POLICY_DEFAULT) &&
		       !strcmp(dao_policy_name(DAO_POLICY_DEFAULT), "default") &&
		       !strcmp(dao_policy_name((dao_policy)(rows + 1)), "unknown") &&
		       !policy_valid((dao_policy)(rows + 1)),
	       "DEFAULT has no row and is named \"default\"; past the last, \"unknown\"");
	tap_ok(resolve_env("DAO_POLICY", "default", true) == -1 &&
		       resolve_env("DAO_POLICY", "unknown", true) == -1 &&
		       resolve_env("DAO_POLICY", "all", true) == -1,
	       "DAO_POLICY takes no name no row has (default, unknown, all)");
}

int main(void)
{
	test_backends();
	test_policies();
	tap_plan_done();
	return tap_exit();
}
