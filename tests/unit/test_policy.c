/* SPDX-License-Identifier: MIT */
/*
 * test_policy.c - the policy interface (policy/policy.h): the shipped
 * policies' victim orders from the facts alone.
 */
#include "policy/policy.h"
#include "tap.h"

static struct policy_rank rank(const struct dao_policy_ops *p, struct policy_rec f)
{
	return p->rank(NULL, &f);
}

static void test_table(void)
{
	int complete = 1;

	for (dao_policy p = DAO_POLICY_DAO; p <= DAO_POLICY_FIFO; p++) {
		const struct dao_policy_ops *o = policy_ops(p);

		complete &= o && o->rank;
	}
	tap_ok(complete, "every policy's row has its victim order");
	tap_ok(!policy_ops(DAO_POLICY_DEFAULT) && !policy_ops((dao_policy)99),
	       "default and a value outside the enum have no ops");
}

/* dao and belady: Belady's order. */
static void test_next_use_order(const char *name, const struct dao_policy_ops *p)
{
	struct policy_rec near = { .next_use = 10, .last_use = 5 };
	struct policy_rec far = { .next_use = 900, .last_use = 5 };
	struct policy_rec dead = { .next_use = POLICY_USE_DEAD, .last_use = 5 };
	struct policy_rec host = { .next_use = POLICY_USE_HOST, .last_use = 5 };
	struct policy_rec old = { .next_use = POLICY_USE_UNKNOWN, .last_use = 3 };
	struct policy_rec recent = { .next_use = POLICY_USE_UNKNOWN, .last_use = 8 };

	tap_ok(rank(p, far).key > rank(p, near).key, "%s: the farther next use goes first", name);
	tap_ok(rank(p, recent).key > rank(p, far).key,
	       "%s: no known future goes after every known use", name);
	tap_ok(rank(p, old).key > rank(p, recent).key,
	       "%s: of those, the least recently used first", name);
	tap_ok(rank(p, host).key > rank(p, old).key,
	       "%s: a record a host kernel needs next before any other use", name);
	tap_ok(rank(p, dead).key > rank(p, host).key, "%s: dead data first of all", name);
	tap_ok(rank(p, far).key == 900, "%s: the key of a known use is its seq (rule 1 reads it)",
	       name);
}

static void test_orders(void)
{
	struct policy_rec clean = { .next_use = 300 }, dirty = { .next_use = 300, .dirty = true };
	struct policy_rec a = { .next_use = 20, .last_use = 4, .load_seq = 9 };
	struct policy_rec b = { .next_use = 900, .last_use = 7, .load_seq = 2 };

	test_next_use_order("dao", &policy_dao);
	test_next_use_order("belady", &policy_belady);
	tap_ok(rank(&policy_dao, dirty).apart && !rank(&policy_dao, clean).apart,
	       "dao ranks dirty records apart");
	tap_ok(!rank(&policy_belady, dirty).apart, "belady ranks none apart");
	tap_ok(rank(&policy_lru, a).key > rank(&policy_lru, b).key,
	       "lru: the least recently used first, whatever the next use");
	tap_ok(rank(&policy_fifo, b).key > rank(&policy_fifo, a).key,
	       "fifo: the first loaded first, whatever the next use");
	tap_ok(!rank(&policy_lru, dirty).apart && !rank(&policy_fifo, dirty).apart,
	       "lru and fifo rank none apart");
	/* now 100: the clean victim is needed in 100, the dirty one in d. */
	tap_ok(policy_dao.pick_apart(NULL, 230, 200, 100),
	       "dao takes a dirty victim needed more than 1.25 times as far (130 against 100)");
	tap_ok(!policy_dao.pick_apart(NULL, 220, 200, 100), "and not one needed 120 away");
	tap_ok(!policy_dao.pick_apart(NULL, policy_key_oldest_first(1), policy_key_oldest_first(2),
				      100),
	       "a clean victim with no known future goes before any dirty one");
	tap_ok(policy_dao.pick_apart(NULL, policy_key_oldest_first(1), 200, 100),
	       "a dirty one with no known future before a clean one needed");
}

int main(void)
{
	test_table();
	test_orders();
	tap_plan_done();
	return tap_exit();
}
