/* SPDX-License-Identifier: MIT */
/*
 * test_trace_job.c - DAO_TRACE: a libdao job writes a dao-trace v1 that
 * the reader accepts and that holds what the job did (a host kernel as a
 * comment: to the device it is a host access).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "dao_trace.h"

int main(void)
{
	char path[] = "/tmp/dao-test-job-trace-XXXXXX";
	int fd = mkstemp(path);
	dao_config cfg;
	dao_ctx ctx;
	dao_buf a, b;
	struct dao_trace *t = NULL;
	char err[256];
	dao_status st;

	if (fd < 0)
		tap_bail("mkstemp");
	close(fd);
	dao_config_init(&cfg);
	cfg.backend = DAO_BACKEND_HOST;
	cfg.device_budget = 1 << 20;
	cfg.flags = DAO_CONFIG_PRIVATE;
	cfg.trace_path = path;
	if (dao_open(&cfg, &ctx) != DAO_OK)
		tap_bail("dao_open");
	if (dao_buffer_create(ctx, 4096, &a) || dao_buffer_create(ctx, 1024, &b))
		tap_bail("dao_buffer_create");
	dao_set_label(ctx, a, "input data");
	{
		dao_operand ops1[] = { { a, DAO_R }, { b, DAO_W } };
		dao_operand ops2[] = { { b, DAO_RW } };
		dao_operand ops3[] = { { a, DAO_R }, { b, DAO_RW } };

		if (dao_launch_named(ctx, "first kernel", 1234, NULL, NULL, ops1, 2) ||
		    dao_iteration(ctx) || dao_launch(ctx, NULL, NULL, ops2, 1) ||
		    dao_launch_flags(ctx, "host step", 77, DAO_LAUNCH_HOST, NULL, NULL, ops3, 2))
			tap_bail("launch");
	}
	dao_release(ctx, a);
	dao_release(ctx, b);
	st = dao_close(ctx, NULL);
	TAP_IS_STATUS(st, DAO_OK, "job ran and closed");
	st = dao_trace_read_file(path, &t, err, sizeof(err));
	if (!tap_ok(st == DAO_OK, "its trace parses")) {
		tap_diag("  %s", err);
		unlink(path);
		tap_plan_done();
		return tap_exit();
	}
	TAP_IS_U64(t->nkernels, 2, "two kernels: the host kernel is no record");
	{
		FILE *f = fopen(path, "r");
		char line[256];
		bool found = false;

		while (f && fgets(line, sizeof(line), f))
			found |= strcmp(line, "# host k host_step 77 r=1 w=- rw=2\n") == 0;
		if (f)
			fclose(f);
		tap_ok(found, "the host kernel is a comment line: '# host ' and its kernel line");
	}
	TAP_IS_U64(t->nbufs, 2, "two buffers");
	{
		int k = 0, frees = 0, iters = 0;

		for (size_t e = 0; e < t->nevents; e++) {
			const struct dao_trace_event *ev = &t->events[e];

			if (ev->type == DAO_TRACE_KERNEL && k++ == 0) {
				const struct dao_trace_operand *o = dao_trace_kernel_ops(t, ev);

				tap_ok(strcmp(ev->u.kernel.name, "first_kernel") == 0 &&
					       ev->u.kernel.flops == 1234 && ev->u.kernel.nops == 2 &&
					       t->bufs[o[0].buf].bytes == 4096 && o[0].mode == DAO_R &&
					       t->bufs[o[1].buf].bytes == 1024 && o[1].mode == DAO_W,
				       "first kernel: name sanitised, flops, r and w operands");
			} else if (ev->type == DAO_TRACE_KERNEL) {
				tap_ok(ev->u.kernel.flops == 0 && ev->u.kernel.nops == 1 &&
					       dao_trace_kernel_ops(t, ev)[0].mode == DAO_RW,
				       "unnamed kernel: flops 0, one rw operand");
			}
			frees += ev->type == DAO_TRACE_FREE;
			iters += ev->type == DAO_TRACE_ITERATION;
		}
		TAP_IS_U64(frees, 2, "both buffers freed");
		TAP_IS_U64(iters, 1, "one iteration mark");
	}
	dao_trace_free(t);
	unlink(path);
	tap_plan_done();
	return tap_exit();
}
