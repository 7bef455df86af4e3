// SPDX-License-Identifier: GPL-2.0
/*
 * libdao_cuda_job.c - libdao's cuda-explicit backend with dao.ko loaded,
 * against the CUDA runtime model (tests/cudamodel/, linked in statically:
 * the VM has no CUDA runtime and no dynamic loader). Its staging memory is
 * pinned through /dev/dao and registered with CUDA (stage_module() of
 * libdao/src/backend/cuda/cuda_explicit.c), which no run of `make check`
 * can reach: there the module is absent. The module's own accounting, the
 * process's VmPin and the model's registered bytes show where the staging
 * came from while the job runs; the results are exactly those of a plain C
 * computation of the same job; and everything is released at close.
 * Where the node limit is smaller than one staging chunk, or CUDA refuses
 * to register the pinned range, libdao unpins at once and stages from
 * elsewhere, with the same results.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <dao.h>

#include "cudamodel/cudamodel.h"
#include "kselftest_harness.h"
#include "util.h"

#define BUFS 8
#define BUF_BYTES (1024 * 1024)
#define HALF (BUF_BYTES / 2)
#define ROUNDS 3
#define STRIPE 4096
/* Seconds per case: a few under TCG; the debug kernel (KASAN, lockdep)
 * makes the model's page faults and mprotects many times slower. */
#define CUDA_JOB_TIMEOUT 300
/* One staging chunk of libdao's cuda-explicit backend (STAGE_MIN_CHUNK). */
#define STAGE_CHUNK (16 * MiB)

/* dst = src with its halves swapped, then a stripe of dst set to a byte:
 * device-to-device copies and a memset on the launch's stream, the only
 * way a kernel of this test can touch device memory. */
struct swap_arg {
	int stripe; /* index of the STRIPE-byte stripe of dst to set */
	unsigned char value;
};

static int swap_halves(const dao_kernel_args *a)
{
	const struct swap_arg *s = a->user;
	const char *src = a->ptrs[0];
	char *dst = a->ptrs[1];
	cudaStream_t st = a->stream;

	if (cudaMemcpyAsync(dst, src + HALF, HALF, cudaMemcpyDeviceToDevice, st) != cudaSuccess ||
	    cudaMemcpyAsync(dst + HALF, src, HALF, cudaMemcpyDeviceToDevice, st) != cudaSuccess ||
	    cudaMemsetAsync(dst + (size_t)s->stripe * STRIPE, s->value, STRIPE, st) != cudaSuccess)
		return 1;
	return 0;
}

static void reference(unsigned char (*m)[BUF_BYTES], const struct swap_arg *args)
{
	static unsigned char tmp[BUF_BYTES];

	for (int r = 0; r < ROUNDS * BUFS; r++) {
		unsigned char *src = m[r % BUFS], *dst = m[(r + 3) % BUFS];

		memcpy(tmp, src + HALF, HALF);
		memcpy(tmp + HALF, src, HALF);
		memset(tmp + (size_t)args[r].stripe * STRIPE, args[r].value, STRIPE);
		memcpy(dst, tmp, BUF_BYTES);
	}
}

/* The module's record of this process (all zero when it has none). */
static struct proc_state module_me(struct nl_sock *sk)
{
	static struct proc_state procs[64];
	struct proc_state none = { .pinned = UINT64_MAX };
	int n = 0;

	if (dnl_dump_procs(sk, procs, 64, &n))
		return none;
	memset(&none, 0, sizeof(none));
	for (int i = 0; i < n && i < 64; i++)
		if (procs[i].pid == (uint32_t)getpid())
			return procs[i];
	return none;
}

static uint64_t module_pinned_by_me(struct nl_sock *sk)
{
	return module_me(sk).pinned;
}

static uint64_t model_registered(void)
{
	struct dao_cudamodel_counters c;

	dao_cudamodel_counters(&c);
	return c.host_registered_bytes;
}

/* The job of every case: BUFS buffers of BUF_BYTES under a budget of
 * three, so that every round evicts through the staging memory. */
struct job {
	dao_ctx ctx;
	dao_buf buf[BUFS];
	struct swap_arg args[ROUNDS * BUFS];
	unsigned char want[BUFS][BUF_BYTES];
};

static void job_open(struct __test_metadata *_metadata, struct job *j)
{
	dao_config cfg;

	/* The model reads its card's size on its first call, after this. */
	ASSERT_EQ(0, setenv("DAO_CUDAMODEL_MEM", "64M", 1));
	for (int b = 0; b < BUFS; b++)
		for (size_t i = 0; i < BUF_BYTES; i++)
			j->want[b][i] = (unsigned char)(b * 37 + i * 13 + (i >> 11));
	for (int r = 0; r < ROUNDS * BUFS; r++) {
		j->args[r].stripe = (r * 7) % (BUF_BYTES / STRIPE);
		j->args[r].value = (unsigned char)(0xa0 + r);
	}
	dao_config_init(&cfg);
	cfg.backend = DAO_BACKEND_CUDA_EXPLICIT;
	cfg.flags = DAO_CONFIG_PRIVATE;
	cfg.device_budget = 3 * BUF_BYTES;
	cfg.log_level = DAO_LOG_INFO;
	ASSERT_EQ(DAO_OK, dao_open(&cfg, &j->ctx));
	for (int b = 0; b < BUFS; b++) {
		ASSERT_EQ(DAO_OK, dao_buffer_create(j->ctx, BUF_BYTES, &j->buf[b]));
		ASSERT_EQ(DAO_OK, dao_write(j->ctx, j->buf[b], 0, j->want[b], BUF_BYTES));
	}
}

static void job_run_and_check(struct __test_metadata *_metadata, struct job *j)
{
	static unsigned char got[BUF_BYTES];

	for (int r = 0; r < ROUNDS * BUFS; r++) {
		dao_operand ops[2] = { { j->buf[r % BUFS], DAO_R },
				       { j->buf[(r + 3) % BUFS], DAO_W } };

		ASSERT_EQ(DAO_OK, dao_launch(j->ctx, swap_halves, &j->args[r], ops, 2));
	}
	ASSERT_EQ(DAO_OK, dao_sync(j->ctx));
	reference(j->want, j->args);
	for (int b = 0; b < BUFS; b++) {
		ASSERT_EQ(DAO_OK, dao_read(j->ctx, j->buf[b], 0, got, BUF_BYTES));
		EXPECT_EQ(0, memcmp(got, j->want[b], BUF_BYTES))
			TH_LOG("buffer %d differs from the plain C computation", b);
	}
}

static void job_close(struct __test_metadata *_metadata, struct job *j)
{
	uint64_t leaked = 1;

	for (int b = 0; b < BUFS; b++)
		ASSERT_EQ(DAO_OK, dao_release(j->ctx, j->buf[b]));
	ASSERT_EQ(DAO_OK, dao_close(j->ctx, &leaked));
	EXPECT_EQ(0, leaked);
}

#ifdef DAO_KTEST_GCOV
/* libgcov's: write the .gcda files now (the test child leaves by _exit). */
void __gcov_dump(void);
#endif

FIXTURE(cuda_job)
{
	struct nl_sock *sk;
	long long limit0;
	struct job *job;
};

FIXTURE_SETUP(cuda_job)
{
	self->limit0 = param_get("max_pinned_mb");
	ASSERT_EQ(0, dnl_open(&self->sk));
	self->job = calloc(1, sizeof(*self->job));
	ASSERT_NE(NULL, self->job);
}

FIXTURE_TEARDOWN(cuda_job)
{
	EXPECT_EQ(0, limit_set_mb(self->limit0));
	dnl_close(self->sk);
	free(self->job);
#ifdef DAO_KTEST_GCOV
	__gcov_dump();
#endif
}

/* Staging pinned through the module, registered with CUDA, released at close. */
TEST_F_TIMEOUT(cuda_job, staging_pinned_through_module, CUDA_JOB_TIMEOUT)
{
	struct node_state st0, st;
	uint64_t by_me;
	dao_stats s;

	ASSERT_EQ(0, limit_set_mb(64));
	ASSERT_EQ(0, dnl_get_node(self->sk, &st0));
	ASSERT_EQ(0, module_pinned_by_me(self->sk));
	job_open(_metadata, self->job);
	job_run_and_check(_metadata, self->job);

	/* Every host copy of the job lives in memory the module pinned... */
	ASSERT_EQ(DAO_OK, dao_stats_get(self->job->ctx, &s));
	EXPECT_EQ((uint64_t)BUFS * BUF_BYTES, s.pinned_bytes);
	by_me = module_pinned_by_me(self->sk);
	/* ... in whole staging chunks, as the module counts them ... */
	EXPECT_LE((uint64_t)BUFS * BUF_BYTES, by_me);
	EXPECT_EQ(0, by_me % STAGE_CHUNK);
	EXPECT_EQ((long)(by_me / 1024), vmpin_kb(getpid()));
	ASSERT_EQ(0, dnl_get_node(self->sk, &st));
	EXPECT_EQ(st0.pinned + by_me, st.pinned);
	EXPECT_EQ(st0.refused, st.refused);
	/* ... and registered with CUDA, exactly that range. */
	EXPECT_EQ(by_me, model_registered());

	job_close(_metadata, self->job);
	EXPECT_EQ(0, module_pinned_by_me(self->sk));
	EXPECT_EQ(0, vmpin_kb(getpid()));
	EXPECT_EQ(0, model_registered());
	ASSERT_EQ(0, dnl_get_node(self->sk, &st));
	EXPECT_EQ(st0.pinned, st.pinned);
}

/* A node limit below one staging chunk: the module refuses, libdao stages
 * in memory CUDA pins itself, and nothing stays pinned through the module. */
TEST_F_TIMEOUT(cuda_job, module_refusal_falls_back_to_cuda_pinning, CUDA_JOB_TIMEOUT)
{
	struct node_state st0, st;
	dao_stats s;

	ASSERT_EQ(0, limit_set_mb(STAGE_CHUNK / MiB / 2));
	ASSERT_EQ(0, dnl_get_node(self->sk, &st0));
	job_open(_metadata, self->job);
	job_run_and_check(_metadata, self->job);
	ASSERT_EQ(DAO_OK, dao_stats_get(self->job->ctx, &s));
	EXPECT_EQ(0, s.pinned_bytes);
	EXPECT_EQ(0, module_pinned_by_me(self->sk));
	EXPECT_EQ(0, model_registered());
	ASSERT_EQ(0, dnl_get_node(self->sk, &st));
	EXPECT_LT(st0.refused, st.refused);
	job_close(_metadata, self->job);
	EXPECT_EQ(0, vmpin_kb(getpid()));
}

/* CUDA refuses to register what the module pinned (the model told to
 * refuse pinning): libdao unpins that chunk at once and stages in pageable
 * memory, with the same results. */
TEST_F_TIMEOUT(cuda_job, register_refusal_unpins, CUDA_JOB_TIMEOUT)
{
	struct node_state st0, st;
	dao_stats s;

	ASSERT_EQ(0, setenv("DAO_CUDAMODEL_PIN", "0", 1));
	ASSERT_EQ(0, limit_set_mb(64));
	ASSERT_EQ(0, dnl_get_node(self->sk, &st0));
	job_open(_metadata, self->job);
	job_run_and_check(_metadata, self->job);
	ASSERT_EQ(DAO_OK, dao_stats_get(self->job->ctx, &s));
	EXPECT_EQ(0, s.pinned_bytes);
	EXPECT_EQ(0, module_pinned_by_me(self->sk));
	EXPECT_EQ(0, vmpin_kb(getpid()));
	EXPECT_EQ(0, model_registered());
	ASSERT_EQ(0, dnl_get_node(self->sk, &st));
	EXPECT_EQ(st0.pinned, st.pinned);
	/* The module did pin it: its record of this process saw the chunk. */
	EXPECT_LE(STAGE_CHUNK, module_me(self->sk).peak);
	job_close(_metadata, self->job);
}

TEST_HARNESS_MAIN
