/* SPDX-License-Identifier: MIT */
/*
 * report.h - what dao-cholesky prints: a table for people, or one JSON
 * object for scripts.
 */
#ifndef CHOL_REPORT_H
#define CHOL_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "factor.h"
#include "matrix.h"

struct chol_outcome {
	const struct chol_run_result *run;
	double residual;
	uint64_t hash; /* chol_factor_hash of run->l */
};

struct chol_report {
	const struct chol_problem *p;
	uint64_t matrix_bytes; /* the tiles libdao holds */
	double threshold;      /* the residual must stay below it */
	const char *check;     /* "full" or "sample" (options.h) */
	struct chol_outcome budgeted;
	struct chol_outcome unlimited; /* run is NULL without --compare */
	bool identical;                /* the two factors agree bit for bit */
	bool passed;
};

void chol_report_text(FILE *f, const struct chol_report *r);
void chol_report_json(FILE *f, const struct chol_report *r);

#endif /* CHOL_REPORT_H */
