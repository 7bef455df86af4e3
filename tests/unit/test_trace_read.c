/* SPDX-License-Identifier: MIT */
/*
 * test_trace_read.c - the dao-trace v1 reader: every rejection the format
 * lists, with the line number and reason; what a valid trace becomes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "dao_trace.h"

#define H "dao-trace 1\n"

/* Each bad case is the lines before the culprit plus the culprit itself:
 * the expected line number is derived from the text, not written down. */
struct bad_case {
	const char *before;
	const char *culprit;
	const char *reason; /* a substring of the message */
};

static const struct bad_case bad[] = {
	{ "", "dao-trace 2", "header" },
	{ "", "dao-trace 1 extra", "header" },
	{ "", "DAO-TRACE 1", "header" },
	{ "", "# comment before the header", "header" },
	{ H, "x 1 2", "unknown record type 'x'" },
	{ H, "bb 1 2", "unknown record type 'bb'" },
	{ H, "b 1x 10", "malformed id '1x'" },
	{ H, "b 1 10x", "malformed size '10x'" },
	{ H, "b 1 -10", "malformed size '-10'" },
	{ H, "b 1 +10", "malformed size '+10'" },
	{ H "b 1 1\n", "k a 1.5 r=1 w=- rw=-", "malformed flops '1.5'" },
	{ H, "i x", "malformed iteration number" },
	{ H, "b 0 10", "id 0 out of range" },
	{ H, "b 9223372036854775808 10", "out of range" },
	{ H, "b 99999999999999999999 10", "out of range" },
	{ H, "b 1 9223372036854775808", "size 9223372036854775808 out of range" },
	{ H, "k a 18446744073709551616 r=- w=- rw=-", "flops '18446744073709551616' out of range" },
	{ H "b 7 10\n", "b 7 20", "buffer 7 declared twice (first on line 2)" },
	{ H "b 7 10\nf 7\n", "b 7 20", "declared twice" },
	{ H "b 1 10\n", "k a 0 r=2 w=- rw=-", "buffer 2 was never declared" },
	{ H "b 1 10\n", "k a 0 r=- w=- rw=1,3", "buffer 3 was never declared" },
	{ H, "f 5", "buffer 5 was never declared" },
	{ H "b 1 10\nf 1\n", "k a 0 r=1 w=- rw=-", "buffer 1 was freed on line 3" },
	{ H "b 1 10\nf 1\n", "f 1", "buffer 1 was freed on line 3" },
	{ H "b 1 10\n", "k a 0 r=1 w=1 rw=-", "buffer 1 named twice in one kernel" },
	{ H "b 1 10\n", "k a 0 r=1,1 w=- rw=-", "named twice" },
	{ H "b 1 10\n", "k a 0 r=- w=1 rw=1", "named twice" },
	{ H "b 1 10\n", "k a 0 r=1 w=-", "missing field 'rw=<ids>'" },
	{ H "b 1 10\n", "k a 0 w=1 r=- rw=-", "expected 'r=<ids>'" },
	{ H "b 1 10\nb 2 1\n", "k a 0 r=1,,2 w=- rw=-", "malformed id" },
	{ H "b 1 10\n", "k a 0 r=1, w=- rw=-", "malformed id" },
	{ H "b 1 10\n", "k a 0 r= w=- rw=-", "empty list" },
	{ H "b 1 10\n", "k a 0 r=1 w=- rw=- extra", "unexpected field 'extra'" },
	{ H, "k", "missing name" },
	{ H, "k a", "missing flops" },
	{ H, "b", "missing id" },
	{ H, "b 1", "missing size" },
	{ H, "b 1 10 kind label extra", "unexpected field 'extra'" },
	{ H, "f", "missing id" },
	{ H, "f 1 2", "unexpected field" },
	{ H, "i", "missing iteration number" },
	{ H, "i 1 2", "unexpected field" },
	{ H, "b 1 10 ki\001nd", "control character 0x01" },
};

static void check_bad(const struct bad_case *c)
{
	size_t lb = strlen(c->before), lc = strlen(c->culprit);
	char *text = malloc(lb + lc + 2);
	char err[256], want[64];
	size_t line = 1;
	struct dao_trace *t = (struct dao_trace *)&line; /* must stay untouched */
	dao_status st;

	memcpy(text, c->before, lb);
	memcpy(text + lb, c->culprit, lc);
	text[lb + lc] = '\n';
	text[lb + lc + 1] = '\0';
	for (size_t i = 0; i < lb; i++)
		line += c->before[i] == '\n';
	snprintf(want, sizeof(want), "line %zu: ", line);
	st = dao_trace_read_mem(text, lb + lc + 1, &t, err, sizeof(err));
	if (!tap_ok(st == DAO_ERR_FORMAT && strncmp(err, want, strlen(want)) == 0 &&
			    strstr(err, c->reason) && t == (struct dao_trace *)&line,
		    "rejects '%s' at %s(%s)", c->culprit, want, c->reason))
		tap_diag("  status %d, message '%s'", (int)st, err);
	free(text);
}

static void test_line_limit(void)
{
	/* A line of exactly 1 MiB is legal (a comment), one byte more is not. */
	size_t n = DAO_TRACE_MAX_LINE;
	char *text = malloc(strlen(H) + n + 3);
	struct dao_trace *t = NULL;
	char err[256];
	dao_status st;

	strcpy(text, H);
	memset(text + strlen(H), ' ', n);
	text[strlen(H)] = '#';
	text[strlen(H) + n] = '\n';
	st = dao_trace_read_mem(text, strlen(H) + n + 1, &t, err, sizeof(err));
	TAP_IS_STATUS(st, DAO_OK, "a 1 MiB line is accepted");
	dao_trace_free(t);
	t = NULL;
	text[strlen(H) + n] = ' ';
	text[strlen(H) + n + 1] = '\n';
	st = dao_trace_read_mem(text, strlen(H) + n + 2, &t, err, sizeof(err));
	tap_ok(st == DAO_ERR_FORMAT && strstr(err, "line 2: line longer than 1 MiB") && !t,
	       "a line of 1 MiB + 1 byte is refused: %s", err);
	/* the header line is held to the limit too */
	memset(text, 'd', n + 1);
	st = dao_trace_read_mem(text, n + 1, &t, err, sizeof(err));
	tap_ok(st == DAO_ERR_FORMAT && strstr(err, "line 1: line longer than 1 MiB"),
	       "an overlong first line is refused: %s", err);
	free(text);
}

static void test_empty_and_nul(void)
{
	struct dao_trace *t = NULL;
	char err[256];
	static const char nul[] = H "b 1 10\0\n";

	tap_ok(dao_trace_read_mem("", 0, &t, err, sizeof(err)) == DAO_ERR_FORMAT &&
		       strstr(err, "line 1: empty input") && !t,
	       "empty input is refused: %s", err);
	tap_ok(dao_trace_read_mem(nul, sizeof(nul) - 1, &t, err, sizeof(err)) == DAO_ERR_FORMAT &&
		       strstr(err, "line 2: control character 0x00") && !t,
	       "a NUL byte is refused: %s", err);
	TAP_IS_STATUS(dao_trace_read_mem(NULL, 3, &t, err, sizeof(err)), DAO_ERR_NULL,
		      "NULL data is refused");
	TAP_IS_STATUS(dao_trace_read_mem(H, strlen(H), NULL, err, sizeof(err)), DAO_ERR_NULL,
		      "NULL out is refused");
	/* no error buffer at all: still refused, no crash */
	TAP_IS_STATUS(dao_trace_read_mem("x", 1, &t, NULL, 0), DAO_ERR_FORMAT,
		      "refused without an error buffer");
	/* a tiny error buffer is truncated, not overrun */
	{
		char small[8];

		memset(small, 'Z', sizeof(small));
		dao_trace_read_mem("x", 1, &t, small, 4);
		tap_ok(small[3] == '\0' && small[4] == 'Z', "error message truncated to its buffer");
	}
}

static void test_valid(void)
{
	static const char text[] =
		H "# model=test dtype=float64\n"
		  "# second\n"
		  "\n"
		  "i 0\n"
		  "b 10 100 param W\n"
		  "b 20 0\n"
		  "   \t\n"
		  "b 30 7 act # trailing comment\n"
		  "k gemm 12345 r=10 w=30 rw=20   # comment after a record\n"
		  "f 10\n"
		  "k add 0 r=- w=- rw=30,20\r\n"
		  "# a comment later is not preamble\n"
		  "i 1";
	struct dao_trace *t = NULL;
	const struct dao_trace_operand *ops;
	char err[256];
	dao_status st = dao_trace_read_mem(text, sizeof(text) - 1, &t, err, sizeof(err));

	if (!tap_ok(st == DAO_OK, "a valid trace parses")) {
		tap_diag("  %s", err);
		tap_bail("cannot go on");
	}
	TAP_IS_U64(t->nbufs, 3, "three buffers");
	TAP_IS_U64(t->nkernels, 2, "two kernels");
	TAP_IS_U64(t->nevents, 5, "five events (i, k, f, k, i)");
	TAP_IS_U64(t->nops, 5, "five operands");
	tap_ok(t->bufs[0].id == 10 && t->bufs[0].bytes == 100 && t->bufs[0].kind &&
		       strcmp(t->bufs[0].kind, "param") == 0 && t->bufs[0].label &&
		       strcmp(t->bufs[0].label, "W") == 0,
	       "buffer with kind and label");
	tap_ok(t->bufs[1].bytes == 0 && !t->bufs[1].kind && !t->bufs[1].label,
	       "zero-byte buffer without kind or label");
	tap_ok(t->bufs[2].kind && strcmp(t->bufs[2].kind, "act") == 0 && !t->bufs[2].label,
	       "a trailing comment is not a label");
	tap_ok(t->events[0].type == DAO_TRACE_ITERATION && t->events[0].u.iteration == 0,
	       "iteration 0");
	tap_ok(t->events[1].type == DAO_TRACE_KERNEL &&
		       strcmp(t->events[1].u.kernel.name, "gemm") == 0 &&
		       t->events[1].u.kernel.flops == 12345 && t->events[1].u.kernel.nops == 3,
	       "kernel gemm");
	ops = dao_trace_kernel_ops(t, &t->events[1]);
	tap_ok(ops[0].buf == 0 && ops[0].mode == DAO_R && ops[1].buf == 2 &&
		       ops[1].mode == DAO_W && ops[2].buf == 1 && ops[2].mode == DAO_RW,
	       "operands in r, w, rw order as buffer indices");
	tap_ok(t->events[2].type == DAO_TRACE_FREE && t->events[2].u.free_buf == 0, "free");
	ops = dao_trace_kernel_ops(t, &t->events[3]);
	tap_ok(t->events[3].u.kernel.nops == 2 && ops[0].buf == 2 && ops[1].buf == 1 &&
		       ops[0].mode == DAO_RW,
	       "rw list; CRLF line end accepted");
	tap_ok(t->events[4].type == DAO_TRACE_ITERATION && t->events[4].u.iteration == 1,
	       "last line without a newline");
	tap_ok(strcmp(t->preamble, "model=test dtype=float64\nsecond") == 0,
	       "preamble keeps the comments before the first record: '%s'", t->preamble);
	dao_trace_free(t);
}

static void test_file(void)
{
	char path[] = "/tmp/dao-test-trace-XXXXXX";
	int fd = mkstemp(path);
	struct dao_trace *t = NULL;
	char err[512];
	FILE *f;

	if (fd < 0)
		tap_bail("mkstemp");
	f = fdopen(fd, "w");
	fputs(H "b 1 1\nk a 0 r=1 w=- rw=-\nk a 0 r=1 w=- rw=-\nb 1 2\n", f);
	fclose(f);
	tap_ok(dao_trace_read_file(path, &t, err, sizeof(err)) == DAO_ERR_FORMAT &&
		       strstr(err, "line 5: buffer 1 declared twice") && !t,
	       "file reader reports the line: %s", err);
	unlink(path);
	tap_ok(dao_trace_read_file(path, &t, err, sizeof(err)) == DAO_ERR_IO &&
		       strstr(err, path) && strstr(err, "No such file"),
	       "a missing file is an I/O error naming it: %s", err);
	tap_ok(dao_trace_read_file("/", &t, err, sizeof(err)) == DAO_ERR_IO,
	       "a directory is an I/O error: %s", err);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_bad(&bad[i]);
	test_line_limit();
	test_empty_and_nul();
	test_valid();
	test_file();
	tap_plan_done();
	return tap_exit();
}
