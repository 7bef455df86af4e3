/* SPDX-License-Identifier: MIT */
/*
 * test_node_memory.c - what the node can give a process (base/node_memory.c)
 * read from trees of files laid out as /proc and the cgroup file systems
 * are: physical memory, a cgroup v2 hierarchy (limits at every level, page
 * cache counted as free, the kernel's minimum reserve for a node of the
 * limit's size and, with transparent huge pages on, a huge page kept back,
 * mounted at its root or bound from inside it, or
 * not visible), v1's memory controller, strict overcommit, escaped mount
 * points; and the host budget rule on this machine (dao.h): a budget the
 * node could never give fails dao_open, a create that passes what it has
 * now fails with DAO_ERR_HOST_BUDGET, a backend without data is exempt.
 */
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>

#include "common.h"
#include "dao_sim.h"
#include "base/node_memory.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

static char root[PATH_MAX];

/* Writes root/path (making its directories) with the text. */
static void put(const char *path, const char *text)
{
	char full[PATH_MAX * 2];
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", root, path);
	for (char *p = full + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(full, 0700) && errno != EEXIST)
			tap_bail("mkdir %s: %s", full, strerror(errno));
		*p = '/';
	}
	f = fopen(full, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		tap_bail("writing %s failed", full);
}

/* A fresh tree with a meminfo of 1000 MiB, 600 MiB available. */
static void fresh_root(const char *name)
{
	char cmd[PATH_MAX * 2 + 32];

	snprintf(root, sizeof(root), "%s/dao-node-memory.%d/%s",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), name);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", root, root);
	if (system(cmd))
		tap_bail("%s failed", cmd);
	put("/proc/meminfo", "MemTotal:        1024000 kB\n"
			     "MemFree:          100000 kB\n"
			     "MemAvailable:     614400 kB\n"
			     "CommitLimit:      512000 kB\n"
			     "Committed_AS:     460800 kB\n");
	put("/proc/sys/vm/overcommit_memory", "0\n");
}

static struct node_memory read_root(void)
{
	struct node_memory nm;

	node_memory_read_at(root, &nm);
	return nm;
}

static void test_meminfo_only(void)
{
	struct node_memory nm;

	fresh_root("plain");
	nm = read_root();
	TAP_IS_U64(nm.capacity, 1000 * MiB, "no cgroup: capacity is MemTotal");
	TAP_IS_U64(nm.available, 600 * MiB, "available is MemAvailable");
	tap_ok(!strcmp(nm.capacity_by, "physical memory") && !strcmp(nm.available_by, "MemAvailable"),
	       "named as such (%s, %s)", nm.capacity_by, nm.available_by);

	put("/proc/sys/vm/overcommit_memory", "2\n");
	nm = read_root();
	TAP_IS_U64(nm.capacity, 500 * MiB, "strict overcommit: capacity is CommitLimit");
	TAP_IS_U64(nm.available, 50 * MiB, "available is CommitLimit less Committed_AS");
	tap_ok(!strcmp(nm.capacity_by, "commit limit"), "named (%s, %s)", nm.capacity_by,
	       nm.available_by);
	put("/proc/meminfo", "MemTotal: 1024000 kB\nMemAvailable: 614400 kB\n"
			     "CommitLimit: 512000 kB\nCommitted_AS: 612000 kB\n");
	nm = read_root();
	TAP_IS_U64(nm.available, 0, "committed past the limit: nothing available");
}

/* Two zones as Linux 6.1 prints them, the second boosted now. Pages of
 * this machine's size: the rule counts in pages. */
static void put_zoneinfo(uint64_t dma_high, uint64_t boost, uint64_t high_boosted)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "Node 0, zone      DMA\n"
		 "  per-node stats\n"
		 "      nr_inactive_anon 100\n"
		 "  pages free     3000\n"
		 "        boost    0\n"
		 "        min      20\n"
		 "        low      25\n"
		 "        high     %llu\n"
		 "        spanned  4095\n"
		 "        protection: (0, 1000, 1000, 1000)\n"
		 "Node 0, zone    DMA32\n"
		 "  pages free     50000\n"
		 "        boost    %llu\n"
		 "        min      %llu\n"
		 "        low      %llu\n"
		 "        high     %llu\n"
		 "  pagesets\n"
		 "    cpu: 0\n"
		 "              count: 10\n"
		 "              high:  378\n"
		 "Node 0, zone   Normal\n"
		 "  pages free     0\n"
		 "Node 0, zone  Movable\n",
		 (unsigned long long)dma_high, (unsigned long long)boost,
		 (unsigned long long)(1000 + boost), (unsigned long long)(1250 + boost),
		 (unsigned long long)high_boosted);
	put("/proc/zoneinfo", text);
}

#define MEMINFO_600 "MemTotal: 1024000 kB\nMemAvailable: 614400 kB\n"

/* With this boost factor (NULL: a kernel without the sysctl) and meminfo,
 * what is available. */
static struct node_memory boosted(const char *factor, const char *meminfo, uint64_t want,
				  const char *what)
{
	char path[PATH_MAX * 2];
	struct node_memory nm;

	snprintf(path, sizeof(path), "%s/proc/sys/vm/watermark_boost_factor", root);
	if (factor)
		put("/proc/sys/vm/watermark_boost_factor", factor);
	else
		unlink(path);
	put("/proc/meminfo", meminfo);
	nm = read_root();
	TAP_IS_U64(nm.available, want, what);
	return nm;
}

static void test_watermark_boost(void)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	/* 1.5x the zones' high watermarks (30 and 1500 pages). */
	uint64_t reserve = (45 + 2250) * page, pageblock = 2 * MiB;
	struct node_memory nm;

	fresh_root("boost");
	put_zoneinfo(30, 0, 1500);
	boosted(NULL, MEMINFO_600, 600 * MiB, "a kernel without watermark_boost_factor: MemAvailable");
	boosted("0\n", MEMINFO_600, 600 * MiB, "boosting turned off (factor 0): MemAvailable");
	nm = boosted("15000\n", MEMINFO_600, 600 * MiB - reserve,
		     "the default factor: MemAvailable less 1.5x every zone's high watermark");
	tap_ok(!strcmp(nm.available_by, "MemAvailable less watermark boost"), "named as such (%s)",
	       nm.available_by);
	put_zoneinfo(30, 700, 2200);
	boosted("15000\n", MEMINFO_600, 600 * MiB - reserve,
		"a zone boosted now: its high watermark less the boost it shows");
	boosted("15000\n", MEMINFO_600 "Hugepagesize: 2048 kB\n",
		600 * MiB - (45 * page > pageblock ? 45 * page : pageblock) -
			(2250 * page > pageblock ? 2250 * page : pageblock),
		"at least a pageblock (a huge page) a zone, where that is more");
	boosted("4000000\n", MEMINFO_600, 0, "a boost beyond MemAvailable: nothing available");

	/* Reclaimable slab: MemAvailable counted it but for the smaller of
	 * its half and the low watermarks (25 and 1250 pages). */
	nm = boosted("0\n", MEMINFO_600 "KReclaimable: 8192 kB\n",
		     600 * MiB - (8 * MiB - (4 * MiB < 1275 * page ? 4 * MiB : 1275 * page)),
		     "reclaimable slab: what MemAvailable counted of it is taken off");
	tap_ok(!strcmp(nm.available_by, "MemAvailable less reclaimable slab"), "named as such (%s)",
	       nm.available_by);
	nm = boosted("15000\n", MEMINFO_600 "SReclaimable: 65536 kB\n",
		     600 * MiB - reserve - (64 * MiB - (32 * MiB < 1275 * page ? 32 * MiB : 1275 * page)),
		     "before KReclaimable (Linux 4.20), SReclaimable; and the boost beside it");
	tap_ok(!strcmp(nm.available_by, "MemAvailable less watermark boost and reclaimable slab"),
	       "named as such (%s)", nm.available_by);
	put("/proc/zoneinfo", "garbage\n\n  high\nhigh 99999999999999999999999\n");
	nm = read_root();
	tap_ok(nm.available <= 600 * MiB, "a zoneinfo that makes no sense never adds memory");
}

/* A v2 hierarchy mounted at /sys/fs/cgroup, the process in /job/step. */
static void v2_tree(const char *mount_root, const char *cgroup_line)
{
	char mountinfo[512];

	put("/proc/self/cgroup", cgroup_line);
	snprintf(mountinfo, sizeof(mountinfo),
		 "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
		 "30 22 0:26 %s /sys/fs/cgroup rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate\n",
		 mount_root);
	put("/proc/self/mountinfo", mountinfo);
}

static void test_cgroup_v2(void)
{
	struct node_memory nm;

	fresh_root("v2");
	v2_tree("/", "0::/job/step\n");
	put("/sys/fs/cgroup/job/step/memory.max", "104857600\n");     /* 100 MiB */
	put("/sys/fs/cgroup/job/step/memory.current", "62914560\n");  /* 60 MiB */
	put("/sys/fs/cgroup/job/step/memory.stat",
	    "anon 40000000\nfile 30000000\nactive_file 10485760\ninactive_file 5242880\n"
	    "shmem 0\n");
	put("/sys/fs/cgroup/job/memory.max", "max\n");
	put("/sys/fs/cgroup/job/memory.current", "70000000\n");
	nm = read_root();
	TAP_IS_U64(nm.capacity, 100 * MiB, "v2: capacity is the cgroup's memory.max");
	/* int_sqrt(102400 KiB * 16) = 1280 KiB kept back. */
	TAP_IS_U64(nm.available, 55 * MiB - 1280 * KiB,
		   "available: max less current, page cache counted free, less the reserve");
	tap_ok(!strcmp(nm.capacity_by, "memory cgroup limit") &&
		       !strcmp(nm.available_by, "memory cgroup headroom less its reserve"),
	       "named (%s, %s)", nm.capacity_by, nm.available_by);

	/* The parent's limit binds the child too. */
	put("/sys/fs/cgroup/job/memory.max", "83886080\n"); /* 80 MiB */
	put("/sys/fs/cgroup/job/memory.current", "73400320\n"); /* 70 MiB */
	nm = read_root();
	TAP_IS_U64(nm.capacity, 80 * MiB, "a parent's lower limit is the capacity");
	/* int_sqrt(81920 * 16) = 1144 (1144^2 = 1308736 <= 1310720 < 1145^2). */
	TAP_IS_U64(nm.available, 10 * MiB - 1144 * KiB, "and its headroom what is available");

	put("/sys/fs/cgroup/job/step/memory.max", "max\n");
	put("/sys/fs/cgroup/job/memory.max", "max\n");
	nm = read_root();
	TAP_IS_U64(nm.capacity, 1000 * MiB, "no limit at any level: MemTotal");
	TAP_IS_U64(nm.available, 600 * MiB, "and MemAvailable");

	/* Above its limit (it was lowered), with no cache to give back. */
	put("/sys/fs/cgroup/job/step/memory.max", "52428800\n");
	put("/sys/fs/cgroup/job/step/memory.stat", "active_file 0\ninactive_file 0\n");
	nm = read_root();
	TAP_IS_U64(nm.available, 0, "usage over the limit: nothing available");

	/* Page cache larger than the limit: headroom never exceeds the limit. */
	put("/sys/fs/cgroup/job/step/memory.max", "104857600\n");
	put("/sys/fs/cgroup/job/step/memory.current", "104857600\n");
	put("/sys/fs/cgroup/job/step/memory.stat", "active_file 209715200\ninactive_file 0\n");
	nm = read_root();
	TAP_IS_U64(nm.available, 100 * MiB - 1280 * KiB, "headroom is at most the limit less its reserve");

	/* The reserve is the kernel's min_free_kbytes rule for a node of the
	 * limit's size: int_sqrt(KiB * 16) KiB, clamped to 128 KiB..256 MiB. */
	put("/sys/fs/cgroup/job/step/memory.max", "67108864\n"); /* 64 MiB */
	put("/sys/fs/cgroup/job/step/memory.current", "0\n");
	put("/sys/fs/cgroup/job/step/memory.stat", "active_file 0\ninactive_file 0\n");
	nm = read_root();
	TAP_IS_U64(nm.available, 63 * MiB, "a cgroup of 64 MiB keeps 1 MiB back");
	put("/sys/fs/cgroup/job/step/memory.max", "524288\n"); /* 512 KiB: sqrt gives 90 */
	nm = read_root();
	TAP_IS_U64(nm.available, 384 * KiB, "a tiny cgroup keeps the kernel's least, 128 KiB");
	put("/sys/fs/cgroup/job/step/memory.max", "70368744177664\n"); /* 64 TiB: 1 GiB */
	put("/sys/fs/cgroup/job/step/memory.current", "70368429604864\n"); /* 300 MiB left */
	nm = read_root();
	TAP_IS_U64(nm.available, 44 * MiB, "a huge cgroup keeps the kernel's most, 256 MiB");
	put("/sys/fs/cgroup/job/step/memory.max", "1048576\n");
	put("/sys/fs/cgroup/job/step/memory.current", "983040\n"); /* 64 KiB left */
	nm = read_root();
	TAP_IS_U64(nm.available, 0, "headroom below the reserve: nothing available");
}

static void test_cgroup_v2_views(void)
{
	struct node_memory nm;

	/* A container's view: the mount shows the hierarchy from /job down. */
	fresh_root("v2-bound");
	v2_tree("/job", "0::/job/step\n");
	put("/sys/fs/cgroup/step/memory.max", "209715200\n");
	put("/sys/fs/cgroup/step/memory.current", "0\n");
	put("/sys/fs/cgroup/memory.max", "104857600\n"); /* /job, the mount's root */
	put("/sys/fs/cgroup/memory.current", "0\n");
	nm = read_root();
	TAP_IS_U64(nm.capacity, 100 * MiB, "mount of a subtree: the levels under it are read");

	/* The process's cgroup is outside what is mounted: no cgroup bound. */
	fresh_root("v2-hidden");
	v2_tree("/other", "0::/job/step\n");
	put("/sys/fs/cgroup/step/memory.max", "1048576\n");
	put("/sys/fs/cgroup/step/memory.current", "0\n");
	nm = read_root();
	TAP_IS_U64(nm.capacity, 1000 * MiB, "cgroup not under the mount: MemTotal");

	/* A mount point with a blank, as mountinfo escapes it. */
	fresh_root("v2-escaped");
	put("/proc/self/cgroup", "0::/j\n");
	put("/proc/self/mountinfo", "30 22 0:26 / /cg\\040root rw - cgroup2 none rw\n");
	put("/cg root/j/memory.max", "10485760\n");
	put("/cg root/j/memory.current", "0\n");
	nm = read_root();
	TAP_IS_U64(nm.capacity, 10 * MiB, "escaped mount point (\\040)");

	/* Mounted at / (the cgroup file system is the whole root). */
	fresh_root("v2-slash");
	put("/proc/self/cgroup", "0::/j\n");
	put("/proc/self/mountinfo", "30 22 0:26 / / rw - cgroup2 none rw\n");
	put("/j/memory.max", "20971520\n");
	put("/j/memory.current", "0\n");
	nm = read_root();
	TAP_IS_U64(nm.capacity, 20 * MiB, "mounted at /");
}

/*
 * With transparent huge pages on, khugepaged may charge a huge page to the
 * cgroup beside the small pages it replaces: every level keeps one more
 * back, of the kernel's size for it.
 */
static void test_cgroup_thp(void)
{
	static const char *const on[] = { "[always] madvise never\n", "always [madvise] never\n" };
	struct node_memory nm;

	fresh_root("v2-thp");
	v2_tree("/", "0::/job/step\n");
	put("/sys/fs/cgroup/job/step/memory.max", "67108864\n"); /* 64 MiB */
	put("/sys/fs/cgroup/job/step/memory.current", "0\n");
	put("/sys/fs/cgroup/job/memory.max", "max\n");
	put("/sys/fs/cgroup/job/memory.current", "0\n");
	put("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "2097152\n");
	for (int i = 0; i < 2; i++) {
		put("/sys/kernel/mm/transparent_hugepage/enabled", on[i]);
		nm = read_root();
		TAP_IS_U64(nm.available, 61 * MiB,
			   i ? "THP madvise: a cgroup of 64 MiB keeps 1 MiB and a huge page of 2 MiB back"
			     : "THP always: a cgroup of 64 MiB keeps 1 MiB and a huge page of 2 MiB back");
	}
	put("/sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
	nm = read_root();
	TAP_IS_U64(nm.available, 63 * MiB, "THP never: no huge page kept back");
	put("/sys/kernel/mm/transparent_hugepage/enabled", "\n");
	nm = read_root();
	TAP_IS_U64(nm.available, 63 * MiB, "THP setting unreadable (no bracket): none kept back");

	/* The kernel's own size for it (arm64 with 64 KiB pages: 512 MiB). */
	put("/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
	put("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "33554432\n");
	nm = read_root();
	TAP_IS_U64(nm.available, 31 * MiB, "a huge page of 32 MiB: 64 MiB keeps 33 back");
	/* Before hpage_pmd_size (4.14): meminfo's Hugepagesize. */
	put("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "\n");
	put("/proc/meminfo", "MemTotal:        1024000 kB\n"
			     "MemAvailable:     614400 kB\n"
			     "Hugepagesize:       4096 kB\n");
	nm = read_root();
	TAP_IS_U64(nm.available, 59 * MiB, "no hpage_pmd_size: Hugepagesize (4 MiB) kept back");

	/* Every level with a limit keeps its own. */
	put("/sys/fs/cgroup/job/memory.max", "83886080\n"); /* 80 MiB */
	put("/sys/fs/cgroup/job/memory.current", "73400320\n"); /* 70 MiB */
	nm = read_root();
	/* int_sqrt(81920 * 16) = 1144 KiB and 4 MiB off the parent's 10 MiB. */
	TAP_IS_U64(nm.available, 6 * MiB - 1144 * KiB, "the parent keeps a huge page back too");

	/* Nonsense saturates: nothing available, never a wrap to plenty. */
	put("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "99999999999999999999999\n");
	nm = read_root();
	TAP_IS_U64(nm.available, 0, "a huge page size past any memory leaves nothing available");
}

static void test_cgroup_v1(void)
{
	struct node_memory nm;

	fresh_root("v1");
	put("/proc/self/cgroup", "9:pids:/slurm/job1\n4:cpu,memory:/slurm/job1\n0::/\n");
	put("/proc/self/mountinfo",
	    "30 22 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
	    "31 22 0:27 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
	    "32 22 0:28 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,cpu,memory\n");
	put("/sys/fs/cgroup/memory/slurm/job1/memory.stat",
	    "cache 1\nactive_file 1\nhierarchical_memory_limit 209715200\n"
	    "total_active_file 1048576\ntotal_inactive_file 1048576\n");
	put("/sys/fs/cgroup/memory/slurm/job1/memory.usage_in_bytes", "157286400\n");
	nm = read_root();
	TAP_IS_U64(nm.capacity, 200 * MiB, "v1: capacity is hierarchical_memory_limit");
	/* int_sqrt(204800 * 16) = 1810 (1810^2 = 3276100 <= 3276800 < 1811^2). */
	TAP_IS_U64(nm.available, 52 * MiB - 1810 * KiB,
		   "available: limit less usage, page cache counted free, less the reserve");

	put("/sys/fs/cgroup/memory/slurm/job1/memory.stat",
	    "hierarchical_memory_limit 9223372036854771712\n");
	nm = read_root();
	TAP_IS_U64(nm.capacity, 1000 * MiB, "v1 without a limit: MemTotal");
}

static void test_unreadable(void)
{
	struct node_memory nm;
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	snprintf(root, sizeof(root), "/nonexistent-dao-root");
	nm = read_root();
	TAP_IS_U64(nm.capacity, (uint64_t)pages * (uint64_t)size,
		   "nothing readable: capacity is physical memory (sysconf)");
	TAP_IS_U64(nm.available, UINT64_MAX, "and nothing bounds what is available");
}

static void test_backs(void)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	TAP_IS_U64(node_memory_backs(page + 513 * 1024, 1), 512 * 1024,
		   "a buffer costs a page and its page tables (1/512) beyond its bytes");
	TAP_IS_U64(node_memory_backs(10 * page + 513, 10), 512, "ten buffers: ten pages");
	TAP_IS_U64(node_memory_backs(10 * page, 11), 0, "less than a page each: nothing");
	TAP_IS_U64(node_memory_backs(UINT64_MAX, 5), UINT64_MAX, "unbounded memory stays unbounded");
	TAP_IS_U64(node_memory_backs(UINT64_MAX - 1, 0), (UINT64_MAX - 1) / 513 * 512 +
		   (UINT64_MAX - 1) % 513 * 512 / 513, "no overflow near the top");
}

/* The rule on this machine, through the API. */
static void test_rule(void)
{
	struct node_memory nm;
	dao_config cfg;
	dao_ctx ctx;
	dao_info info;
	dao_buf b;

	node_memory_read(&nm);
	cfg = test_config(4096, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	cfg.host_budget = nm.capacity + 1;
	TAP_IS_STATUS(dao_open(&cfg, &ctx), DAO_ERR_CONFIG,
		      "a host budget above what the node could ever give fails dao_open");

	cfg = test_config(4096, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	TEST_TRY(dao_open(&cfg, &ctx));
	TEST_TRY(dao_info_get(ctx, &info));
	TEST_TRY(dao_close(ctx, NULL));
	tap_ok(info.host_budget <= nm.capacity && info.host_budget + info.host_budget / 100 >= nm.capacity,
	       "the default host budget is what the node could ever give (%" PRIu64 " of %" PRIu64
	       ", %s)", info.host_budget, nm.capacity, nm.capacity_by);

	/* A buffer of the node's whole capacity: never available at once,
	 * since the kernel and this process hold some of it. */
	cfg = test_config(nm.capacity & ~255ull, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
	cfg.host_budget = nm.capacity;
	TEST_TRY(dao_open(&cfg, &ctx));
	TAP_IS_STATUS(dao_buffer_create(ctx, nm.capacity & ~255ull, &b), DAO_ERR_HOST_BUDGET,
		      "a create past what the node has available fails with DAO_ERR_HOST_BUDGET");
	TAP_IS_STATUS(dao_buffer_create(ctx, MiB, &b), DAO_OK, "a create that fits still succeeds");
	TEST_TRY(dao_release(ctx, b));
	TEST_TRY(dao_close(ctx, NULL));

	/* The simulator keeps no data: its host budget is bookkeeping only. */
	{
		struct dao_sim_model m;
		struct dao_backend *be;

		TEST_TRY(dao_sim_model_preset("h100", &m));
		uint64_t all = nm.capacity & ~((1ull << 20) - 1);

		TEST_TRY(dao_backend_sim_create(&m, all, 0, &be));
		cfg = test_config(all, DAO_POLICY_DAO, 8, DAO_CONFIG_PRIVATE);
		cfg.host_budget = nm.capacity * 4;
		TAP_IS_STATUS(dao_open_on_backend(&cfg, be, &ctx), DAO_OK,
			      "the simulator takes a host budget beyond the node");
		TAP_IS_STATUS(dao_buffer_create(ctx, all, &b), DAO_OK,
			      "and buffers beyond what the node has available");
		TEST_TRY(dao_release(ctx, b));
		TEST_TRY(dao_close(ctx, NULL));
	}
}

int main(void)
{
	char cmd[PATH_MAX];

	test_clear_env();
	test_meminfo_only();
	test_watermark_boost();
	test_cgroup_v2();
	test_cgroup_v2_views();
	test_cgroup_thp();
	test_cgroup_v1();
	test_unreadable();
	test_backs();
	test_rule();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/dao-node-memory.%d'",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	if (system(cmd))
		tap_diag("%s failed", cmd);
	tap_plan_done();
	return tap_exit();
}
