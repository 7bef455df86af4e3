/* SPDX-License-Identifier: MIT */
/*
 * axpy.c - the smallest complete libdao program: y += a * x over vectors
 * four times larger than the device budget, chunk by chunk.
 *
 * Build: cc axpy.c $(pkg-config --cflags --libs dao) -o axpy
 */
#include <dao.h>
#include <stdio.h>
#include <stdlib.h>

#define CHUNKS 16
#define CHUNK_DOUBLES 65536 /* 512 KiB per chunk */
#define CHUNK_BYTES (CHUNK_DOUBLES * sizeof(double))
#define ROUNDS 3

/* Give up with libdao's explanation of the status. */
#define CHECK(call)                                                              \
	do {                                                                     \
		dao_status st_ = (call);                                         \
		if (st_ != DAO_OK) {                                             \
			fprintf(stderr, "%s: %s\n", #call, dao_strerror(st_));   \
			exit(1);                                                 \
		}                                                                \
	} while (0)

/* A kernel: runs on the executor thread when its operands are resident.
 * On the host backend the pointers are plain host memory. */
static int axpy(const dao_kernel_args *args)
{
	const double a = *(const double *)args->user;
	const double *x = args->ptrs[0];
	double *y = args->ptrs[1];

	for (uint64_t i = 0; i < args->sizes[1] / sizeof(double); i++)
		y[i] += a * x[i];
	return 0;
}

int main(void)
{
	static double host[CHUNK_DOUBLES];
	static const double a = 2.0;
	dao_buf x[CHUNKS], y[CHUNKS];
	dao_config cfg;
	dao_stats stats;
	uint64_t leaked;
	dao_ctx ctx;

	dao_config_init(&cfg);
	cfg.backend = DAO_BACKEND_HOST;      /* the kernel is CPU code */
	cfg.device_budget = 8 * CHUNK_BYTES; /* a quarter of x and y together */
	CHECK(dao_open(&cfg, &ctx));

	/* x[c] holds its global element index, y[c] holds ones. */
	for (int c = 0; c < CHUNKS; c++) {
		CHECK(dao_buffer_create(ctx, CHUNK_BYTES, &x[c]));
		CHECK(dao_buffer_create(ctx, CHUNK_BYTES, &y[c]));
		for (int i = 0; i < CHUNK_DOUBLES; i++)
			host[i] = (double)c * CHUNK_DOUBLES + i;
		CHECK(dao_write(ctx, x[c], 0, host, CHUNK_BYTES));
		for (int i = 0; i < CHUNK_DOUBLES; i++)
			host[i] = 1.0;
		CHECK(dao_write(ctx, y[c], 0, host, CHUNK_BYTES));
	}

	/* Submission returns at once; libdao moves chunks in and out. */
	for (int r = 0; r < ROUNDS; r++) {
		for (int c = 0; c < CHUNKS; c++) {
			dao_operand ops[] = { { x[c], DAO_R }, { y[c], DAO_RW } };

			CHECK(dao_launch_named(ctx, "axpy", 2 * CHUNK_DOUBLES, axpy, (void *)&a,
					       ops, 2));
		}
	}

	/* dao_read waits for the kernels before it. y = 1 + ROUNDS * a * x. */
	for (int c = 0; c < CHUNKS; c++) {
		CHECK(dao_read(ctx, y[c], 0, host, CHUNK_BYTES));
		for (int i = 0; i < CHUNK_DOUBLES; i++) {
			double want = 1.0 + ROUNDS * a * ((double)c * CHUNK_DOUBLES + i);

			if (host[i] != want) {
				fprintf(stderr, "y[%d][%d] = %g, want %g\n", c, i, host[i], want);
				return 1;
			}
		}
		CHECK(dao_release(ctx, x[c]));
		CHECK(dao_release(ctx, y[c]));
	}

	CHECK(dao_stats_get(ctx, &stats));
	printf("correct; moved %llu bytes to the device and %llu back, %llu evictions\n",
	       (unsigned long long)stats.h2d_bytes, (unsigned long long)stats.d2h_bytes,
	       (unsigned long long)stats.evictions);
	CHECK(dao_close(ctx, &leaked));
	return leaked == 0 ? 0 : 1;
}
