/* SPDX-License-Identifier: MIT */
/*
 * test_api_reentrant.c - calling the API from inside a kernel function, on a
 * context of the device that runs the kernel, with and without
 * DAO_CONFIG_DETERMINISTIC: calls on handles work, calls that would wait for
 * the executor (which is busy running this very kernel) or queue work return
 * DAO_ERR_REENTRANT and change nothing, also on another context sharing the
 * device; on a context of another device they work. Nothing may hang: each scenario runs
 * in a child process that an alarm ends, and a child that does not finish is
 * a failure with the call it stopped in named.
 */
#include <signal.h>
#include <sys/wait.h>

#include "common.h"

#define GUARD_SECONDS 30

enum call {
	C_SIZE,
	C_CREATE,
	C_RELEASE_NEW,
	C_RETAIN,
	C_RELEASE,
	C_VIEW,
	C_LABEL,
	C_STATS,
	C_INFO,
	C_OTHER_DEVICE_SYNC,
	C_SYNC,
	C_READ,
	C_WRITE,
	C_LAUNCH,
	C_ITERATION,
	C_CLOSE,
	C_KERNEL_DONE,
	/* back on the job's thread */
	C_JOB_READ,
	C_JOB_SYNC,
	C_JOB_CLOSE,
	C_COUNT,
};

static const struct {
	const char *name;
	dao_status want;
} calls[C_COUNT] = {
	[C_SIZE] = { "dao_buffer_size", DAO_OK },
	[C_CREATE] = { "dao_buffer_create", DAO_OK },
	[C_RELEASE_NEW] = { "dao_release of the new buffer", DAO_OK },
	[C_RETAIN] = { "dao_retain", DAO_OK },
	[C_RELEASE] = { "dao_release", DAO_OK },
	[C_VIEW] = { "dao_view_create and dao_release", DAO_OK },
	[C_LABEL] = { "dao_set_label", DAO_OK },
	[C_STATS] = { "dao_stats_get", DAO_OK },
	[C_INFO] = { "dao_info_get", DAO_OK },
	[C_OTHER_DEVICE_SYNC] = { "dao_sync of the other context", DAO_OK },
	[C_SYNC] = { "dao_sync", DAO_ERR_REENTRANT },
	[C_READ] = { "dao_read", DAO_ERR_REENTRANT },
	[C_WRITE] = { "dao_write", DAO_ERR_REENTRANT },
	[C_LAUNCH] = { "dao_launch", DAO_ERR_REENTRANT },
	[C_ITERATION] = { "dao_iteration", DAO_ERR_REENTRANT },
	[C_CLOSE] = { "dao_close", DAO_ERR_REENTRANT },
	[C_KERNEL_DONE] = { "the kernel function returns", DAO_OK },
	[C_JOB_READ] = { "the job reads the buffer back, unchanged", DAO_OK },
	[C_JOB_SYNC] = { "the job's dao_sync after the kernel", DAO_OK },
	[C_JOB_CLOSE] = { "the job's dao_close", DAO_OK },
};

struct job {
	int fd; /* results go here, one record per call, as they happen */
	dao_ctx ctx, other;
	dao_buf buf;
};

static void report(const struct job *j, enum call c, dao_status st)
{
	int32_t rec[2] = { (int32_t)c, (int32_t)st };

	if (write(j->fd, rec, sizeof(rec)) != (ssize_t)sizeof(rec))
		_exit(3);
}

static int reenter(const dao_kernel_args *a)
{
	const struct job *j = a->user;
	unsigned char bytes[8] = { 0 };
	uint64_t size;
	dao_buf nb, view;
	dao_stats stats;
	dao_info info;
	dao_operand op = { j->buf, DAO_R };
	dao_status st;

	report(j, C_SIZE, dao_buffer_size(j->ctx, j->buf, &size));
	st = dao_buffer_create(j->ctx, 10, &nb);
	report(j, C_CREATE, st);
	report(j, C_RELEASE_NEW, st == DAO_OK ? dao_release(j->ctx, nb) : st);
	report(j, C_RETAIN, dao_retain(j->ctx, j->buf));
	report(j, C_RELEASE, dao_release(j->ctx, j->buf));
	st = dao_view_create(j->ctx, j->buf, 1, 2, &view);
	report(j, C_VIEW, st == DAO_OK ? dao_release(j->ctx, view) : st);
	report(j, C_LABEL, dao_set_label(j->ctx, j->buf, "inside"));
	report(j, C_STATS, dao_stats_get(j->ctx, &stats));
	report(j, C_INFO, dao_info_get(j->ctx, &info));
	report(j, C_OTHER_DEVICE_SYNC, dao_sync(j->other));
	report(j, C_SYNC, dao_sync(j->ctx));
	report(j, C_READ, dao_read(j->ctx, j->buf, 0, bytes, sizeof(bytes)));
	report(j, C_WRITE, dao_write(j->ctx, j->buf, 0, bytes, sizeof(bytes)));
	report(j, C_LAUNCH, dao_launch(j->ctx, NULL, NULL, &op, 1));
	report(j, C_ITERATION, dao_iteration(j->ctx));
	report(j, C_CLOSE, dao_close(j->ctx, NULL));
	report(j, C_KERNEL_DONE, DAO_OK);
	return 0;
}

static void child(int fd, uint32_t flags, bool shared)
{
	struct job j = { .fd = fd };
	unsigned char in[64], out[64];
	dao_operand op;
	dao_stats s;

	alarm(GUARD_SECONDS);
	if (shared) {
		dao_config cfg = test_config(1 << 20, DAO_POLICY_DAO, 4, flags);

		TEST_TRY(dao_open(&cfg, &j.ctx));
		TEST_TRY(dao_open(&cfg, &j.other));
	} else {
		j.ctx = test_open(1 << 20, DAO_POLICY_DAO, 4, flags);
		j.other = test_open(1 << 20, DAO_POLICY_DAO, 4, flags);
	}
	j.buf = test_buffer(j.ctx, sizeof(in));
	test_fill(in, sizeof(in), 11);
	TEST_TRY(dao_write(j.ctx, j.buf, 0, in, sizeof(in)));
	op = (dao_operand){ j.buf, DAO_RW };
	TEST_TRY(dao_launch(j.ctx, reenter, &j, &op, 1));
	/* Nothing the kernel was refused was queued: the kernel ran once and
	 * the buffer holds what the job wrote. */
	report(&j, C_JOB_READ,
	       dao_read(j.ctx, j.buf, 0, out, sizeof(out)) == DAO_OK && !memcmp(in, out, sizeof(in))
		       ? DAO_OK
		       : DAO_ERR_FAILED);
	report(&j, C_JOB_SYNC, dao_sync(j.ctx));
	s = test_stats(j.ctx);
	if (s.kernels != 1)
		report(&j, C_JOB_SYNC, DAO_ERR_INVALID);
	TEST_TRY(dao_release(j.ctx, j.buf));
	report(&j, C_JOB_CLOSE, dao_close(j.ctx, NULL));
	TEST_TRY(dao_close(j.other, NULL));
	_exit(0);
}

static void run(uint32_t flags, bool shared, const char *mode)
{
	dao_status got[C_COUNT];
	bool seen[C_COUNT] = { false };
	int32_t rec[2];
	int pipefd[2], wst;
	enum call last = C_COUNT;
	pid_t pid;

	if (pipe(pipefd))
		tap_bail("pipe failed");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork failed");
	if (pid == 0) {
		close(pipefd[0]);
		child(pipefd[1], flags, shared);
	}
	close(pipefd[1]);
	while (read(pipefd[0], rec, sizeof(rec)) == (ssize_t)sizeof(rec)) {
		if (rec[0] < 0 || rec[0] >= C_COUNT)
			tap_bail("child sent call %d", rec[0]);
		if (!seen[rec[0]] || rec[1] != DAO_OK)
			got[rec[0]] = (dao_status)rec[1];
		seen[rec[0]] = true;
		last = (enum call)rec[0];
	}
	close(pipefd[0]);
	if (waitpid(pid, &wst, 0) != pid)
		tap_bail("waitpid failed");
	if (!tap_ok(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "%s: the job finishes", mode)) {
		if (WIFSIGNALED(wst) && WTERMSIG(wst) == SIGALRM)
			tap_diag("  hung for %d s after \"%s\"", GUARD_SECONDS,
				 last < C_COUNT ? calls[last].name : "(nothing)");
		else
			tap_diag("  exit status %#x", wst);
	}
	for (int c = 0; c < C_COUNT; c++) {
		dao_status want = calls[c].want;

		/* The other context waits on the very executor that runs the
		 * kernel when they share a device. */
		if (c == C_OTHER_DEVICE_SYNC && shared)
			want = DAO_ERR_REENTRANT;
		if (!seen[c]) {
			tap_ok(0, "%s: %s returns", mode, calls[c].name);
			continue;
		}
		if (!tap_ok(got[c] == want, "%s: %s: %s", mode, calls[c].name, dao_strerror(want)))
			tap_diag("  got %s", dao_strerror(got[c]));
	}
}

int main(void)
{
	test_clear_env();
	run(DAO_CONFIG_DETERMINISTIC, false, "deterministic, other context on another device");
	run(0, false, "free-running, other context on another device");
	run(DAO_CONFIG_DETERMINISTIC, true, "deterministic, other context on the same device");
	run(0, true, "free-running, other context on the same device");
	tap_plan_done();
	return tap_exit();
}
