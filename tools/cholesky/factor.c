/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "factor.h"
#include "options.h"
#include "tile_kernels.h"

#ifdef DAO_HAVE_CUDA
#include "tile_kernels_gpu.h"
#endif

/* The backends' allocation granularity: a kernel's budget check rounds
 * every operand up to it (cuda-managed counts 64 KiB device pages). */
static uint64_t granule_of(dao_backend_kind backend)
{
	return backend == DAO_BACKEND_CUDA_MANAGED ? 64u << 10 : 256u;
}

uint64_t chol_min_budget(const struct chol_problem *p, dao_backend_kind backend)
{
	uint64_t g = granule_of(backend);
	uint64_t tile = (chol_tile_bytes(p) + g - 1) / g * g;
	/* dgemm needs three tiles, but a matrix of one or two tile columns
	 * never runs one. */
	uint64_t tiles = p->nt < 3 ? p->nt : 3;

	return tiles * tile;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Index of lower tile (i, j), j <= i, in row-major order of the triangle. */
static uint64_t tix(uint64_t i, uint64_t j)
{
	return i * (i + 1) / 2 + j;
}

struct job {
	const struct chol_problem *p;
	const struct chol_run_config *rc;
	struct chol_tile_geom geom;
	struct chol_potrf_arg *potrf; /* one per tile column */
	dao_ctx ctx;
	dao_buf *tiles;
	uint64_t created;
	uint64_t kernels;
};

static int dao_failed(const char *what, dao_status st)
{
	fprintf(stderr, "dao-cholesky: %s: %s\n", what, dao_strerror(st));
	return CHOL_EXIT_FAILED;
}

static int launch(struct job *jb, const char *name, uint64_t flops, dao_kernel_fn fn, void *user,
		  const dao_operand *ops, size_t count)
{
	dao_status st = dao_launch_named(jb->ctx, name, flops, fn, user, ops, count);

	if (st == DAO_ERR_BUDGET) {
		/* chol_min_budget() should have caught this; libdao may round
		 * differently than we assume, so say it plainly here too. */
		fprintf(stderr,
			"dao-cholesky: a budget of %llu bytes cannot hold the %zu tiles of "
			"%llu bytes that %s needs\n",
			(unsigned long long)jb->rc->budget, count,
			(unsigned long long)chol_tile_bytes(jb->p), name);
		return CHOL_EXIT_USAGE;
	}
	if (st != DAO_OK)
		return dao_failed(name, st);
	jb->kernels++;
	return CHOL_EXIT_OK;
}

/* The right-looking algorithm: factor a tile column, then update the
 * trailing lower triangle with it. */
static int submit(struct job *jb)
{
	const struct chol_problem *p = jb->p;
	uint64_t t = p->tile;
	int rc;

	for (uint64_t k = 0; k < p->nt; k++) {
		dao_buf akk = jb->tiles[tix(k, k)];
		dao_operand potrf[] = { { akk, DAO_RW } };

		jb->potrf[k] = (struct chol_potrf_arg){ jb->geom, k };
		rc = launch(jb, "dpotrf", chol_flops_potrf(t), chol_kernel_potrf, &jb->potrf[k],
			    potrf, 1);
		if (rc)
			return rc;
		for (uint64_t i = k + 1; i < p->nt; i++) {
			dao_operand trsm[] = { { akk, DAO_R }, { jb->tiles[tix(i, k)], DAO_RW } };

			rc = launch(jb, "dtrsm", chol_flops_trsm(t), chol_kernel_trsm, &jb->geom,
				    trsm, 2);
			if (rc)
				return rc;
		}
		for (uint64_t i = k + 1; i < p->nt; i++) {
			dao_buf aik = jb->tiles[tix(i, k)];
			dao_operand syrk[] = { { aik, DAO_R }, { jb->tiles[tix(i, i)], DAO_RW } };

			rc = launch(jb, "dsyrk", chol_flops_syrk(t), chol_kernel_syrk, &jb->geom,
				    syrk, 2);
			if (rc)
				return rc;
			for (uint64_t j = k + 1; j < i; j++) {
				dao_operand gemm[] = { { aik, DAO_R },
						       { jb->tiles[tix(j, k)], DAO_R },
						       { jb->tiles[tix(i, j)], DAO_RW } };

				rc = launch(jb, "dgemm", chol_flops_gemm(t), chol_kernel_gemm,
					    &jb->geom, gemm, 3);
				if (rc)
					return rc;
			}
		}
	}
	return CHOL_EXIT_OK;
}

static int load(struct job *jb, double *scratch)
{
	const struct chol_problem *p = jb->p;
	char label[48]; /* "A<i>,<j>" for any two 64-bit indices */
	dao_status st;

	for (uint64_t i = 0; i < p->nt; i++) {
		for (uint64_t j = 0; j <= i; j++) {
			dao_buf *b = &jb->tiles[tix(i, j)];

			st = dao_buffer_create(jb->ctx, chol_tile_bytes(p), b);
			if (st != DAO_OK)
				return dao_failed("dao_buffer_create", st);
			jb->created++;
			snprintf(label, sizeof(label), "A%llu,%llu", (unsigned long long)i,
				 (unsigned long long)j);
			st = dao_set_label(jb->ctx, *b, label);
			if (st != DAO_OK)
				return dao_failed("dao_set_label", st);
			chol_tile_get(p, p->a, i, j, scratch);
			st = dao_write(jb->ctx, *b, 0, scratch, chol_tile_bytes(p));
			if (st != DAO_OK)
				return dao_failed("dao_write", st);
		}
	}
	return CHOL_EXIT_OK;
}

static int read_back(struct job *jb, double *l, double *scratch)
{
	const struct chol_problem *p = jb->p;
	dao_status st;

	for (uint64_t i = 0; i < p->nt; i++) {
		for (uint64_t j = 0; j <= i; j++) {
			st = dao_read(jb->ctx, jb->tiles[tix(i, j)], 0, scratch,
				      chol_tile_bytes(p));
			if (st != DAO_OK)
				return dao_failed("dao_read", st);
			if (i == j) {
				/* dpotrf leaves A's upper triangle in place;
				 * L has zeros there. */
				for (uint64_t c = 1; c < p->tile; c++)
					memset(scratch + c * p->tile, 0, c * sizeof(double));
			}
			chol_tile_put(p, l, i, j, scratch);
		}
	}
	return CHOL_EXIT_OK;
}

static int open_ctx(struct job *jb)
{
	dao_config cfg;
	dao_status st;

	dao_config_init(&cfg);
	/* A device of our own, so --compare can open a second budget. */
	cfg.flags = DAO_CONFIG_PRIVATE;
	/* The tile kernels run where the backend puts the tiles: CPU code
	 * on host, cuBLAS and cuSOLVER on the CUDA backends. */
	cfg.backend = jb->rc->backend;
	cfg.device_budget = jb->rc->budget;
	cfg.policy = jb->rc->policy;
	cfg.lookahead = jb->rc->lookahead;
	st = dao_open(&cfg, &jb->ctx);
	if (st == DAO_ERR_CONFIG) {
		/* What we pass is valid: a DAO_* variable is not (libdao's
		 * log line names it). A bad input, like a bad option. */
		dao_failed("dao_open", st);
		return CHOL_EXIT_USAGE;
	}
	if (st != DAO_OK)
		return dao_failed("dao_open", st);
	return CHOL_EXIT_OK;
}

int chol_factor(const struct chol_problem *p, const struct chol_run_config *rc,
		struct chol_run_result *out)
{
	struct job jb = { .p = p, .rc = rc, .geom = { .tile = (int)p->tile } };
	double *scratch = malloc(chol_tile_bytes(p));
	uint64_t leaked = 0;
	dao_status st;
	double t0;
	int ret;

	memset(out, 0, sizeof(*out));
	jb.tiles = calloc(chol_tile_count(p), sizeof(*jb.tiles));
	jb.potrf = calloc(p->nt, sizeof(*jb.potrf));
	out->l = chol_matrix_alloc(p);
	if (!scratch || !jb.tiles || !jb.potrf || !out->l) {
		fprintf(stderr, "dao-cholesky: out of memory for a %llu x %llu matrix\n",
			(unsigned long long)p->npad, (unsigned long long)p->npad);
		ret = CHOL_EXIT_FAILED;
		goto out_free;
	}
	ret = open_ctx(&jb);
	if (ret)
		goto out_free;
	st = dao_info_get(jb.ctx, &out->info);
	if (st != DAO_OK) {
		ret = dao_failed("dao_info_get", st);
		goto out_close;
	}
#ifdef DAO_HAVE_CUDA
	/* After dao_open: without a device, libdao's refusal says why. The
	 * backend is the one libdao chose (DAO_BACKEND when no --backend). */
	if ((out->info.backend == DAO_BACKEND_CUDA_MANAGED ||
	     out->info.backend == DAO_BACKEND_CUDA_EXPLICIT) &&
	    chol_gpu_create(p->nt, &jb.geom.gpu)) {
		ret = CHOL_EXIT_FAILED;
		goto out_close;
	}
#endif
	ret = load(&jb, scratch);
	if (ret)
		goto out_close;

	t0 = now_seconds();
	ret = submit(&jb);
	if (ret)
		goto out_close;
	st = dao_sync(jb.ctx);
	out->seconds = now_seconds() - t0;
#ifdef DAO_HAVE_CUDA
	/* dpotrf's verdicts wait on the device until everything is done. */
	if (st == DAO_OK && jb.geom.gpu) {
		int bad = chol_gpu_failed(jb.geom.gpu);

		if (bad < 0)
			st = DAO_ERR_BACKEND;
		else if (bad)
			st = DAO_ERR_KERNEL;
	}
#endif
	if (st == DAO_ERR_KERNEL) {
		/* dpotrf's verdict, or a call of a tile kernel that failed:
		 * libdao's log (or the library's) says which. */
		fprintf(stderr, "dao-cholesky: a tile kernel failed: the matrix is not "
				"positive definite, or the kernel's library failed (%s)\n",
			dao_strerror(st));
		ret = CHOL_EXIT_FAILED;
		goto out_close;
	}
	if (st != DAO_OK) {
		ret = dao_failed("dao_sync", st);
		goto out_close;
	}
	out->kernels = jb.kernels;

	ret = read_back(&jb, out->l, scratch);
	if (ret)
		goto out_close;
	st = dao_stats_get(jb.ctx, &out->stats);
	if (st != DAO_OK)
		ret = dao_failed("dao_stats_get", st);

out_close:
	for (uint64_t i = 0; i < jb.created; i++) {
		st = dao_release(jb.ctx, jb.tiles[i]);
		if (st != DAO_OK && !ret)
			ret = dao_failed("dao_release", st);
	}
	st = dao_close(jb.ctx, &leaked);
	/* After a failure dao_close repeats it; it was reported already. */
	if (!ret && st != DAO_OK)
		ret = dao_failed("dao_close", st);
	if (!ret && leaked) {
		fprintf(stderr, "dao-cholesky: libdao reports %llu leaked handles\n",
			(unsigned long long)leaked);
		ret = CHOL_EXIT_FAILED;
	}
out_free:
	if (ret) {
		free(out->l);
		out->l = NULL;
	}
#ifdef DAO_HAVE_CUDA
	chol_gpu_destroy(jb.geom.gpu);
#endif
	free(jb.potrf);
	free(jb.tiles);
	free(scratch);
	return ret;
}
