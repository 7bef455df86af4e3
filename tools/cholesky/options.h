/* SPDX-License-Identifier: MIT */
/*
 * options.h - the command line of dao-cholesky.
 */
#ifndef CHOL_OPTIONS_H
#define CHOL_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "dao.h"

/* Exit statuses, documented in the usage text. */
enum {
	CHOL_EXIT_OK = 0,
	CHOL_EXIT_FAILED = 1, /* libdao or the system failed */
	CHOL_EXIT_USAGE = 2,  /* bad option or DAO_* variable, budget too small */
	CHOL_EXIT_WRONG = 3,  /* the residual check failed or the runs disagree */
	CHOL_EXIT_NODEV = 77, /* --backend uvm: no usable CUDA device (as automake's SKIP) */
};

/* How the factor is checked (main.c, matrix.h). */
enum chol_check {
	CHOL_CHECK_FULL,   /* ||A - L L^T||_F: one n x n dsyrk, O(n^3) */
	CHOL_CHECK_SAMPLE, /* ||(A - L L^T) x||_2 for a random sign vector x, O(n^2) */
};

struct chol_options {
	uint64_t n;
	uint64_t tile;
	/* The budget as given: either bytes or a percentage of the matrix. */
	bool budget_is_percent;
	double budget_percent;
	uint64_t budget_bytes;
	bool budget_given;
	bool compare;
	bool warm_up; /* an untimed small factorization first (main.c) */
	bool json;
	dao_backend_kind backend; /* any of libdao's but auto; host by default */
	bool uvm; /* --backend uvm: plain managed memory, no libdao (uvm.h) */
	dao_policy policy;  /* DAO_POLICY_DEFAULT: libdao's choice */
	uint32_t lookahead; /* 0: libdao's choice */
	uint64_t seed;
	int threads; /* OpenBLAS threads inside one tile kernel */
	enum chol_check check;
};

/*
 * Parse argv. Returns CHOL_EXIT_OK, or CHOL_EXIT_USAGE after printing the
 * reason to stderr; *help is set when --help was asked for (usage printed
 * to stdout, nothing else to do).
 */
int chol_parse_options(int argc, char **argv, struct chol_options *o, bool *help);

#endif /* CHOL_OPTIONS_H */
