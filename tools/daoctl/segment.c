/* SPDX-License-Identifier: MIT */
/*
 * segment.c - find the segments libdao publishes, drop the stale ones, copy
 * the rest out consistently and group them by process.
 *
 * A segment's content comes from its owner: root reading another user's
 * segment trusts none of it, so every offset, count and string is checked
 * before use and the file must belong to the uid its name claims.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dao.h"
#include "daoctl.h"

/* A writer stopped mid-update (SIGSTOP) must not hang daoctl. */
#define READ_TRIES 10000
/* Far beyond any layout-1 segment (DAO_PUB_BUFS entries). */
#define SEG_MAX_BYTES (64u << 20)
#define BUF_CAP_MAX 65536u

/* "<u>.<p>.<s>" after prefix, decimal, nothing else. */
static bool parse_name(const char *name, const char *prefix, uint32_t v[3])
{
	size_t plen = strlen(prefix);
	const char *p = name + plen;

	if (strncmp(name, prefix, plen))
		return false;
	for (int i = 0; i < 3; i++) {
		uint64_t x = 0;
		const char *start = p;

		while (*p >= '0' && *p <= '9') {
			x = x * 10 + (uint64_t)(*p - '0');
			if (x > UINT32_MAX)
				return false;
			p++;
		}
		if (p == start || (p - start > 1 && *start == '0'))
			return false;
		if (*p != (i < 2 ? '.' : 0))
			return false;
		if (i < 2)
			p++;
		v[i] = (uint32_t)x;
	}
	return true;
}

/* 1 alive with this start time, 0 gone or another process, -1 unknown. */
static int proc_alive(uint32_t pid, uint64_t start_time, bool check_start)
{
	char path[64], buf[1024];
	uint64_t st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0; /* exited between open and read */
	buf[n] = 0;
	if (!check_start)
		return 1;
	if (!dao_pub_stat_start_time(buf, &st))
		return -1;
	return st == start_time;
}

/* Bytes a segment's owner wrote become printable text. */
static void clean_text(char *s, size_t cap)
{
	s[cap - 1] = 0;
	for (size_t i = 0; s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f ||
		    s[i] == '"' || s[i] == '\\')
			s[i] = '?';
}

static bool header_valid(const struct dao_pub_header *h, const uint32_t name[3], off_t size)
{
	/* Each version appends to the header; summary_off says how long it is. */
	size_t hdr_bytes = h->version == 1 ? DAO_PUB_HEADER_V1_BYTES : sizeof(*h);

	if (h->magic != DAO_PUB_MAGIC || h->version < 1 || h->version > DAO_PUB_VERSION)
		return false;
	if (h->total_bytes != (uint64_t)size || h->uid != name[0] || h->pid != name[1] ||
	    h->serial != name[2] || !h->buf_cap || h->buf_cap > BUF_CAP_MAX)
		return false;
	if (h->summary_off != hdr_bytes ||
	    h->table_off != h->summary_off + dao_pub_summary_bytes_of(h->version))
		return false;
	return h->table_off + dao_pub_table_bytes(h->buf_cap) <= h->total_bytes;
}

static bool copy_summary(const void *map, const struct dao_pub_header *h,
			 struct dao_pub_summary *out)
{
	const struct dao_pub_area *a = (const void *)((const char *)map + h->summary_off);
	/* An older layout's summary lacks the words appended since: zero. */
	size_t words = (dao_pub_summary_bytes_of(h->version) - sizeof(*a)) / sizeof(uint64_t);

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < READ_TRIES; i++) {
		uint64_t seq;

		if (dao_pub_read_begin(a, &seq)) {
			dao_pub_read_words(a, 0, out, words);
			if (dao_pub_read_end(a, seq))
				return true;
		}
		sched_yield();
	}
	return false;
}

static bool copy_table(const void *map, const struct dao_pub_header *h, struct seg *g)
{
	const struct dao_pub_area *a = (const void *)((const char *)map + h->table_off);
	const size_t hw = DAO_PUB_WORDS(struct dao_pub_table);
	const size_t bw = DAO_PUB_WORDS(struct dao_pub_buf);

	g->bufs = calloc(h->buf_cap, sizeof(*g->bufs));
	if (!g->bufs)
		return false;
	for (int i = 0; i < READ_TRIES; i++) {
		uint64_t seq;

		if (dao_pub_read_begin(a, &seq)) {
			dao_pub_read_words(a, 0, &g->tab, hw);
			/* A count read mid-write may be anything: bound it first. */
			if (g->tab.count <= h->buf_cap) {
				dao_pub_read_words(a, hw, g->bufs, (size_t)g->tab.count * bw);
				if (dao_pub_read_end(a, seq))
					return true;
			}
		}
		sched_yield();
	}
	return false;
}

enum seg_result { SEG_OK, SEG_SKIP, SEG_STALE, SEG_BAD };

static enum seg_result read_segment(int dirfd, const char *name, const uint32_t id[3],
				    struct seg *g)
{
	struct stat st;
	void *map;
	int alive;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	enum seg_result res = SEG_BAD;

	if (fd < 0)
		return SEG_SKIP; /* closed meanwhile, or not ours to read */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != id[0] ||
	    st.st_size < (off_t)sizeof(g->hdr) || st.st_size > SEG_MAX_BYTES) {
		close(fd);
		return SEG_BAD;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return SEG_BAD;
	memcpy(&g->hdr, map, sizeof(g->hdr));
	if (!header_valid(&g->hdr, id, st.st_size))
		goto out;
	/* A version-1 header ends before the fields version 2 appended. */
	if (g->hdr.version == 1)
		memset((char *)&g->hdr + DAO_PUB_HEADER_V1_BYTES, 0,
		       sizeof(g->hdr) - DAO_PUB_HEADER_V1_BYTES);
	alive = proc_alive(g->hdr.pid, g->hdr.start_time, true);
	if (alive == 0) {
		res = SEG_STALE;
		goto out;
	}
	if (alive < 0 || !copy_summary(map, &g->hdr, &g->sum) || !copy_table(map, &g->hdr, g))
		goto out;
	clean_text(g->hdr.job, sizeof(g->hdr.job));
	clean_text(g->hdr.backend, sizeof(g->hdr.backend));
	/* The policy in force (layout 3), where it names one: a job that
	 * chose none takes plan at an iteration mark, after the header was
	 * written with the policy it opened with. */
	if (g->sum.policy && g->sum.policy <= INT32_MAX) {
		const char *in_force = dao_policy_name((dao_policy)g->sum.policy);

		if (strcmp(in_force, "unknown"))
			snprintf(g->hdr.policy, sizeof(g->hdr.policy), "%s", in_force);
	}
	clean_text(g->hdr.policy, sizeof(g->hdr.policy));
	for (uint64_t i = 0; i < g->tab.count; i++)
		clean_text(g->bufs[i].label, sizeof(g->bufs[i].label));
	res = SEG_OK;
out:
	munmap(map, (size_t)st.st_size);
	if (res != SEG_OK) {
		free(g->bufs);
		g->bufs = NULL;
	}
	return res;
}

struct proc *scan_find(struct scan *s, uint32_t pid)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

static void sum_add(struct dao_pub_summary *t, const struct dao_pub_summary *a)
{
	uint64_t *tw = (uint64_t *)t;
	const uint64_t *aw = (const uint64_t *)a;
	uint64_t updated = t->updated_ns > a->updated_ns ? t->updated_ns : a->updated_ns;
	uint64_t policy = t->policy; /* a name, not a count */

	for (size_t i = 0; i < DAO_PUB_WORDS(*t); i++)
		tw[i] += aw[i];
	t->updated_ns = updated;
	t->policy = policy;
}

static int add_seg(struct scan *s, struct seg *g)
{
	struct proc *p = scan_find(s, g->hdr.pid);
	struct seg *segs;

	if (!p) {
		struct proc *n = realloc(s->procs, (s->n + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->procs = n;
		p = &n[s->n++];
		memset(p, 0, sizeof(*p));
		p->pid = g->hdr.pid;
		p->uid = g->hdr.uid;
		memcpy(p->job, g->hdr.job, sizeof(p->job));
		memcpy(p->backend, g->hdr.backend, sizeof(p->backend));
		memcpy(p->policy, g->hdr.policy, sizeof(p->policy));
		p->slurm_job_id = g->hdr.slurm_job_id;
	}
	segs = realloc(p->segs, (p->nseg + 1) * sizeof(*segs));
	if (!segs)
		return -ENOMEM;
	p->segs = segs;
	segs[p->nseg++] = *g;
	sum_add(&p->sum, &g->sum);
	p->budget += g->hdr.budget;
	return 0;
}

/* A temporary name left by a process killed while creating its segment. */
static bool tmp_stale(const uint32_t id[3])
{
	return proc_alive(id[1], 0, false) == 0;
}

int scan_segments(struct scan *s)
{
	bool root = geteuid() == 0;
	uint32_t me = (uint32_t)getuid();
	struct dirent *e;
	DIR *dir;
	int err = 0;

	memset(s, 0, sizeof(*s));
	dir = opendir(DAO_PUB_DIR);
	if (!dir)
		return -errno;
	while ((e = readdir(dir))) {
		uint32_t id[3];
		struct seg g;

		if (parse_name(e->d_name, DAO_PUB_TMP_PREFIX, id)) {
			if ((root || id[0] == me) && tmp_stale(id) &&
			    !unlinkat(dirfd(dir), e->d_name, 0))
				s->stale_removed++;
			continue;
		}
		if (!parse_name(e->d_name, DAO_PUB_PREFIX, id))
			continue;
		/* A user sees only their own processes (decision 9). */
		if (!root && id[0] != me)
			continue;
		memset(&g, 0, sizeof(g));
		switch (read_segment(dirfd(dir), e->d_name, id, &g)) {
		case SEG_OK:
			err = add_seg(s, &g);
			if (err) {
				free(g.bufs);
				goto out;
			}
			break;
		case SEG_STALE:
			if (!unlinkat(dirfd(dir), e->d_name, 0))
				s->stale_removed++;
			break;
		case SEG_BAD:
			s->unreadable++;
			break;
		case SEG_SKIP:
			break;
		}
	}
out:
	closedir(dir);
	return err;
}

void scan_free(struct scan *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		for (uint32_t j = 0; j < s->procs[i].nseg; j++)
			free(s->procs[i].segs[j].bufs);
		free(s->procs[i].segs);
	}
	free(s->procs);
	memset(s, 0, sizeof(*s));
}
