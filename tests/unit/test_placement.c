/* SPDX-License-Identifier: MIT */
/*
 * test_placement.c - the hand-offs between the job's thread and the
 * executor, with the two on different CPUs (every wait spins on the other
 * CPU's progress before it sleeps: core/lock.h) and on one CPU (nothing
 * spins). Each placement runs launches through a small window (the job
 * waits for the window to drain), blocking reads between them (the job
 * waits for one op), syncs, and buffers created and released by the
 * thousand (records freed by the executor and reused by the next create).
 * Every result is checked; under TSan, every access of the spinning paths.
 */
#include <sched.h>

#include "common.h"

#define KERNELS 4000
#define READ_EVERY 250
#define CHURN 3000
#define SIZE 256u

static int pin_to(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

/* Opens with the executor on exec_cpu (libdao's threads inherit the
 * opener's mask), then runs the job's side on job_cpu. */
static void run(const char *placement, int exec_cpu, int job_cpu)
{
	dao_ctx ctx;
	dao_buf counter, other[3], churn[64];
	dao_operand ops[4];
	uint64_t zero = 0, got = 0, reads_ok = 0, live_before;
	uint64_t leaked = 1;
	unsigned char bytes[SIZE] = { 0 };

	if (pin_to(exec_cpu))
		tap_bail("cannot pin to CPU %d", exec_cpu);
	ctx = test_open(1u << 20, DAO_POLICY_DAO, 8, 0);
	if (pin_to(job_cpu))
		tap_bail("cannot pin to CPU %d", job_cpu);

	counter = test_buffer(ctx, SIZE);
	TEST_TRY(dao_write(ctx, counter, 0, &zero, sizeof(zero)));
	ops[0] = (dao_operand){ .buf = counter, .mode = DAO_RW };
	for (int i = 0; i < 3; i++) {
		other[i] = test_buffer(ctx, SIZE);
		TEST_TRY(dao_write(ctx, other[i], 0, bytes, sizeof(bytes)));
		ops[i + 1] = (dao_operand){ .buf = other[i], .mode = DAO_R };
	}
	for (uint64_t k = 1; k <= KERNELS; k++) {
		TEST_TRY(dao_launch(ctx, test_bump_kernel, NULL, ops, 4));
		if (k % READ_EVERY == 0) {
			TEST_TRY(dao_read(ctx, counter, 0, &got, sizeof(got)));
			reads_ok += got == k;
		}
	}
	TEST_TRY(dao_sync(ctx));
	TEST_TRY(dao_read(ctx, counter, 0, &got, sizeof(got)));
	tap_ok(got == KERNELS, "%s: the counter saw every kernel (%llu of %d)", placement,
	       (unsigned long long)got, KERNELS);
	tap_ok(reads_ok == KERNELS / READ_EVERY,
	       "%s: every read between launches saw exactly the kernels before it (%llu of %d)",
	       placement, (unsigned long long)reads_ok, KERNELS / READ_EVERY);

	live_before = test_stats(ctx).live_buffers;
	for (int round = 0; round < CHURN / 64; round++) {
		for (int i = 0; i < 64; i++)
			TEST_TRY(dao_buffer_create(ctx, SIZE + (uint64_t)i, &churn[i]));
		/* One use each, so the executor frees them. */
		for (int i = 0; i < 64; i += 4) {
			dao_operand u[4];

			for (int j = 0; j < 4; j++)
				u[j] = (dao_operand){ .buf = churn[i + j], .mode = DAO_W };
			TEST_TRY(dao_launch(ctx, NULL, NULL, u, 4));
		}
		for (int i = 0; i < 64; i++)
			TEST_TRY(dao_release(ctx, churn[i]));
	}
	TEST_TRY(dao_sync(ctx));
	TAP_IS_U64(test_stats(ctx).live_buffers, live_before,
		   "created and released buffers are all gone after a sync");
	{
		uint64_t size = 0;

		TEST_TRY(dao_buffer_create(ctx, SIZE, &churn[0]));
		TEST_TRY(dao_buffer_size(ctx, churn[0], &size));
		TAP_IS_U64(size, SIZE, "a buffer created after the churn has its own size");
	}
	TEST_TRY(dao_close(ctx, &leaked));
	TAP_IS_U64(leaked, 5, "close counts the handles left open");
}

int main(void)
{
	cpu_set_t all;
	int a = -1, b = -1;

	test_clear_env();
	if (sched_getaffinity(0, sizeof(all), &all))
		tap_bail("sched_getaffinity failed");
	for (int c = 0; c < CPU_SETSIZE && b < 0; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		if (a < 0)
			a = c;
		else
			b = c;
	}
	if (b >= 0) {
		run("split", b, a);
	} else {
		for (int i = 0; i < 5; i++)
			tap_ok(1, "split placement # skip only one CPU allowed");
	}
	run("shared", a, a);
	sched_setaffinity(0, sizeof(all), &all);
	tap_plan_done();
	return tap_exit();
}
