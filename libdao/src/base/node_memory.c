/* SPDX-License-Identifier: MIT */
/*
 * node_memory.c - how much host memory the node can give this process:
 * /proc/meminfo less the kernel's own share of it (/proc/zoneinfo's
 * watermarks, reclaimable slab), the process's memory cgroup (found through
 * /proc/self/cgroup and /proc/self/mountinfo, wherever it is mounted; less
 * the reserve the kernel would keep on a node of its size and, with
 * transparent huge pages on, a huge page for khugepaged), and
 * the commit limit when the administrator made overcommit strict. Each
 * bound that cannot be read is left out: it bounds nothing.
 */
#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/node_memory.h"

#define TEXT_CAP 16384
#define PATH_CAP 4096

/* The file at root + path, NUL-terminated; false when unreadable. */
static bool read_text(const char *root, const char *path, char *buf, size_t cap)
{
	char full[PATH_CAP];
	size_t len = 0;
	ssize_t n;
	int fd;

	if ((size_t)snprintf(full, sizeof(full), "%s%s", root, path) >= sizeof(full))
		return false;
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return len > 0;
}

/* The number after "key:" or "key " at the start of a line; "kB" after it
 * (meminfo) multiplies by 1024. */
static bool key_u64(const char *text, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char *end;
		unsigned long long v;

		if (strncmp(line, key, klen) || (line[klen] != ':' && line[klen] != ' '))
			continue;
		v = strtoull(line + klen + 1, &end, 10);
		if (end == line + klen + 1)
			return false;
		while (*end == ' ')
			end++;
		*out = strncmp(end, "kB", 2) ? v : v * 1024;
		return true;
	}
	return false;
}

/* A file holding one number, or "max" (v2: no limit, UINT64_MAX). */
static bool file_u64(const char *root, const char *dir, const char *name, uint64_t *out)
{
	char path[PATH_CAP], buf[64];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
	    !read_text(root, path, buf, sizeof(buf)))
		return false;
	if (!strncmp(buf, "max", 3)) {
		*out = UINT64_MAX;
		return true;
	}
	if (!isdigit((unsigned char)buf[0]))
		return false;
	*out = strtoull(buf, NULL, 10);
	return true;
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

static bool has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);

	for (const char *p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, tok, n) && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
			return true;
	return false;
}

/*
 * The process's memory cgroup: its path in the hierarchy from
 * /proc/self/cgroup (v1's memory controller when one is mounted, else the
 * v2 hierarchy), then the mount of that hierarchy whose root contains it.
 * dir gets the directory, mnt_len how much of it is the mount point.
 */
static bool cgroup_dir(const char *root, char *text, char *dir, size_t cap, size_t *mnt_len,
		       bool *v2)
{
	char cg[PATH_CAP] = "", *lines;
	bool have_v1 = false, have_v2 = false;

	if (!read_text(root, "/proc/self/cgroup", text, TEXT_CAP))
		return false;
	for (char *line = strtok_r(text, "\n", &lines); line; line = strtok_r(NULL, "\n", &lines)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2 || strlen(c2 + 1) >= sizeof(cg))
			continue;
		*c2 = '\0';
		/* v2 is "0::PATH"; v1 "ID:CONTROLLERS:PATH". */
		if (c1 == line + 1 && line[0] == '0' && c2 == c1 + 1 && !have_v1) {
			strcpy(cg, c2 + 1);
			have_v2 = true;
		} else if (has_token(c1 + 1, "memory")) {
			strcpy(cg, c2 + 1);
			have_v1 = true;
		}
	}
	if (!have_v1 && !have_v2)
		return false;
	*v2 = !have_v1;
	if (!read_text(root, "/proc/self/mountinfo", text, TEXT_CAP))
		return false;
	for (char *line = strtok_r(text, "\n", &lines); line; line = strtok_r(NULL, "\n", &lines)) {
		char *f[5], *dash = strstr(line, " - "), *fstype, *opts, *save;
		size_t rlen;
		int i;

		if (!dash)
			continue;
		*dash = '\0';
		f[0] = strtok_r(line, " ", &save);
		for (i = 1; i < 5 && f[i - 1]; i++)
			f[i] = strtok_r(NULL, " ", &save);
		fstype = strtok_r(dash + 3, " ", &save);
		(void)strtok_r(NULL, " ", &save); /* source */
		opts = strtok_r(NULL, " ", &save);
		if (i < 5 || !f[4] || !fstype || !opts)
			continue;
		if (*v2 ? strcmp(fstype, "cgroup2") : strcmp(fstype, "cgroup") || !has_token(opts, "memory"))
			continue;
		unescape(f[3]);
		unescape(f[4]);
		/* The mount shows the hierarchy from f[3] down. */
		rlen = strcmp(f[3], "/") ? strlen(f[3]) : 0;
		if (strncmp(cg, f[3], rlen) || (cg[rlen] != '/' && cg[rlen] != '\0'))
			continue;
		if ((size_t)snprintf(dir, cap, "%s%s", f[4], cg + rlen) >= cap)
			return false;
		*mnt_len = strlen(f[4]);
		/* "/" alone as the mount point would leave "//path". */
		if (*mnt_len == 1)
			*mnt_len = 0;
		return true;
	}
	return false;
}

/* Sums of nonsense saturate here, far above any memory, never wrap. */
#define RESERVE_MAX (UINT64_MAX / 4)

static uint64_t reserve_add(uint64_t a, uint64_t b)
{
	a = a < RESERVE_MAX ? a : RESERVE_MAX;
	b = b < RESERVE_MAX ? b : RESERVE_MAX;
	return a + b < RESERVE_MAX ? a + b : RESERVE_MAX;
}

/*
 * What a cgroup of this limit keeps back. A node has its watermarks:
 * MemAvailable leaves them to the kernel, so a job that takes all of it
 * still leaves the node room for its next allocations. A cgroup has none:
 * at its limit the next page the process touches (a stdio buffer, a stack
 * page, the job's own data after a refused create) finds nothing to
 * reclaim but page cache, and the cgroup's OOM killer runs. So the cgroup
 * is given what the kernel keeps free on a node of its size, by the
 * kernel's own rule for min_free_kbytes (mm/page_alloc.c:
 * int_sqrt(KiB * 16) KiB, clamped to 128 KiB..256 MiB): 1 MiB of 64 MiB,
 * 8 MiB of 4 GiB, 64 MiB of 256 GiB.
 */
static uint64_t cgroup_reserve(uint64_t limit)
{
	/* floor(sqrt()) is int_sqrt's exactly below 2^52, far past the clamp
	 * (262144^2 = 2^36). */
	uint64_t kib = (uint64_t)sqrt((double)(limit / 1024 * 16));

	kib = kib < 128 ? 128 : kib > 262144 ? 262144 : kib;
	return kib * 1024;
}

/*
 * What the kernel may charge to the cgroup at once on its own, beside the
 * job's pages: with transparent huge pages on ("always", or "madvise",
 * which libdao's own chunks ask for), khugepaged collapses 512 small pages
 * into a huge page by charging the new page first and freeing the old ones
 * after the copy. At the limit that charge fails, counts as the cgroup's
 * max event and reclaims the job's page cache, again at every scan (seen
 * 144 times in one CI run of the VM suite). khugepaged collapses one page
 * at a time, so one huge page is enough. Its size is the kernel's
 * (hpage_pmd_size, 4.14 on), else meminfo's Hugepagesize; nothing when
 * transparent huge pages are off or unknown here.
 */
static uint64_t thp_collapse_bytes(const char *root, const char *meminfo)
{
	char buf[64];
	uint64_t bytes = 0;

	if (!read_text(root, "/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof(buf)) ||
	    strstr(buf, "[never]") || !strchr(buf, '['))
		return 0;
	if (read_text(root, "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", buf,
		      sizeof(buf)) &&
	    isdigit((unsigned char)buf[0]))
		bytes = strtoull(buf, NULL, 10);
	else
		key_u64(meminfo, "Hugepagesize", &bytes);
	/* Nonsense saturates far above any memory. */
	return bytes < RESERVE_MAX ? bytes : RESERVE_MAX;
}

/* Limit, and headroom (limit less use, page cache counted as free, less
 * what the cgroup keeps back: the kernel's reserve for a node of its size
 * and a huge page the kernel may charge at once). */
static void cgroup_level(uint64_t limit, uint64_t usage, uint64_t cache, uint64_t huge,
			 uint64_t *cap, uint64_t *room)
{
	uint64_t free_now, keep;

	if (limit == UINT64_MAX)
		return;
	if (limit < *cap)
		*cap = limit;
	free_now = usage >= limit ? 0 : limit - usage;
	free_now = free_now + cache < free_now ? UINT64_MAX : free_now + cache;
	if (free_now > limit)
		free_now = limit;
	keep = reserve_add(cgroup_reserve(limit), huge);
	free_now = free_now > keep ? free_now - keep : 0;
	if (free_now < *room)
		*room = free_now;
}

/* v2: every level from the process's cgroup up to the mount's root has a
 * limit of its own; the root cgroup has no memory.max. */
static void cgroup_bounds(const char *root, char *text, uint64_t huge, uint64_t *cap,
			  uint64_t *room)
{
	char dir[PATH_CAP];
	size_t mnt_len;
	bool v2;

	if (!cgroup_dir(root, text, dir, sizeof(dir), &mnt_len, &v2))
		return;
	if (!v2) {
		uint64_t limit, usage, act = 0, inact = 0;
		char path[PATH_CAP + 16];

		/* v1 folds the ancestors' limits into hierarchical_memory_limit. */
		snprintf(path, sizeof(path), "%s/memory.stat", dir);
		if (!read_text(root, path, text, TEXT_CAP) ||
		    !key_u64(text, "hierarchical_memory_limit", &limit) ||
		    !file_u64(root, dir, "memory.usage_in_bytes", &usage))
			return;
		key_u64(text, "total_active_file", &act);
		key_u64(text, "total_inactive_file", &inact);
		cgroup_level(limit, usage, act + inact, huge, cap, room);
		return;
	}
	for (;;) {
		uint64_t limit, usage, act = 0, inact = 0;
		char path[PATH_CAP + 16];
		char *slash;

		if (!file_u64(root, dir, "memory.max", &limit) ||
		    !file_u64(root, dir, "memory.current", &usage))
			break;
		snprintf(path, sizeof(path), "%s/memory.stat", dir);
		if (read_text(root, path, text, TEXT_CAP)) {
			key_u64(text, "active_file", &act);
			key_u64(text, "inactive_file", &inact);
		}
		cgroup_level(limit, usage, act + inact, huge, cap, room);
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < mnt_len)
			break;
		*slash = '\0';
	}
}

/*
 * What MemAvailable counts that a job cannot safely take, in bytes; *why
 * says what MemAvailable is then less.
 *
 * The watermark boost: MemAvailable subtracts each zone's high watermark,
 * but after a fragmenting fallback the allocator raises every watermark of
 * the zone by a boost (mm/page_alloc.c, boost_watermark) of up to
 * vm.watermark_boost_factor / 10000 of the high watermark (150% by default)
 * and at least a pageblock; free memory below the boosted minimum is the
 * OOM killer's when nothing is reclaimable. Every zone's largest boost is
 * left to the kernel (none when the factor is 0, or before Linux 5.0,
 * which has no such sysctl).
 *
 * Reclaimable slab: MemAvailable counts KReclaimable as free but for the
 * smaller of its half and the low watermarks, yet a slab page goes back
 * only when every object on it is freed, which a busy node may never
 * reach; what it counted is left to the kernel too.
 *
 * Seen on the debug kernel of the VM suite (KASAN, kmemleak, slab
 * debugging), where a job held to MemAvailable alone met the OOM killer:
 * a boost of 10.3 MiB over a minimum of 4.4, free memory 5.2 MiB.
 */
static uint64_t kernel_reserve(const char *root, const char *meminfo, const char **why)
{
	char path[PATH_CAP], buf[32], *line = NULL;
	uint64_t factor = 0, pageblock = 0, slab = 0, page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t boost = 0, low = 0, most_boost = 0, counted;
	size_t cap = 0;
	FILE *f;

	if (read_text(root, "/proc/sys/vm/watermark_boost_factor", buf, sizeof(buf)) &&
	    isdigit((unsigned char)buf[0]))
		factor = strtoull(buf, NULL, 10);
	/* A pageblock is a huge page's order where the kernel has them. */
	key_u64(meminfo, "Hugepagesize", &pageblock);
	if (!key_u64(meminfo, "KReclaimable", &slab))
		key_u64(meminfo, "SReclaimable", &slab);
	/* Line by line, not read_text: with a line per CPU in every zone's
	 * pagesets, zoneinfo outgrows TEXT_CAP on a large node. */
	if ((size_t)snprintf(path, sizeof(path), "%s/proc/zoneinfo", root) < sizeof(path) &&
	    (f = fopen(path, "re"))) {
		while (getline(&line, &cap, f) > 0) {
			char *p = line + strspn(line, " \t");
			uint64_t v, most;

			/* A populated zone shows its boost, then its boosted
			 * watermarks: the boost is taken off again. */
			if (!strncmp(p, "Node ", 5)) {
				boost = 0;
			} else if (!strncmp(p, "boost ", 6)) {
				boost = strtoull(p + 6, NULL, 10);
				boost = boost < RESERVE_MAX / page ? boost : RESERVE_MAX / page;
			} else if (!strncmp(p, "low ", 4)) {
				v = strtoull(p + 4, NULL, 10);
				low = reserve_add(low, v > boost ? v - boost : 0);
			} else if (!strncmp(p, "high ", 5) && factor) {
				v = strtoull(p + 5, NULL, 10);
				v = v > boost ? v - boost : 0;
				most = v > RESERVE_MAX / factor / page ? RESERVE_MAX
								       : v * factor / 10000 * page;
				if (most < pageblock)
					most = pageblock;
				if (most < boost * page)
					most = boost * page;
				most_boost = reserve_add(most_boost, most);
			}
		}
		free(line);
		fclose(f);
	}
	low = low > RESERVE_MAX / page ? RESERVE_MAX : low * page;
	counted = reserve_add(slab - (slab / 2 < low ? slab / 2 : low), 0);
	*why = most_boost && counted ? "MemAvailable less watermark boost and reclaimable slab"
	       : most_boost	     ? "MemAvailable less watermark boost"
	       : counted	     ? "MemAvailable less reclaimable slab"
				     : "MemAvailable";
	return reserve_add(most_boost, counted);
}

void node_memory_read_at(const char *root, struct node_memory *out)
{
	char *text = malloc(TEXT_CAP);
	uint64_t total, avail, limit, committed, cg_cap = UINT64_MAX, cg_room = UINT64_MAX;
	char mode[8];
	bool have_meminfo = text && read_text(root, "/proc/meminfo", text, TEXT_CAP);

	out->capacity = 0;
	out->available = UINT64_MAX;
	out->capacity_by = "physical memory";
	out->available_by = "nothing (the node's memory could not be read)";
	if (have_meminfo) {
		if (key_u64(text, "MemTotal", &total))
			out->capacity = total;
		if (key_u64(text, "MemAvailable", &avail)) {
			uint64_t keep = kernel_reserve(root, text, &out->available_by);

			out->available = avail > keep ? avail - keep : 0;
		}
		/* Strict overcommit: allocations fail past the commit limit. */
		if (read_text(root, "/proc/sys/vm/overcommit_memory", mode, sizeof(mode)) &&
		    mode[0] == '2' && key_u64(text, "CommitLimit", &limit) &&
		    key_u64(text, "Committed_AS", &committed)) {
			if (limit < out->capacity) {
				out->capacity = limit;
				out->capacity_by = "commit limit";
			}
			if (limit - (committed < limit ? committed : limit) < out->available) {
				out->available = committed < limit ? limit - committed : 0;
				out->available_by = "commit limit less Committed_AS";
			}
		}
	}
	if (!out->capacity) {
		long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

		out->capacity = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : UINT64_MAX;
	}
	/* text still holds meminfo when it was read (else it holds nothing
	 * read); cgroup_bounds reuses it. */
	if (text)
		cgroup_bounds(root, text, thp_collapse_bytes(root, have_meminfo ? text : ""), &cg_cap,
			      &cg_room);
	if (cg_cap < out->capacity) {
		out->capacity = cg_cap;
		out->capacity_by = "memory cgroup limit";
	}
	if (cg_room < out->available) {
		out->available = cg_room;
		out->available_by = "memory cgroup headroom less its reserve";
	}
	free(text);
}

uint64_t node_memory_backs(uint64_t memory, uint64_t buffers)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), spare;

	if (memory == UINT64_MAX)
		return UINT64_MAX;
	if (buffers > memory / page)
		return 0;
	spare = memory - buffers * page;
	/* The largest b with b + b / 512 <= spare, without overflow. */
	return spare / 513 * 512 + spare % 513 * 512 / 513;
}

void node_memory_read(struct node_memory *out)
{
	node_memory_read_at("", out);
}
