/* SPDX-License-Identifier: MIT */
/*
 * host_kernel.c - CPU code as a kernel on every backend: a host kernel
 * (DAO_LAUNCH_HOST) is called with its operands' host copies once they are
 * current, whatever the backend (DAO_BACKEND picks one, auto by default).
 * Each chunk of a vector is scaled to sum to 1.
 *
 * Build: cc host_kernel.c $(pkg-config --cflags --libs dao) -o host_kernel
 */
#include <dao.h>
#include <stdio.h>
#include <stdlib.h>

#define CHUNKS 8
#define CHUNK_DOUBLES 32768 /* 256 KiB per chunk */
#define CHUNK_BYTES (CHUNK_DOUBLES * sizeof(double))

/* Give up with libdao's explanation of the status. */
#define CHECK(call)                                                              \
	do {                                                                     \
		dao_status st_ = (call);                                         \
		if (st_ != DAO_OK) {                                             \
			fprintf(stderr, "%s: %s\n", #call, dao_strerror(st_));   \
			exit(1);                                                 \
		}                                                                \
	} while (0)

/* Plain CPU code on host memory: right on every backend as a host kernel. */
static int normalise(const dao_kernel_args *args)
{
	double *v = args->ptrs[0], sum = 0;
	uint64_t n = args->sizes[0] / sizeof(double);

	for (uint64_t i = 0; i < n; i++)
		sum += v[i];
	for (uint64_t i = 0; i < n; i++)
		v[i] /= sum;
	return 0;
}

int main(void)
{
	static double host[CHUNK_DOUBLES];
	dao_buf v[CHUNKS];
	dao_config cfg;
	dao_info info;
	dao_stats stats;
	uint64_t leaked;
	dao_ctx ctx;

	dao_config_init(&cfg);
	cfg.device_budget = 2 * CHUNK_BYTES; /* a quarter of the vector */
	CHECK(dao_open(&cfg, &ctx));
	CHECK(dao_info_get(ctx, &info));

	for (int c = 0; c < CHUNKS; c++) {
		CHECK(dao_buffer_create(ctx, CHUNK_BYTES, &v[c]));
		for (int i = 0; i < CHUNK_DOUBLES; i++)
			host[i] = c + 1.0;
		CHECK(dao_write(ctx, v[c], 0, host, CHUNK_BYTES));
	}
	for (int c = 0; c < CHUNKS; c++) {
		dao_operand op = { v[c], DAO_RW };

		CHECK(dao_launch_flags(ctx, "normalise", 2 * CHUNK_DOUBLES, DAO_LAUNCH_HOST,
				       normalise, NULL, &op, 1));
	}
	/* Every element is now 1 / CHUNK_DOUBLES, exactly. */
	for (int c = 0; c < CHUNKS; c++) {
		CHECK(dao_read(ctx, v[c], 0, host, CHUNK_BYTES));
		for (int i = 0; i < CHUNK_DOUBLES; i++) {
			if (host[i] != 1.0 / CHUNK_DOUBLES) {
				fprintf(stderr, "v[%d][%d] = %g\n", c, i, host[i]);
				return 1;
			}
		}
		CHECK(dao_release(ctx, v[c]));
	}

	CHECK(dao_stats_get(ctx, &stats));
	printf("correct on %s; %llu host kernels, %llu bytes fetched onto the device\n",
	       info.backend_name, (unsigned long long)stats.kernels,
	       (unsigned long long)stats.h2d_bytes);
	CHECK(dao_close(ctx, &leaked));
	return leaked == 0 ? 0 : 1;
}
