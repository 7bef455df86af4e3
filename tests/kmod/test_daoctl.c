// SPDX-License-Identifier: GPL-2.0
/*
 * test_daoctl.c - daoctl with the module loaded: `status` reports the module,
 * its version and the node limit as the module itself does; `ps` shows a live
 * libdao job's pinned bytes as libdao counts them beside the kernel's count;
 * `limit` sets the node limit as root, and a user without CAP_SYS_ADMIN or CAP_SYS_RESOURCE is
 * refused with a reason and changes nothing.
 *
 * daoctl and dao-pubjob are found on PATH (the VM packs them beside the
 * tests); DAOCTL and DAO_PUBJOB name others. Their text output is echoed as
 * diagnostics: Documentation/daoctl.md quotes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "json.h"
#include "util.h"

/* Seconds any one program may take before the test gives up on it. */
#define DEADLINE_S 20
#define MAX_ARGS 8
#define JOB_NAME "vm-pubjob"

/* What a program printed. */
struct capture {
	char *buf; /* NUL-terminated */
	size_t len;
	size_t cap;
	bool eof;
};

struct run {
	int status; /* exit status, 1000 + signal, or -1 when it did not end */
	struct capture out;
	struct capture err;
};

struct job {
	pid_t pid;
	int in; /* the job holds until this is written to or closed */
	int out; /* at EOF once the job has exited */
	struct capture out_text;
};

static const char *prog(const char *env, const char *name)
{
	const char *p = getenv(env);

	return p && *p ? p : name;
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int capture_read(struct capture *c, int fd)
{
	ssize_t n;

	if (c->cap - c->len < 4096) {
		char *b = realloc(c->buf, c->cap + 65536);

		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap += 65536;
	}
	n = read(fd, c->buf + c->len, c->cap - c->len - 1);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	c->len += (size_t)n;
	c->buf[c->len] = 0;
	c->eof = n == 0;
	return 0;
}

/*
 * Reads the fds into their captures until every one is at EOF, or, with
 * until_line, until the first capture holds a whole line. 0, or -ETIMEDOUT
 * at the deadline.
 */
static int collect(int *fds, struct capture **caps, int n, long long deadline, bool until_line)
{
	for (;;) {
		struct pollfd p[2];
		int np = 0, left;

		if (until_line && caps[0]->buf && strchr(caps[0]->buf, '\n'))
			return 0;
		for (int i = 0; i < n; i++)
			if (!caps[i]->eof)
				p[np++] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		if (!np)
			return until_line ? -EPIPE : 0;
		left = (int)(deadline - now_ms());
		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(p, np, left) < 0 && errno != EINTR)
			return -errno;
		for (int i = 0, k = 0; i < n; i++) {
			int ret;

			if (caps[i]->eof)
				continue;
			if (p[k++].revents && (ret = capture_read(caps[i], fds[i])))
				return ret;
		}
	}
}

static pid_t spawn(const char *path, char *const *argv, int in, int out, int err, bool nobody,
		   const char *job)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if ((in >= 0 && dup2(in, 0) < 0) || dup2(out, 1) < 0 || (err >= 0 && dup2(err, 2) < 0))
		_exit(125);
	if (nobody && become_nobody()) {
		/* The caller reads this where it expects daoctl's reason. */
		fprintf(stderr, "test_daoctl: cannot become uid 65534\n");
		_exit(126);
	}
	if (job)
		setenv("DAO_JOB", job, 1);
	execvp(path, argv);
	_exit(127);
}

static int wait_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

static void run_free(struct run *r)
{
	free(r->out.buf);
	free(r->err.buf);
	memset(r, 0, sizeof(*r));
}

/* Runs daoctl with the arguments (NULL-terminated), as nobody if asked. */
static int daoctl(struct run *r, bool nobody, ...)
{
	char *argv[MAX_ARGS + 2] = { "daoctl" };
	struct capture *caps[2] = { &r->out, &r->err };
	int o[2], e[2], fds[2], argc = 1, ret;
	va_list ap;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	va_start(ap, nobody);
	while (argc <= MAX_ARGS && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	if (argc > MAX_ARGS)
		return -E2BIG;
	if (pipe2(o, O_CLOEXEC))
		return -errno;
	if (pipe2(e, O_CLOEXEC)) {
		close(o[0]);
		close(o[1]);
		return -errno;
	}
	pid = spawn(prog("DAOCTL", "daoctl"), argv, -1, o[1], e[1], nobody, NULL);
	close(o[1]);
	close(e[1]);
	fds[0] = o[0];
	fds[1] = e[0];
	ret = pid < 0 ? -errno : collect(fds, caps, 2, now_ms() + DEADLINE_S * 1000, false);
	close(o[0]);
	close(e[0]);
	if (pid > 0 && ret)
		kill(pid, SIGKILL);
	r->status = pid > 0 ? wait_status(pid) : -1;
	if (!r->out.buf)
		r->out.buf = strdup("");
	if (!r->err.buf)
		r->err.buf = strdup("");
	return ret ? ret : (r->out.buf && r->err.buf ? 0 : -ENOMEM);
}

/* Quotes a program's text output on the console, one diagnostic line each. */
static void echo_output(const char *what, const char *text)
{
	const char *p = text;

	printf("# %s:\n", what);
	while (*p) {
		size_t n = strcspn(p, "\n");

		printf("#   %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	fflush(stdout);
}

/* Starts dao-pubjob holding its state; 0 once it printed its own view. */
static int job_start(struct job *j, char *const *argv)
{
	struct capture *caps[1] = { &j->out_text };
	int in[2], out[2];

	memset(j, 0, sizeof(*j));
	j->pid = -1;
	j->in = j->out = -1;
	if (pipe2(in, O_CLOEXEC))
		return -errno;
	if (pipe2(out, O_CLOEXEC)) {
		close(in[0]);
		close(in[1]);
		return -errno;
	}
	j->pid = spawn(prog("DAO_PUBJOB", "dao-pubjob"), argv, in[0], out[1], -1, false, JOB_NAME);
	close(in[0]);
	close(out[1]);
	j->in = in[1];
	j->out = out[0];
	if (j->pid < 0)
		return -errno;
	return collect(&j->out, caps, 1, now_ms() + DEADLINE_S * 1000, true);
}

/* Lets the job close; its exit status, or -1 when it did not end in time. */
static int job_finish(struct job *j)
{
	struct capture *caps[1] = { &j->out_text };
	int ret = 0, st;

	if (j->pid < 0)
		return -1;
	/* EOF on stdin ends the hold, like a line; EOF on stdout says it exited. */
	close(j->in);
	if (collect(&j->out, caps, 1, now_ms() + DEADLINE_S * 1000, false)) {
		kill(j->pid, SIGKILL);
		ret = -1;
	}
	close(j->out);
	free(j->out_text.buf);
	j->out_text.buf = NULL;
	st = wait_status(j->pid);
	return ret ? -1 : st;
}

/* The object of process pid in a ps --json array, or NULL. */
static const char *find_proc(const char *ps, uint32_t pid)
{
	const char *p;
	uint64_t v;

	for (size_t i = 0; (p = json_at(json_get(ps, "processes"), i)); i++)
		if (json_u64(json_get(p, "pid"), &v) && v == pid)
			return p;
	return NULL;
}

static uint64_t u64_at(const char *obj, const char *path)
{
	uint64_t v;

	return json_u64(json_path(obj, path), &v) ? v : UINT64_MAX;
}

/* /sys/module/dao/version, else srcversion, else "": what daoctl should say. */
static void module_version(char *buf, size_t cap)
{
	static const char *const files[] = { "/sys/module/dao/version",
					     "/sys/module/dao/srcversion" };

	buf[0] = 0;
	for (size_t i = 0; i < 2 && !buf[0]; i++) {
		FILE *f = fopen(files[i], "r");

		if (!f)
			continue;
		if (!fgets(buf, (int)cap, f))
			buf[0] = 0;
		buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

TEST(status_reports_the_module_as_the_module_does)
{
	char want_version[64], version[64], schema[16];
	struct node_state before, after;
	struct nl_sock *sk;
	struct run r;

	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_get_node(sk, &before));
	ASSERT_EQ(0, daoctl(&r, false, "status", "--json", NULL));
	ASSERT_EQ(0, dnl_get_node(sk, &after));
	dnl_close(sk);
	/* Nothing else runs: the module's view held still around daoctl's. */
	ASSERT_EQ(before.limit, after.limit);
	ASSERT_EQ(before.pinned, after.pinned);
	ASSERT_EQ(before.refused, after.refused);

	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err.buf);
	ASSERT_TRUE(json_valid(r.out.buf)) TH_LOG("not JSON: %s", r.out.buf);
	ASSERT_TRUE(json_string(json_get(r.out.buf, "schema"), schema, sizeof(schema)));
	EXPECT_STREQ("daoctl/1", schema);
	EXPECT_TRUE(json_is(json_path(r.out.buf, "module.loaded"), "true"));
	EXPECT_EQ(DAO_GENL_VERSION, u64_at(r.out.buf, "module.family_version"));
	module_version(want_version, sizeof(want_version));
	ASSERT_TRUE(json_string(json_path(r.out.buf, "module.version"), version, sizeof(version)));
	EXPECT_STREQ(want_version, version);
	if (!want_version[0])
		TH_LOG("dao.ko declares no MODULE_VERSION: daoctl rightly reports \"\"");
	EXPECT_EQ(param_get("max_pinned_mb") * MiB, before.limit);
	EXPECT_EQ(before.limit, u64_at(r.out.buf, "module.limit_bytes"));
	EXPECT_EQ(before.pinned, u64_at(r.out.buf, "module.pinned_bytes"));
	EXPECT_EQ(before.refused, u64_at(r.out.buf, "module.refused"));
	EXPECT_LE(before.pinned, u64_at(r.out.buf, "module.peak_bytes"));
	run_free(&r);

	ASSERT_EQ(0, daoctl(&r, false, "status", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out.buf, "module:          loaded (netlink family version "));
	EXPECT_NE(NULL, strstr(r.out.buf, "\nnode limit:      "));
	echo_output("daoctl status", r.out.buf);
	run_free(&r);
}

TEST(ps_shows_kernel_pinned_bytes_beside_libdao)
{
	/* Eight buffers of 64 KiB to 512 KiB under a 1 MiB budget: every one
	 * is evicted at some point, so each has a host copy, all large enough
	 * for libdao to pin. */
	char *argv[] = { "dao-pubjob", "--buffers", "8", "--size", "64K", "--budget", "1M",
			 "--hold", NULL };
	struct proc_state procs[64], *kp = NULL;
	struct node_state before, held, after;
	uint64_t want = 0, size, host, evictions, kernel_sum = 0;
	const char *own, *p, *b;
	struct nl_sock *sk;
	struct job job;
	struct run r;
	char name[32];
	int n;

	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_get_node(sk, &before));
	ASSERT_EQ(0, job_start(&job, argv)) TH_LOG("dao-pubjob printed: %s", job.out_text.buf);
	own = job.out_text.buf;
	ASSERT_TRUE(json_valid(own)) TH_LOG("not JSON: %s", own);

	/* What the job says of itself: every buffer has a host copy. */
	for (size_t i = 0; (b = json_at(json_get(own, "buffers"), i)); i++) {
		ASSERT_TRUE(json_u64(json_get(b, "size"), &size));
		want += size;
	}
	host = u64_at(own, "stats.host_bytes");
	evictions = u64_at(own, "stats.evictions");
	ASSERT_EQ(want, host);
	ASSERT_LT(0, evictions);

	ASSERT_EQ(0, daoctl(&r, false, "ps", "--json", NULL));
	ASSERT_EQ(0, dnl_get_node(sk, &held));
	ASSERT_EQ(0, dnl_dump_procs(sk, procs, 64, &n));
	EXPECT_EQ(0, r.status);
	ASSERT_TRUE(json_valid(r.out.buf)) TH_LOG("not JSON: %s", r.out.buf);
	EXPECT_TRUE(json_is(json_path(r.out.buf, "module.loaded"), "true"));
	p = find_proc(r.out.buf, (uint32_t)job.pid);
	ASSERT_NE(NULL, p) TH_LOG("pid %d missing from %s", job.pid, r.out.buf);
	ASSERT_TRUE(json_string(json_get(p, "job"), name, sizeof(name)));
	EXPECT_STREQ(JOB_NAME, name);
	EXPECT_EQ(host, u64_at(p, "host_bytes"));
	EXPECT_EQ(evictions, u64_at(p, "evictions"));

	/* libdao pinned every host copy, the kernel charged the same bytes. */
	for (int i = 0; i < n && i < 64; i++)
		if (procs[i].pid == (uint32_t)job.pid)
			kp = &procs[i];
	ASSERT_NE(NULL, kp);
	EXPECT_EQ(want, u64_at(p, "pinned_bytes"));
	EXPECT_EQ(kp->pinned, u64_at(p, "kernel_pinned_bytes"));
	EXPECT_EQ(want, kp->pinned);
	EXPECT_EQ((long)(want / 1024), vmpin_kb(job.pid));
	EXPECT_EQ(before.pinned + want, held.pinned);
	/* Every pinning process daoctl lists carries the module's count. */
	for (int i = 0; i < n && i < 64; i++) {
		p = find_proc(r.out.buf, procs[i].pid);
		if (p)
			EXPECT_EQ(procs[i].pinned, u64_at(p, "kernel_pinned_bytes"));
		kernel_sum += procs[i].pinned;
	}
	EXPECT_EQ(held.pinned, kernel_sum);
	p = find_proc(r.out.buf, (uint32_t)job.pid);
	printf("# daoctl ps --json, the job's object:\n#   %.*s\n", (int)(json_skip(p) - p), p);
	run_free(&r);

	ASSERT_EQ(0, daoctl(&r, false, "status", "--json", NULL));
	EXPECT_EQ(held.pinned, u64_at(r.out.buf, "module.pinned_bytes"));
	EXPECT_LE(want, u64_at(r.out.buf, "libdao_pinned_bytes"));
	run_free(&r);

	/* The screens, for the record: ps names the kernel's column KPINNED. */
	ASSERT_EQ(0, daoctl(&r, false, "ps", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out.buf, " KPINNED "));
	EXPECT_NE(NULL, strstr(r.out.buf, " " JOB_NAME " "));
	echo_output("daoctl ps (a dao-pubjob holding)", r.out.buf);
	run_free(&r);
	ASSERT_EQ(0, daoctl(&r, false, "status", NULL));
	echo_output("daoctl status (a dao-pubjob holding)", r.out.buf);
	run_free(&r);

	/* Once the job closes, its pins and its segment are gone. */
	EXPECT_EQ(0, job_finish(&job));
	ASSERT_EQ(0, dnl_get_node(sk, &after));
	EXPECT_EQ(before.pinned, after.pinned);
	ASSERT_EQ(0, daoctl(&r, false, "ps", "--json", NULL));
	EXPECT_EQ(NULL, find_proc(r.out.buf, (uint32_t)job.pid));
	run_free(&r);
	dnl_close(sk);
}

FIXTURE(limit)
{
	long long mb0;
};

FIXTURE_SETUP(limit)
{
	self->mb0 = param_get("max_pinned_mb");
	ASSERT_LE(0, self->mb0);
}

FIXTURE_TEARDOWN(limit)
{
	/* Puts the limit back even when a check above gave up half way. */
	if (param_get("max_pinned_mb") != self->mb0)
		EXPECT_EQ(0, limit_set_mb((unsigned long long)self->mb0));
}

TEST_F(limit, set_as_root_refused_to_nobody)
{
	char mb0[32], want[32];
	struct run r;

	/* The test needs two limits that differ from the one in force. */
	ASSERT_NE(64, self->mb0);
	ASSERT_NE(32, self->mb0);

	ASSERT_EQ(0, daoctl(&r, false, "limit", "64M", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err.buf);
	run_free(&r);
	EXPECT_EQ(64, param_get("max_pinned_mb"));
	ASSERT_EQ(0, daoctl(&r, false, "status", "--json", NULL));
	EXPECT_EQ(64 * MiB, u64_at(r.out.buf, "module.limit_bytes"));
	run_free(&r);
	ASSERT_EQ(0, daoctl(&r, false, "status", NULL));
	EXPECT_NE(NULL, strstr(r.out.buf, "\nnode limit:      64.0M\n"));
	echo_output("daoctl status (after daoctl limit 64M)", r.out.buf);
	run_free(&r);

	/* Reading the limit needs no privilege. */
	snprintf(want, sizeof(want), "%llu (", 64 * MiB);
	ASSERT_EQ(0, daoctl(&r, true, "limit", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(r.out.buf, strstr(r.out.buf, want)) TH_LOG("got: %s", r.out.buf);
	echo_output("daoctl limit as uid 65534", r.out.buf);
	run_free(&r);

	/* Setting it does: a reason, status 1, and the limit stays. */
	ASSERT_EQ(0, daoctl(&r, true, "limit", "32M", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("", r.out.buf);
	EXPECT_NE(NULL, strstr(r.err.buf, "daoctl: permission denied")) TH_LOG("got: %s", r.err.buf);
	echo_output("daoctl limit 32M as uid 65534", r.err.buf);
	run_free(&r);
	EXPECT_EQ(64, param_get("max_pinned_mb"));
	ASSERT_EQ(0, daoctl(&r, false, "status", "--json", NULL));
	EXPECT_EQ(64 * MiB, u64_at(r.out.buf, "module.limit_bytes"));
	run_free(&r);

	/* Restored through daoctl, as an operator would. */
	snprintf(mb0, sizeof(mb0), "%lldM", self->mb0);
	ASSERT_EQ(0, daoctl(&r, false, "limit", mb0, NULL));
	EXPECT_EQ(0, r.status);
	run_free(&r);
	EXPECT_EQ(self->mb0, param_get("max_pinned_mb"));
}

TEST_HARNESS_MAIN
