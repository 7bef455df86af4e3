/* SPDX-License-Identifier: MIT */
/*
 * dao-tracegen - write dao-trace v1 files for families of jobs (tiled
 * Cholesky, LU, GEMM, 2-D and 3-D stencils, a transformer and an LSTM
 * training step) at any size, for daosim and the policy work. The same
 * parameters always give the same bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "family.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dao-tracegen FAMILY [--PARAM N]... [--dtype float32|float64] [-o FILE]\n"
		"       dao-tracegen --help [FAMILY]\n"
		"       dao-tracegen --list\n"
		"Writes a dao-trace v1 of one job of FAMILY to FILE (default stdout).\n"
		"Exit status: 0 written; 1 the parameters do not fit together or the\n"
		"output could not be written (FILE is then left as it was); 2 a bad\n"
		"command line.\n");
}

static void list(FILE *f)
{
	for (unsigned i = 0; i < tg_nfamilies; i++)
		fprintf(f, "%-12s %s\n", tg_families[i]->name, tg_families[i]->summary);
}

static void help_family(FILE *f, const struct tg_family *fam)
{
	fprintf(f, "%s: %s\n", fam->name, fam->summary);
	for (unsigned i = 0; i < fam->nparams; i++) {
		const struct tg_param *p = &fam->params[i];

		fprintf(f, "  --%-8s %s (default %llu, %llu..%llu)\n", p->name, p->help,
			(unsigned long long)p->def, (unsigned long long)p->min,
			(unsigned long long)p->max);
	}
	fprintf(f, "  --dtype    float32 or float64 (default %s)\n",
		fam->default_elem_bytes == 8 ? "float64" : "float32");
}

/* Write to a temporary file beside path and rename it over path, so that a
 * failure leaves path as it was. */
static int write_file(const struct tg_settings *s, const char *path)
{
	char err[300], *tmp;
	FILE *f;
	int rc;

	if (asprintf(&tmp, "%s.tmp%ld", path, (long)getpid()) < 0) {
		fprintf(stderr, "dao-tracegen: out of memory\n");
		return 1;
	}
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "dao-tracegen: %s: %s\n", tmp, strerror(errno));
		free(tmp);
		return 1;
	}
	rc = tg_generate(s, f, err, sizeof(err));
	if (fclose(f) && !rc) {
		snprintf(err, sizeof(err), "%s: %s", tmp, strerror(errno));
		rc = -1;
	}
	if (!rc && rename(tmp, path)) {
		snprintf(err, sizeof(err), "%s: %s", path, strerror(errno));
		rc = -1;
	}
	if (rc) {
		unlink(tmp);
		fprintf(stderr, "dao-tracegen: %s\n", err);
	}
	free(tmp);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct tg_family *fam;
	struct tg_settings s;
	const char *out = NULL;
	char err[300];

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		if (argc > 2) {
			fam = tg_family_find(argv[2]);
			if (!fam) {
				fprintf(stderr, "dao-tracegen: unknown family '%s'\n", argv[2]);
				return 2;
			}
			help_family(stdout, fam);
			return 0;
		}
		usage(stdout);
		printf("Families (dao-tracegen --help FAMILY for its parameters):\n");
		list(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--list")) {
		list(stdout);
		return 0;
	}
	fam = tg_family_find(argv[1]);
	if (!fam) {
		fprintf(stderr, "dao-tracegen: unknown family '%s' (--list shows them)\n", argv[1]);
		return 2;
	}
	tg_settings_init(&s, fam);
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-o")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "dao-tracegen: -o needs a file\n");
				return 2;
			}
			out = argv[++i];
			continue;
		}
		if (strncmp(a, "--", 2) || !a[2]) {
			fprintf(stderr, "dao-tracegen: unexpected argument '%s'\n", a);
			return 2;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "dao-tracegen: %s needs a value\n", a);
			return 2;
		}
		if (tg_settings_set(&s, a + 2, argv[i + 1], err, sizeof(err))) {
			fprintf(stderr, "dao-tracegen: %s\n", err);
			return 2;
		}
		i++;
	}
	if (out)
		return write_file(&s, out);
	if (tg_generate(&s, stdout, err, sizeof(err))) {
		fprintf(stderr, "dao-tracegen: %s\n", err);
		return 1;
	}
	return 0;
}
