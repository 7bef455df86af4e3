// SPDX-License-Identifier: GPL-2.0
/*
 * libdao_host_budget.c - jobs that ask for more host memory than the node
 * has, on the VM (a small node without swap, the honest case): each gets a
 * status, from dao_open or from the create that passes what the node can
 * give (Documentation/libdao.md, "The host budget and the node"), keeps
 * every byte it wrote, still takes a little after it was refused, closes
 * cleanly, and the OOM killer never runs (oom_kill in /proc/vmstat, and in
 * the cgroup's memory.events, where the cgroup's limit is never even
 * reached: max). Without the rule each of these jobs writes buffers until
 * the kernel kills it; without the cgroup's reserve the job in the cgroup
 * is killed after its refusal. After its refusal each job also has the
 * kernel collapse 2 MiB of its own memory into a huge page (MADV_COLLAPSE,
 * what khugepaged does to any job at any time; khugepaged itself is paused
 * for the cgroup's job): the new page is charged beside the small ones it
 * replaces, and without a huge page in the cgroup's reserve that charge
 * meets the cgroup's limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dao.h>

#include "kselftest_harness.h"
#include "util.h"

#define BUF_BYTES MiB
/* What a job that was just refused still takes (an error path, a last
 * write-out): half of the kernel's reserve for a node of 64 MiB (1 MiB),
 * which the cgroup keeps back beside a huge page. */
#define LATE_BYTES (MiB / 2)
#define MAX_BUFS 16384 /* 16 GiB of buffers: more than any VM here has */
#define HUGE_BYTES (2 * MiB) /* x86-64's PMD huge page */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1; glibc 2.36's headers lack it */
#endif

/* What a job did, in memory shared with the test. */
struct fill {
	int open_status;
	int stop_status;     /* the create that stopped it, DAO_OK if none did */
	int write_status;    /* first failed dao_write, DAO_OK if none */
	int close_status;
	uint64_t host_budget; /* dao_info's */
	uint64_t buffers;     /* created and written */
	uint64_t bad;         /* buffers read back wrong */
	int collapse_errno;   /* of MADV_COLLAPSE after the refusal: 0 collapsed, -1 not tried */
};

static long long meminfo_bytes(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10) * 1024;
			break;
		}
	fclose(f);
	return v;
}

/*
 * At most what libdao leaves the kernel beyond MemAvailable
 * (Documentation/libdao.md, "What MemAvailable counts that a job cannot
 * take"): every zone's largest watermark boost, a pageblock at least, and
 * all of the reclaimable slab. Read here on its own, not through libdao.
 */
static long long kernel_reserve_bytes(void)
{
	long long factor = 0, boost = 0, sum = 0, v, page = (long long)sysconf(_SC_PAGESIZE);
	long long slab = meminfo_bytes("KReclaimable"), pageblock = meminfo_bytes("Hugepagesize");
	char line[256];
	FILE *f = fopen("/proc/sys/vm/watermark_boost_factor", "r");

	if (f) {
		if (fscanf(f, "%lld", &factor) != 1)
			factor = 0;
		fclose(f);
	}
	f = factor > 0 ? fopen("/proc/zoneinfo", "r") : NULL;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " boost %lld", &v) == 1) {
			boost = v;
		} else if (sscanf(line, " high %lld", &v) == 1) {
			long long most = (v - boost) * factor / 10000 * page;

			sum += most > pageblock ? most : pageblock;
			boost = 0;
		}
	}
	if (f)
		fclose(f);
	return sum + (slab > 0 ? slab : 0);
}

static void pattern(uint32_t *w, uint64_t index)
{
	for (size_t i = 0; i < BUF_BYTES / sizeof(*w); i++)
		w[i] = (uint32_t)(index * 2654435761u + i * 40503u);
}

/* Transparent huge pages on (always, or madvise): khugepaged runs. */
static bool thp_on(void)
{
	char line[64] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	return strchr(line, '[') && !strstr(line, "[never]");
}

/*
 * HUGE_BYTES of the job's own memory, aligned to a huge page and kept in
 * small pages until it is collapsed (with transparent huge pages always
 * on, a first touch would fault a huge page at once). A kernel without
 * them refuses the advice (EINVAL) and has small pages only anyway.
 */
static char *huge_region(void)
{
	char *p = mmap(NULL, 2 * HUGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	char *at;

	if (p == MAP_FAILED)
		return NULL;
	at = (char *)(((uintptr_t)p + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
	if (thp_on() && madvise(at, HUGE_BYTES, MADV_NOHUGEPAGE))
		return NULL;
	return at;
}

/*
 * Creates and writes buffers of BUF_BYTES until a create fails or the host
 * budget is used, takes LATE_BYTES more as a refused job would, then reads
 * every one back. host_budget 0: the default.
 */
static void fill_job(uint64_t host_budget, struct fill *out)
{
	static dao_buf bufs[MAX_BUFS];
	uint32_t *scratch = malloc(BUF_BYTES), *back = malloc(BUF_BYTES);
	char *late, *huge = huge_region();
	dao_config cfg;
	dao_info info;
	dao_ctx ctx;

	memset(out, 0, sizeof(*out));
	out->open_status = -1;
	out->collapse_errno = -1; /* until tried */
	if (!scratch || !back || !huge)
		return;
	/*
	 * The job's own memory is taken before dao_open: libdao sees memory
	 * taken outside it at its next reading only (Documentation/libdao.md),
	 * and a read buffer first touched after the last create once took a
	 * MiB the cgroup no longer had (its OOM killer ran, a CI run failed).
	 * Not with zeros: the compiler turns malloc and a memset to 0 into
	 * calloc, which touches nothing (a later CI run met the OOM killer so,
	 * with 356 KiB left beyond the cgroup's reserve).
	 */
	memset(scratch, 0x5a, BUF_BYTES);
	memset(back, 0xa5, BUF_BYTES);
	memset(huge, 0x3c, HUGE_BYTES);
	__asm__ volatile("" : : "r"(scratch), "r"(back), "r"(huge) : "memory");
	dao_config_init(&cfg);
	cfg.backend = DAO_BACKEND_HOST;
	cfg.flags = DAO_CONFIG_PRIVATE;
	cfg.device_budget = BUF_BYTES;
	cfg.host_budget = host_budget;
	cfg.log_level = DAO_LOG_ERROR;
	out->open_status = dao_open(&cfg, &ctx);
	if (out->open_status != DAO_OK)
		return;
	if (dao_info_get(ctx, &info) == DAO_OK)
		out->host_budget = info.host_budget;
	for (uint64_t i = 0; i < MAX_BUFS; i++) {
		dao_status st = dao_buffer_create(ctx, BUF_BYTES, &bufs[i]);

		if (st != DAO_OK) {
			out->stop_status = st;
			break;
		}
		pattern(scratch, i);
		st = dao_write(ctx, bufs[i], 0, scratch, BUF_BYTES);
		if (st != DAO_OK && !out->write_status)
			out->write_status = st;
		out->buffers++;
	}
	late = malloc(LATE_BYTES);
	if (late)
		memset(late, 0x5a, LATE_BYTES);
	/* Touched for real: a store nothing reads must not be optimized away. */
	__asm__ volatile("" : : "r"(late) : "memory");
	/* The kernel makes a huge page of the job's own memory, as khugepaged
	 * does where transparent huge pages are on. */
	if (thp_on())
		out->collapse_errno = madvise(huge, HUGE_BYTES, MADV_HUGEPAGE) ||
					      madvise(huge, HUGE_BYTES, MADV_COLLAPSE)
					      ? errno
					      : 0;
	for (uint64_t i = 0; i < out->buffers; i++) {
		pattern(scratch, i);
		if (dao_read(ctx, bufs[i], 0, back, BUF_BYTES) != DAO_OK ||
		    memcmp(back, scratch, BUF_BYTES))
			out->bad++;
	}
	out->close_status = dao_close(ctx, NULL);
	free(late);
}

/* Runs fill_job in a child (so an OOM kill is the child's, and shows). */
static int run_fill(uint64_t host_budget, struct fill *out, const char *cgroup_procs)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (cgroup_procs) {
			char me[16];
			int fd = open(cgroup_procs, O_WRONLY);

			snprintf(me, sizeof(me), "%d", getpid());
			if (fd < 0 || write(fd, me, strlen(me)) < 0)
				_exit(3);
			close(fd);
		}
		fill_job(host_budget, out);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

static struct fill *shared_fill(void)
{
	void *p = mmap(NULL, sizeof(struct fill), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* What the job beside the neighbour may fill: enough to matter, little
 * enough to write in seconds under TCG. */
#define LEFT_BYTES (128 * MiB)

FIXTURE(node)
{
	int unused;
};

FIXTURE_SETUP(node)
{
}

FIXTURE_TEARDOWN(node)
{
}

TEST_F_TIMEOUT(node, budget_beyond_the_node_fails_at_open, 300)
{
	long long total = meminfo_bytes("MemTotal"), oom0 = vmstat_get("oom_kill");
	struct fill *f = shared_fill();

	ASSERT_NE(NULL, f);
	ASSERT_LT(0, total);
	ASSERT_LE(0, oom0);
	EXPECT_EQ(0, run_fill(2 * (uint64_t)total, f, NULL));
	EXPECT_EQ(DAO_ERR_CONFIG, f->open_status);
	EXPECT_EQ(0, f->buffers);
	EXPECT_EQ(oom0, vmstat_get("oom_kill"));
}

/* Holds bytes of memory, touched, until killed. */
static pid_t start_neighbour(uint64_t bytes)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (m == MAP_FAILED)
			_exit(1);
		memset(m, 0x33, bytes);
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return pid;
}

TEST_F_TIMEOUT(node, job_beside_a_neighbour_stops_at_what_is_left, 300)
{
	long long oom0 = vmstat_get("oom_kill"), avail = meminfo_bytes("MemAvailable");
	long long reserve = kernel_reserve_bytes();
	struct fill *f = shared_fill();
	pid_t neighbour;
	int status;

	ASSERT_NE(NULL, f);
	ASSERT_LE(0, oom0);
	ASSERT_LT(2 * LEFT_BYTES + reserve, avail);
	/* The neighbour takes all but LEFT_BYTES of what the node has, past
	 * the kernel's reserve. */
	neighbour = start_neighbour((uint64_t)(avail - reserve) - LEFT_BYTES);
	ASSERT_LT(0, neighbour);
	avail = meminfo_bytes("MemAvailable");
	reserve = kernel_reserve_bytes();
	TH_LOG("MemTotal %lld MiB, available beside the neighbour %lld MiB, of which the kernel's "
	       "reserve at most %lld MiB",
	       meminfo_bytes("MemTotal") >> 20, avail >> 20, reserve >> 20);
	/* The default budget: all the node could ever give, far more than is left. */
	EXPECT_EQ(0, run_fill(0, f, NULL));
	TH_LOG("the job wrote %llu MiB before a create failed with %d",
	       (unsigned long long)f->buffers, f->stop_status);
	EXPECT_EQ(DAO_OK, f->open_status);
	EXPECT_EQ(DAO_ERR_HOST_BUDGET, f->stop_status);
	EXPECT_EQ(DAO_OK, f->write_status);
	EXPECT_EQ(0, f->bad);
	EXPECT_EQ(DAO_OK, f->close_status);
	/* It used the node, not a fraction of it: at least half of what was
	 * left past the kernel's reserve. */
	EXPECT_LE((uint64_t)(avail - reserve) / 2, f->buffers * BUF_BYTES);
	EXPECT_EQ(oom0, vmstat_get("oom_kill"));
	/* The neighbour is untouched: alive, not a zombie. */
	EXPECT_EQ(0, waitpid(neighbour, &status, WNOHANG));
	kill(neighbour, SIGKILL);
	waitpid(neighbour, &status, 0);
}

static char cg_dir[64];

static long long memory_events(const char *key)
{
	char path[128], line[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/job/memory.events", cg_dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ' ')
			v = atoll(line + strlen(key) + 1);
	fclose(f);
	return v;
}

/* A memory cgroup "job" limited to limit bytes, mounted where libdao must find it. */
static int cg_setup(uint64_t limit)
{
	char path[128], value[32];
	int ret = cg_job_setup(cg_dir, sizeof(cg_dir), "host-budget-cg");

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/job/memory.max", cg_dir);
	snprintf(value, sizeof(value), "%llu", (unsigned long long)limit);
	return file_write(path, value);
}

#define KHUGEPAGED_SLEEP "/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs"

/*
 * Pauses khugepaged (a scan a day), saving its pause in old: the job's
 * collapse after its refusal is then the one collapse charged to its
 * cgroup, at the moment the test chooses. A collapse of khugepaged's at
 * the same time would need a second huge page beside it, which the
 * cgroup's reserve does not hold (khugepaged collapses one at a time).
 */
static void khugepaged_pause(char *old, size_t cap)
{
	FILE *f = fopen(KHUGEPAGED_SLEEP, "r");

	old[0] = '\0';
	if (!f)
		return;
	if (!fgets(old, (int)cap, f))
		old[0] = '\0';
	fclose(f);
	old[strcspn(old, "\n")] = '\0';
	if (old[0])
		file_write(KHUGEPAGED_SLEEP, "86400000");
}

TEST_F_TIMEOUT(node, job_in_a_memory_cgroup_stops_at_its_limit, 300)
{
	const uint64_t limit = 64 * MiB;
	long long oom0 = vmstat_get("oom_kill");
	struct fill *f = shared_fill();
	char procs[128], sleep_ms[32];
	int ret = cg_setup(limit);

	ASSERT_NE(NULL, f);
	if (ret) {
		cg_job_teardown(cg_dir);
		SKIP(return, "no memory cgroup (%s)", strerror(-ret));
	}
	snprintf(procs, sizeof(procs), "%s/job/cgroup.procs", cg_dir);

	/* Asking for more than the cgroup allows: refused at once. */
	EXPECT_EQ(0, run_fill(2 * limit, f, procs));
	EXPECT_EQ(DAO_ERR_CONFIG, f->open_status);

	/* The default budget is the cgroup's limit, and creates stop short of it. */
	khugepaged_pause(sleep_ms, sizeof(sleep_ms));
	EXPECT_EQ(0, run_fill(0, f, procs));
	if (sleep_ms[0])
		file_write(KHUGEPAGED_SLEEP, sleep_ms);
	TH_LOG("in a cgroup of %llu MiB: host budget %llu MiB, wrote %llu MiB, stopped by %d",
	       (unsigned long long)(limit >> 20), (unsigned long long)(f->host_budget >> 20),
	       (unsigned long long)f->buffers, f->stop_status);
	EXPECT_EQ(DAO_OK, f->open_status);
	EXPECT_EQ(limit, f->host_budget);
	EXPECT_EQ(DAO_ERR_HOST_BUDGET, f->stop_status);
	EXPECT_EQ(DAO_OK, f->write_status);
	EXPECT_EQ(0, f->bad);
	EXPECT_EQ(DAO_OK, f->close_status);
	EXPECT_LE(limit / 2, f->buffers * BUF_BYTES);
	/* The collapse's charge (ENOMEM: no free huge page on the node; EINVAL:
	 * a kernel before 6.1) is in memory.events below. */
	TH_LOG("the job's collapse of 2 MiB after its refusal: %s",
	       f->collapse_errno < 0 ? "not tried (no transparent huge pages, or no job)"
	       : f->collapse_errno   ? strerror(f->collapse_errno)
				     : "done");
	/* Never pressed to its limit: no reclaim, let alone a kill. */
	EXPECT_EQ(0, memory_events("max"));
	EXPECT_EQ(0, memory_events("oom_kill"));
	EXPECT_EQ(oom0, vmstat_get("oom_kill"));
	cg_job_teardown(cg_dir);
}

TEST_HARNESS_MAIN
