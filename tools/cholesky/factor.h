/* SPDX-License-Identifier: MIT */
/*
 * factor.h - one tiled Cholesky factorisation through libdao: the tiles of
 * the lower triangle become buffers, the factorisation a stream of kernels,
 * and the factor is read back for the check.
 */
#ifndef CHOL_FACTOR_H
#define CHOL_FACTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "dao.h"
#include "matrix.h"

struct chol_run_config {
	dao_backend_kind backend; /* host, cuda-managed or cuda-explicit */
	uint64_t budget; /* device budget in bytes */
	dao_policy policy;
	uint32_t lookahead;
};

struct chol_run_result {
	double seconds;  /* from the first launch to the end of dao_sync */
	dao_stats stats; /* the whole job: loading A, factoring, reading L */
	dao_info info;   /* what libdao chose (policy, lookahead, budget) */
	uint64_t kernels;
	/* --backend uvm: the driver does not say what it moved; stats are
	 * zero and printed as unknown (null in JSON). */
	bool transfers_unknown;
	double *l; /* the factor, npad x npad, strict upper triangle zero */
};

/*
 * Factor p->a under rc. Returns a CHOL_EXIT_* status; on failure the reason
 * is on stderr and out->l is NULL. The caller frees out->l.
 */
int chol_factor(const struct chol_problem *p, const struct chol_run_config *rc,
		struct chol_run_result *out);

/* Bytes the device must hold for one kernel: its distinct tiles (at most
 * three), each rounded up to the backend's allocation granularity. */
uint64_t chol_min_budget(const struct chol_problem *p, dao_backend_kind backend);

#endif /* CHOL_FACTOR_H */
