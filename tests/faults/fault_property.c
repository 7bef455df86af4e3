/* SPDX-License-Identifier: MIT */
/*
 * fault_property.c - the property test's random programs
 * (tests/unit/random_program.h: views, zero-byte buffers, releases at any
 * point, kernels without a function) as a job of the fault sweep
 * (faults.t), on the host backend: under whatever DAO_FAULT fails, the
 * program either reads back exactly what the plain-memory reference
 * computes or stops on a clear status of the world's failure (out of
 * memory, backend, kernel, failed, lost). fault_job.c holds the contents
 * after a failure to dao.h; this one covers the calls those programs make
 * that fault_job's do not.
 * Exit 0: completed and exact; 10: stopped on a clear status; 1: a defect
 * ("fault_property: DEFECT: ..." on stderr).
 *
 * Usage: fault_property SEED
 */
#include "random_program.h"

int main(int argc, char **argv)
{
	static const dao_status clear[] = { DAO_ERR_NOMEM, DAO_ERR_BACKEND, DAO_ERR_KERNEL,
					    DAO_ERR_FAILED, DAO_ERR_LOST };
	static struct program p;
	struct run_cfg rc = { DAO_POLICY_DAO, 0, 8, DAO_CONFIG_PRIVATE };
	struct run_result r;
	unsigned char *want, *got;
	bool ok;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SEED\n", argv[0]);
		return 2;
	}
	test_clear_env();
	generate(&p, strtoull(argv[1], NULL, 0), 1);
	rc.budget = budget_for(&p, 33);
	want = calloc(1, p.read_bytes + 1);
	got = calloc(1, p.read_bytes + 1);
	if (!want || !got)
		tap_bail("out of memory");
	run_reference(&p, want);
	ok = run_dao(&p, &rc, got, &r);
	if (ok) {
		char where[256];
		bool same = !memcmp(want, got, p.read_bytes);

		describe_mismatch(&p, want, got, where, sizeof(where));
		free(want);
		free(got);
		if (same) {
			fprintf(stderr, "fault_property: completed\n");
			return 0;
		}
		fprintf(stderr, "fault_property: DEFECT: completed with wrong bytes: %s\n", where);
		return 1;
	}
	free(want);
	free(got);
	/* run_dao says which call failed and with what. */
	for (size_t i = 0; i < TEST_ARRAY_SIZE(clear); i++)
		if (strstr(r.why, dao_strerror(clear[i]))) {
			fprintf(stderr, "fault_property: stopped: %s\n", r.why);
			return 10;
		}
	fprintf(stderr, "fault_property: DEFECT: stopped on %s\n", r.why);
	return 1;
}
