/* SPDX-License-Identifier: MIT */
/*
 * test_trace_write.c - the DAO_TRACE writer: what it writes reads back the
 * same, whatever names the job passes; write failures are reported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "dao_trace.h"
#include "trace/trace_writer.h"

static char path[] = "/tmp/dao-test-write-XXXXXX";

static struct dao_trace *read_back(char *err, size_t errlen)
{
	struct dao_trace *t = NULL;

	if (dao_trace_read_file(path, &t, err, errlen) != DAO_OK)
		return NULL;
	return t;
}

static void test_round_trip(void)
{
	struct dao_trace_writer *w;
	const uint64_t r[] = { 1, 2 }, wr[] = { 3 }, rw[] = { 9223372036854775807ull };
	char longname[600], err[256];
	struct dao_trace *t;
	const struct dao_trace_operand *ops;

	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	TAP_IS_STATUS(dao_trace_writer_open(path, &w), DAO_OK, "open");
	dao_trace_writer_iteration(w, 0);
	dao_trace_writer_buffer(w, 1, 100, "param", "layer 1 weight");
	dao_trace_writer_buffer(w, 2, 0, NULL, NULL);
	dao_trace_writer_buffer(w, 3, 50, NULL, "#label\twith\ncontrol");
	dao_trace_writer_buffer(w, 9223372036854775807ull, 9223372036854775807ull, "", "");
	dao_trace_writer_kernel(w, "my kernel\x01", 1000, r, 2, wr, 1, rw, 1);
	dao_trace_writer_kernel(w, NULL, 0, NULL, 0, NULL, 0, r, 1);
	dao_trace_writer_kernel(w, longname, 7, NULL, 0, NULL, 0, NULL, 0);
	dao_trace_writer_free(w, 1);
	dao_trace_writer_iteration(w, 1);
	TAP_IS_STATUS(dao_trace_writer_close(w), DAO_OK, "close");

	t = read_back(err, sizeof(err));
	if (!tap_ok(t != NULL, "the output parses")) {
		tap_diag("  %s", err);
		return;
	}
	TAP_IS_U64(t->nbufs, 4, "four buffers");
	TAP_IS_U64(t->nkernels, 3, "three kernels");
	TAP_IS_U64(t->nevents, 6, "six events");
	tap_ok(t->bufs[0].id == 1 && t->bufs[0].bytes == 100 &&
		       strcmp(t->bufs[0].kind, "param") == 0 &&
		       strcmp(t->bufs[0].label, "layer_1_weight") == 0,
	       "spaces in a label become '_'");
	tap_ok(!t->bufs[1].kind && !t->bufs[1].label, "no kind, no label");
	tap_ok(strcmp(t->bufs[2].kind, "-") == 0 &&
		       strcmp(t->bufs[2].label, "_label_with_control") == 0,
	       "a label without kind gets '-', leading '#' and control bytes become '_' (%s)",
	       t->bufs[2].label);
	tap_ok(t->bufs[3].id == 9223372036854775807ull &&
		       t->bufs[3].bytes == 9223372036854775807ull && !t->bufs[3].kind,
	       "largest id and size; empty strings are absent");
	tap_ok(strcmp(t->events[1].u.kernel.name, "my_kernel_") == 0 &&
		       t->events[1].u.kernel.flops == 1000 && t->events[1].u.kernel.nops == 4,
	       "kernel name sanitised, flops kept");
	ops = dao_trace_kernel_ops(t, &t->events[1]);
	tap_ok(ops[0].buf == 0 && ops[0].mode == DAO_R && ops[1].buf == 1 &&
		       ops[1].mode == DAO_R && ops[2].buf == 2 && ops[2].mode == DAO_W &&
		       ops[3].buf == 3 && ops[3].mode == DAO_RW,
	       "operand lists and modes");
	tap_ok(strcmp(t->events[2].u.kernel.name, "kernel") == 0 && t->events[2].u.kernel.nops == 1,
	       "a NULL name is written 'kernel'");
	tap_ok(strlen(t->events[3].u.kernel.name) == 255, "long names are cut to 255 bytes");
	tap_ok(t->events[4].type == DAO_TRACE_FREE && t->events[4].u.free_buf == 0 &&
		       t->events[5].type == DAO_TRACE_ITERATION && t->events[5].u.iteration == 1,
	       "free and iteration");
	dao_trace_free(t);
}

static void test_dropped(void)
{
	struct dao_trace_writer *w;
	const uint64_t bad[] = { 0 };
	struct dao_trace *t;
	char err[256];

	TAP_IS_STATUS(dao_trace_writer_open(path, &w), DAO_OK, "open again");
	dao_trace_writer_buffer(w, 0, 10, NULL, NULL);
	dao_trace_writer_buffer(w, 1ull << 63, 10, NULL, NULL);
	dao_trace_writer_buffer(w, 5, 1ull << 63, NULL, NULL);
	dao_trace_writer_kernel(w, "k", 0, bad, 1, NULL, 0, NULL, 0);
	dao_trace_writer_kernel(w, "k", 0, NULL, 2, NULL, 0, NULL, 0);
	dao_trace_writer_free(w, 0);
	TAP_IS_STATUS(dao_trace_writer_close(w), DAO_ERR_INVALID,
		      "records with ids out of range are dropped and reported");
	t = read_back(err, sizeof(err));
	tap_ok(t && t->nbufs == 0 && t->nevents == 0, "and the output still parses, empty");
	dao_trace_free(t);
}

static void test_io_errors(void)
{
	struct dao_trace_writer *w = NULL;
	const uint64_t one[] = { 1 };

	TAP_IS_STATUS(dao_trace_writer_open("/nonexistent-dir/trace", &w), DAO_ERR_IO,
		      "open in a missing directory fails");
	tap_ok(w == NULL, "and leaves out untouched");
	TAP_IS_STATUS(dao_trace_writer_open(NULL, &w), DAO_ERR_NULL, "NULL path");
	TAP_IS_STATUS(dao_trace_writer_open(path, NULL), DAO_ERR_NULL, "NULL out");
	TAP_IS_STATUS(dao_trace_writer_close(NULL), DAO_ERR_NULL, "close(NULL)");
	/* NULL writer calls are no-ops (the core calls them unconditionally) */
	dao_trace_writer_buffer(NULL, 1, 1, NULL, NULL);
	dao_trace_writer_kernel(NULL, "k", 0, one, 1, NULL, 0, NULL, 0);
	dao_trace_writer_free(NULL, 1);
	dao_trace_writer_iteration(NULL, 1);
	if (access("/dev/full", W_OK) == 0) {
		TAP_IS_STATUS(dao_trace_writer_open("/dev/full", &w), DAO_OK, "open /dev/full");
		for (int i = 0; i < 2000; i++)
			dao_trace_writer_buffer(w, (uint64_t)i + 1, 4096, "act", "x");
		TAP_IS_STATUS(dao_trace_writer_close(w), DAO_ERR_IO,
			      "a full disk is reported at close");
	} else {
		tap_ok(1, "# SKIP /dev/full not writable");
		tap_ok(1, "# SKIP /dev/full not writable");
	}
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0)
		tap_bail("mkstemp");
	close(fd);
	test_round_trip();
	test_dropped();
	test_io_errors();
	unlink(path);
	tap_plan_done();
	return tap_exit();
}
