// SPDX-License-Identifier: GPL-2.0
/*
 * libdao_ioctl_faults.c - every /dev/dao ioctl of a pinning job failed in
 * turn, with the module loaded (issue 26's sweep, tests/faults/, has no
 * /dev/dao outside the VM: this is its ioctl kind).
 *
 * The job (this program with --job) runs on the host backend with staging
 * that libdao pins through /dev/dao. It runs once with DAO_FAULT=count to
 * learn how many ioctls it makes, then once per ioctl with DAO_FAULT=
 * ioctl:N (that one refused as the module refuses a pin it cannot back),
 * and once with ioctl:1+ (every one refused). The module adds enforcement,
 * never correctness: every run must complete with exact results, within
 * its alarm, and once its process is gone the module must hold nothing
 * of it (no pinned bytes, no process).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dao.h>

#include "kselftest.h"
#include "util.h"

#define BUFS 6
#define BUF_BYTES (256 * 1024)
#define WORDS (BUF_BYTES / sizeof(uint32_t))
#define ROUNDS 3
#define JOB_SECONDS 120 /* TCG is slow; a hang is far longer */

/* The job's exits besides 0 (exact results). */
#define JOB_WRONG 2   /* a byte differs from the plain computation */
#define JOB_STATUS 3  /* a call returned a status (printed) */

/* w = w * 3 + add + i: order-sensitive, so a lost or repeated step shows. */
static int bump(const dao_kernel_args *a)
{
	uint32_t add = (uint32_t)(uintptr_t)a->user;
	uint32_t *w = a->ptrs[0];

	for (uint64_t i = 0; i < a->sizes[0] / sizeof(uint32_t); i++)
		w[i] = w[i] * 3 + add + (uint32_t)i;
	return 0;
}

static uint32_t start_word(int b, size_t i)
{
	return (uint32_t)(b * 1000003u + i);
}

#define JOB_CALL(call)                                                             \
	do {                                                                       \
		dao_status st_ = (call);                                           \
		if (st_ != DAO_OK) {                                               \
			fprintf(stderr, "job: %s: %s\n", #call, dao_strerror(st_)); \
			return JOB_STATUS;                                         \
		}                                                                  \
	} while (0)

/* Three rounds over six buffers through a budget of three: each round
 * evicts and fetches, so staging is used (and pinned) throughout. */
static int job(void)
{
	static uint32_t want[BUFS][WORDS], got[WORDS];
	dao_config cfg;
	dao_ctx ctx;
	dao_buf buf[BUFS];

	for (int b = 0; b < BUFS; b++)
		for (size_t i = 0; i < WORDS; i++)
			want[b][i] = start_word(b, i);
	dao_config_init(&cfg);
	cfg.backend = DAO_BACKEND_HOST;
	cfg.flags = DAO_CONFIG_PRIVATE;
	cfg.device_budget = 3 * BUF_BYTES;
	JOB_CALL(dao_open(&cfg, &ctx));
	for (int b = 0; b < BUFS; b++) {
		JOB_CALL(dao_buffer_create(ctx, BUF_BYTES, &buf[b]));
		JOB_CALL(dao_write(ctx, buf[b], 0, want[b], BUF_BYTES));
	}
	for (int r = 0; r < ROUNDS; r++)
		for (int b = 0; b < BUFS; b++) {
			dao_operand op = { buf[b], DAO_RW };
			uint32_t add = (uint32_t)(r * 31 + b * 7 + 1);

			JOB_CALL(dao_launch(ctx, bump, (void *)(uintptr_t)add, &op, 1));
			for (size_t i = 0; i < WORDS; i++)
				want[b][i] = want[b][i] * 3 + add + (uint32_t)i;
		}
	JOB_CALL(dao_sync(ctx));
	for (int b = 0; b < BUFS; b++) {
		JOB_CALL(dao_read(ctx, buf[b], 0, got, BUF_BYTES));
		if (memcmp(got, want[b], BUF_BYTES)) {
			fprintf(stderr, "job: buffer %d differs from the plain computation\n", b);
			return JOB_WRONG;
		}
		JOB_CALL(dao_release(ctx, buf[b]));
	}
	JOB_CALL(dao_close(ctx, NULL));
	return 0;
}

/* Runs the job with DAO_FAULT=spec; its stderr into out. Returns its exit
 * status, or 1000 + the signal that ended it (SIGALRM: it hung). */
static int run_job(const char *spec, char *out, size_t cap)
{
	int pfd[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		setenv("DAO_FAULT", spec, 1);
		alarm(JOB_SECONDS); /* kept across exec */
		execl("/proc/self/exe", "libdao_ioctl_faults", "--job", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (len + 1 < cap && (n = read(pfd[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

/* The module holds nothing of a job whose process is gone. */
static int node_clean(struct nl_sock *sk, char *why, size_t cap)
{
	struct node_state st;

	if (dnl_get_node(sk, &st)) {
		snprintf(why, cap, "netlink: node state unreadable");
		return 0;
	}
	if (st.pinned || st.procs) {
		snprintf(why, cap, "the module still holds %" PRIu64 " pinned bytes of %u processes",
			 st.pinned, st.procs);
		return 0;
	}
	return 1;
}

/* One run with spec failing; true when it completed exactly and left the
 * module clean. */
static int one_point(struct nl_sock *sk, const char *spec)
{
	static char out[16384];
	char why[160] = "";
	int rc = run_job(spec, out, sizeof(out));
	int ok = rc == 0 && node_clean(sk, why, sizeof(why));

	if (!ok) {
		ksft_print_msg("DAO_FAULT=%s: exit %d%s%s\n", spec, rc, why[0] ? "; " : "", why);
		ksft_print_msg("its stderr: %s\n", out);
	}
	return ok;
}

int main(int argc, char **argv)
{
	static char out[16384];
	struct nl_sock *sk;
	const char *at;
	unsigned long points, failed = 0;
	char spec[32];
	int rc;

	if (argc == 2 && !strcmp(argv[1], "--job"))
		return job();

	ksft_print_header();
	ksft_set_plan(3);
	if (dnl_open(&sk))
		ksft_exit_fail_msg("netlink: cannot talk to dao.ko\n");

	rc = run_job("count", out, sizeof(out));
	at = strstr(out, " ioctl=");
	ksft_test_result(rc == 0 && at, "the job completes counting its calls (exit %d)\n", rc);
	if (rc != 0 || !at) {
		ksft_print_msg("its stderr: %s\n", out);
		ksft_exit_fail();
	}
	points = strtoul(at + 7, NULL, 10);
	if (points < 3) {
		/* the version check, at least one pin and its unpin */
		ksft_test_result_skip("libdao made %lu ioctls: it does not pin through /dev/dao here\n",
				      points);
		ksft_test_result_skip("nothing to fail for good\n");
		dnl_close(sk);
		ksft_exit_pass();
	}

	for (unsigned long n = 1; n <= points; n++) {
		snprintf(spec, sizeof(spec), "ioctl:%lu", n);
		failed += !one_point(sk, spec);
	}
	ksft_test_result(!failed,
			 "each of the job's %lu ioctls refused in turn: %lu runs exact, module clean\n",
			 points, points - failed);
	ksft_test_result(one_point(sk, "ioctl:1+"),
			 "every ioctl refused: the job runs without the module, exact\n");
	dnl_close(sk);
	if (ksft_get_fail_cnt())
		ksft_exit_fail();
	ksft_exit_pass();
}
