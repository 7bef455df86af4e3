/* SPDX-License-Identifier: MIT */
/*
 * soak.c - dao under load on one node for a set time (TAP).
 *
 * Eight processes with four contexts each (two on the process's shared
 * device, two private) run random programs (tests/unit/random_program.h,
 * buffers up to 128 KiB, so that host copies of 64 KiB and more are pinned
 * through /dev/dao where the module is loaded), every read checked byte for
 * byte against the plain-memory reference. `daoctl top` runs on a pseudo
 * terminal the whole time; every few seconds one process is killed with
 * SIGKILL, reaped, and `daoctl ps --json` and `daoctl status --json` are
 * read at once, then a new process takes its place.
 *
 * Checked: no read differs from the reference and no call fails; every
 * process ends as it was meant to (killed, or exited 0 when told to stop);
 * `daoctl ps` never lists a process that has been reaped (its documented
 * staleness for read commands is none: each one drops the segments of dead
 * processes); `top` never shows one after the frame it was drawing when the
 * process died (one refresh); with the module loaded, after every kill the
 * module counts no more processes than are alive, and when all have ended
 * it holds no pinned byte and no process record. Those two need the soak
 * to be the node's only user of /dev/dao: the VM suite's build says so
 * (DAO_SOAK_SOLE_USER); elsewhere (make check, beside other tests) they
 * are skipped. The figures (programs,
 * kernels, bytes checked, kills, frames) are printed for
 * Documentation/kmod.md.
 *
 * Environment: DAO_SOAK_SECONDS (default 10), DAO_SOAK_KILL_MS (between
 * kills, default 2000), DAO_TEST_SEED (replay), DAOCTL (default: daoctl on
 * PATH).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "json.h"
#include "random_program.h"

#define PROCS 8
#define CONTEXTS 4
#define SHARED_CONTEXTS 2 /* of the four, on the process's shared device */
#define SCALE 16          /* buffers up to 128 KiB */
/* The shared device's budget: the largest kernel of any program fits. */
#define SHARED_BUDGET (MAX_OPERANDS * MAX_BUFFER * SCALE + MAX_BUFFER * SCALE)
#define STOP_GRACE_S 120  /* for a process told to stop to finish its program */
#define TOP_ROWS 200

#ifdef DAO_SOAK_SOLE_USER
static const bool sole_user = true;
#else
static const bool sole_user = false;
#endif

/* One process slot; a restarted process adds to its predecessor's. */
struct tally {
	atomic_llong programs, kernels, bytes, mismatches, failures;
	atomic_int why_taken;
	char why[512];
};

struct shared {
	atomic_int stop;
	struct tally t[PROCS];
};

static struct shared *sh;

/* ---------------------------------------------------------------- a job */

struct job_thread {
	int slot, index;
	uint64_t seed;
	dao_policy shared_policy;
	uint32_t shared_lookahead;
};

static void note_failure(struct tally *t, const char *fmt, const char *a, const char *b)
{
	if (!atomic_exchange(&t->why_taken, 1))
		snprintf(t->why, sizeof(t->why), fmt, a, b);
}

static void *job_thread_main(void *arg)
{
	static const dao_policy policies[] = { DAO_POLICY_DAO, DAO_POLICY_BELADY, DAO_POLICY_LRU,
					       DAO_POLICY_FIFO };
	static const unsigned fractions[] = { 5, 25, 100 };
	struct job_thread *jt = arg;
	struct tally *t = &sh->t[jt->slot];
	struct program *p = malloc(sizeof(*p));
	uint64_t rng = jt->seed;

	if (!p)
		tap_bail("out of memory");
	for (uint64_t i = 0; !atomic_load(&sh->stop); i++) {
		uint64_t pseed = mix64(jt->seed ^ mix64(i));
		unsigned char *want, *got;
		struct run_result r;
		struct run_cfg rc;
		char where[128];

		generate(p, pseed, SCALE);
		want = malloc(p->read_bytes + 1);
		got = malloc(p->read_bytes + 1);
		if (!want || !got)
			tap_bail("out of memory");
		run_reference(p, want);
		if (jt->index < SHARED_CONTEXTS) {
			/* The process's device: every context asks for the same. */
			rc = (struct run_cfg){ .policy = jt->shared_policy, .budget = SHARED_BUDGET,
					       .lookahead = jt->shared_lookahead };
		} else {
			rc = (struct run_cfg){
				.policy = policies[test_rng_next(&rng) % 4],
				.budget = budget_for(p, fractions[test_rng_next(&rng) % 3]),
				.lookahead = (uint32_t)test_rng_range(&rng, 1, 64),
				.flags = DAO_CONFIG_PRIVATE |
					 (test_rng_chance(&rng, 1, 2) ? DAO_CONFIG_DETERMINISTIC : 0),
			};
		}
		snprintf(where, sizeof(where), "seed %" PRIu64 " (scale %d), context %d", pseed, SCALE,
			 jt->index);
		if (!run_dao(p, &rc, got, &r)) {
			atomic_fetch_add(&t->failures, 1);
			note_failure(t, "%s: %s", where, r.why);
		} else if (memcmp(want, got, p->read_bytes)) {
			describe_mismatch(p, want, got, r.why, sizeof(r.why));
			atomic_fetch_add(&t->mismatches, 1);
			note_failure(t, "%s: %s", where, r.why);
		}
		atomic_fetch_add(&t->programs, 1);
		atomic_fetch_add(&t->kernels, (long long)p->nkernels);
		atomic_fetch_add(&t->bytes, (long long)p->read_bytes);
		free(want);
		free(got);
	}
	free(p);
	return NULL;
}

/* A process of the soak: CONTEXTS threads, a context each at a time. */
static void job_main(int slot, uint64_t seed)
{
	struct job_thread jt[CONTEXTS];
	pthread_t th[CONTEXTS];
	char name[32];

	snprintf(name, sizeof(name), "soak-%d", slot);
	setenv("DAO_JOB", name, 1);
	/* The load yields to the observers (daoctl, the supervisor reading
	 * top's frames as they come), whose timing the checks rely on. */
	if (setpriority(PRIO_PROCESS, 0, 10))
		_exit(4);
	for (int i = 0; i < CONTEXTS; i++) {
		jt[i] = (struct job_thread){
			.slot = slot,
			.index = i,
			.seed = mix64(seed + (uint64_t)i),
			.shared_policy = (dao_policy)(DAO_POLICY_DAO + seed % 4),
			.shared_lookahead = (uint32_t)(1 + (seed >> 8) % 64),
		};
		if (pthread_create(&th[i], NULL, job_thread_main, &jt[i]))
			_exit(3);
	}
	for (int i = 0; i < CONTEXTS; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

static pid_t job_start(int slot, uint64_t seed)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		job_main(slot, seed);
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	return pid;
}

/* ------------------------------------------------------- who has died */

#define MAX_DEAD 4096

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t live[PROCS];         /* under mu */
static struct dead {
	pid_t pid;
	long frame;               /* top frames begun before it was reaped */
	int shown_after;          /* frames begun after that still showing it */
} dead[MAX_DEAD];
static int ndead;                 /* under mu */
static long frames;               /* under mu */
static long frames_with_jobs;     /* under mu */
static int top_violations;        /* under mu */
static int worst_after;           /* under mu */

static bool ours_alive(pid_t pid)
{
	for (int i = 0; i < PROCS; i++)
		if (live[i] == pid)
			return true;
	return false;
}

static struct dead *find_dead(pid_t pid)
{
	for (int i = ndead - 1; i >= 0; i--)
		if (dead[i].pid == pid)
			return &dead[i];
	return NULL;
}

/* ----------------------------------------------------- daoctl top, read */

static const char *daoctl_path(void)
{
	const char *p = getenv("DAOCTL");

	return p && *p ? p : "daoctl";
}

/* One frame of top: the pid at the start of each process line. */
static void top_frame(char *text)
{
	char *save;
	bool any = false;

	pthread_mutex_lock(&mu);
	frames++;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char clean[256];
		size_t n = 0;
		unsigned pid;
		char job[32];
		struct dead *d;

		/* Without the escape sequences. */
		for (char *c = line; *c && n + 1 < sizeof(clean); c++) {
			if (*c == '\033') {
				while (c[1] && !((c[1] >= 'A' && c[1] <= 'Z') || (c[1] >= 'a' && c[1] <= 'z')))
					c++;
				if (c[1])
					c++;
				continue;
			}
			clean[n++] = *c;
		}
		clean[n] = '\0';
		if (sscanf(clean, "%u %31s", &pid, job) != 2 || strncmp(job, "soak-", 5))
			continue;
		if (ours_alive((pid_t)pid)) {
			any = true;
			continue;
		}
		/*
		 * frames is this frame's number. d->frame frames were read
		 * before the process was reaped; the next one may have been
		 * scanned before too (the refresh in flight). Any later one
		 * showing it is stale.
		 */
		d = find_dead((pid_t)pid);
		if (d && frames > d->frame) {
			d->shown_after++;
			if (d->shown_after > worst_after)
				worst_after = d->shown_after;
			if (frames > d->frame + 1)
				top_violations++;
		}
	}
	frames_with_jobs += any;
	pthread_mutex_unlock(&mu);
}

struct top {
	pid_t pid;
	int master;
	pthread_t reader;
};

static void *top_reader(void *arg)
{
	struct top *tp = arg;
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		tap_bail("out of memory");
	for (;;) {
		ssize_t n = read(tp->master, buf + len, cap - 1 - len);
		char *start, *next;

		if (n <= 0)
			break; /* EIO once top has exited */
		len += (size_t)n;
		buf[len] = '\0';
		/* A frame begins with the cursor going home and ends by
		 * clearing the rest of the screen: each is taken as soon as
		 * it is whole, so the count of frames read is never behind. */
		start = strstr(buf, "\033[H");
		while (start && (next = strstr(start + 3, "\033[J"))) {
			*next = '\0';
			top_frame(start + 3);
			*next = '\033';
			start = strstr(next + 3, "\033[H");
		}
		if (!start) /* no frame begun: keep what may be half an escape */
			start = buf + (len > 2 ? len - 2 : 0);
		len -= (size_t)(start - buf);
		memmove(buf, start, len + 1);
		if (len > cap / 2) /* a frame larger than any top draws */
			len = 0;
	}
	free(buf);
	return NULL;
}

static bool top_start(struct top *tp)
{
	struct winsize ws = { .ws_row = TOP_ROWS, .ws_col = 200 };

	fflush(stdout);
	tp->pid = forkpty(&tp->master, NULL, NULL, &ws);
	if (tp->pid < 0)
		return false;
	if (tp->pid == 0) {
		execlp(daoctl_path(), "daoctl", "top", (char *)NULL);
		_exit(127);
	}
	return pthread_create(&tp->reader, NULL, top_reader, tp) == 0;
}

/* q, as a person would; true when top ended by itself with status 0. */
static bool top_stop(struct top *tp)
{
	int status = -1;

	if (write(tp->master, "q", 1) != 1)
		kill(tp->pid, SIGTERM);
	for (int i = 0; i < 100 && waitpid(tp->pid, &status, WNOHANG) == 0; i++)
		poll(NULL, 0, 100);
	if (status == -1) {
		kill(tp->pid, SIGKILL);
		waitpid(tp->pid, &status, 0);
	}
	pthread_join(tp->reader, NULL);
	close(tp->master);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ------------------------------------------- daoctl ps/status --json */

/* What `daoctl ARG --json` printed, NUL-terminated; NULL when it failed. */
static char *daoctl_json(const char *arg)
{
	size_t cap = 1 << 16, len = 0;
	char *out = malloc(cap);
	int p[2], status;
	pid_t pid;
	ssize_t n;

	if (!out || pipe(p))
		tap_bail("out of memory or pipes");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execlp(daoctl_path(), "daoctl", arg, "--json", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + len, cap - 1 - len)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap) {
			char *bigger = realloc(out, cap * 2);

			if (!bigger)
				tap_bail("out of memory");
			out = bigger;
			cap *= 2;
		}
	}
	close(p[0]);
	out[len] = '\0';
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    !json_valid(out)) {
		free(out);
		return NULL;
	}
	return out;
}

struct ps_check {
	long runs, failed;
	long dead_listed; /* a reaped process of ours in the list */
	long module_over; /* the module counted more processes than are alive */
	bool module;
	uint64_t module_pinned, module_procs;
	uint64_t most_pinned; /* the most the module held at a read */
};

/* ps and status, read now: nothing dead may show. */
static void ps_check(struct ps_check *c, int alive)
{
	char *ps = daoctl_json("ps"), *st = daoctl_json("status");
	const char *procs = ps ? json_get(ps, "processes") : NULL;

	c->runs++;
	if (!procs || !st) {
		c->failed++;
		free(ps);
		free(st);
		return;
	}
	pthread_mutex_lock(&mu);
	for (size_t i = 0; json_at(procs, i); i++) {
		uint64_t pid;

		if (json_u64(json_get(json_at(procs, i), "pid"), &pid) && !ours_alive((pid_t)pid) &&
		    find_dead((pid_t)pid))
			c->dead_listed++;
	}
	pthread_mutex_unlock(&mu);
	c->module = json_is(json_path(st, "module.loaded"), "true");
	if (c->module) {
		if (!json_u64(json_path(st, "module.pinned_bytes"), &c->module_pinned) ||
		    !json_u64(json_path(st, "module.processes"), &c->module_procs))
			c->failed++;
		else if (c->module_procs > (uint64_t)alive)
			c->module_over++;
		if (c->module_pinned > c->most_pinned)
			c->most_pinned = c->module_pinned;
	}
	free(ps);
	free(st);
}

/* -------------------------------------------------------------- the soak */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pause_ms(long long ms)
{
	if (ms > 0)
		poll(NULL, 0, (int)ms);
}

int main(void)
{
	uint64_t seconds, kill_ms, seed, rng;
	long long start, end, next_kill, programs = 0, kernels = 0, bytes = 0, mismatches = 0;
	long long failures = 0;
	int kills = 0, bad_ends = 0, bad_kills = 0;
	struct ps_check pc = { 0 };
	struct top tp;
	bool top_ok, top_quit;

	test_clear_env();
	seconds = test_env_u64("DAO_SOAK_SECONDS", 10);
	kill_ms = test_env_u64("DAO_SOAK_KILL_MS", 2000);
	seed = test_seed();
	rng = seed;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	memset(sh, 0, sizeof(*sh));
	signal(SIGPIPE, SIG_IGN);

	top_ok = top_start(&tp);
	start = now_ms();
	pthread_mutex_lock(&mu);
	for (int i = 0; i < PROCS; i++)
		live[i] = job_start(i, test_rng_next(&rng));
	pthread_mutex_unlock(&mu);
	end = start + (long long)seconds * 1000;
	next_kill = start + (long long)kill_ms;
	while (next_kill < end) {
		int slot = (int)(test_rng_next(&rng) % PROCS), status;
		pid_t victim;

		pause_ms(next_kill - now_ms());
		pthread_mutex_lock(&mu);
		victim = live[slot];
		pthread_mutex_unlock(&mu);
		kill(victim, SIGKILL);
		if (waitpid(victim, &status, 0) != victim || !WIFSIGNALED(status) ||
		    WTERMSIG(status) != SIGKILL)
			bad_kills++;
		pthread_mutex_lock(&mu);
		live[slot] = 0;
		if (ndead < MAX_DEAD)
			dead[ndead++] = (struct dead){ .pid = victim, .frame = frames };
		pthread_mutex_unlock(&mu);
		kills++;
		ps_check(&pc, PROCS - 1);
		pthread_mutex_lock(&mu);
		live[slot] = job_start(slot, test_rng_next(&rng));
		pthread_mutex_unlock(&mu);
		next_kill += (long long)kill_ms;
	}
	pause_ms(end - now_ms());

	/* Stop: each process finishes the programs it is running. */
	atomic_store(&sh->stop, 1);
	for (int i = 0; i < PROCS; i++) {
		long long give_up = now_ms() + STOP_GRACE_S * 1000;
		int status = 0;
		pid_t got;

		while ((got = waitpid(live[i], &status, WNOHANG)) == 0 && now_ms() < give_up)
			pause_ms(50);
		if (got != live[i]) {
			kill(live[i], SIGKILL);
			waitpid(live[i], &status, 0);
			bad_ends++;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			bad_ends++;
		}
		pthread_mutex_lock(&mu);
		if (ndead < MAX_DEAD)
			dead[ndead++] = (struct dead){ .pid = live[i], .frame = frames };
		live[i] = 0;
		pthread_mutex_unlock(&mu);
	}
	ps_check(&pc, 0);
	/* Two more refreshes: the frames that must no longer show them. */
	pause_ms(2500);
	top_quit = top_ok && top_stop(&tp);

	for (int i = 0; i < PROCS; i++) {
		programs += sh->t[i].programs;
		kernels += sh->t[i].kernels;
		bytes += sh->t[i].bytes;
		mismatches += sh->t[i].mismatches;
		failures += sh->t[i].failures;
	}
	tap_diag("soak: %" PRIu64 " s, %d processes x %d contexts, %lld programs, %lld kernels, "
		 "%lld bytes read and checked, %d kills, %ld daoctl top frames, %ld ps/status reads",
		 seconds, PROCS, CONTEXTS, programs, kernels, bytes, kills, frames, pc.runs);
	tap_ok(programs > 0 && mismatches == 0, "%lld programs: every read matches the reference",
	       programs);
	for (int i = 0; i < PROCS; i++)
		if (sh->t[i].why_taken)
			tap_diag("process slot %d: %s", i, sh->t[i].why);
	tap_ok(failures == 0, "no call failed (%lld did)", failures);
	tap_ok(bad_kills == 0 && bad_ends == 0,
	       "%d processes killed by SIGKILL, the last %d exited 0 when told to stop "
	       "(%d kills and %d ends otherwise)",
	       kills, PROCS, bad_kills, bad_ends);
	tap_ok(pc.failed == 0 && pc.dead_listed == 0,
	       "daoctl ps never listed a reaped process (%ld reads, %ld failed, %ld listed one)",
	       pc.runs, pc.failed, pc.dead_listed);
	if (pc.module && sole_user) {
		tap_ok(pc.module_over == 0,
		       "the module never counted more processes than were alive (%ld times it did)",
		       pc.module_over);
		/* A figure, not a check: a read after a kill may find no host
		 * copy of 64 KiB or more alive (on the debug kernel, slow
		 * under TCG, five reads found none). */
		tap_diag("the module held at most %" PRIu64 " pinned bytes at a read after a kill",
			 pc.most_pinned);
		tap_ok(pc.module_pinned == 0 && pc.module_procs == 0,
		       "when all ended the module holds nothing (%" PRIu64 " bytes pinned, %" PRIu64
		       " processes)",
		       pc.module_pinned, pc.module_procs);
	} else {
		const char *why = !pc.module ? "the module is not loaded"
					     : "other users of /dev/dao may run beside the soak";

		tap_ok(1, "module accounting # SKIP %s", why);
		tap_ok(1, "module back to zero # SKIP %s", why);
	}
	tap_ok(top_ok && top_quit && frames_with_jobs > 0,
	       "daoctl top ran on a terminal, showed the jobs (%ld of %ld frames) and quit on q",
	       frames_with_jobs, frames);
	tap_ok(top_violations == 0,
	       "daoctl top showed no process after the frame it died during (%d times it did; "
	       "frames after death at most %d)",
	       top_violations, worst_after);
	tap_plan_done();
	return tap_exit();
}
