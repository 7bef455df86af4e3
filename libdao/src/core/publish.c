/* SPDX-License-Identifier: MIT */
/*
 * publish.c - residency published in shared memory for daoctl
 * (dao_publish.h has the layout, Documentation/daoctl.md the why).
 *
 * Opening and closing make system calls; the executor's tick never does:
 * it stores counters into an already mapped segment and reads the coarse
 * monotonic clock, which the vDSO answers in user space. Publishing never
 * fails the job: a segment that cannot be made is reported once and skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fault.h"
#include "backend/backend.h"
#include "base/log.h"
#include "core/publish.h"
#include "dao_publish.h"

/* The per-buffer table is rebuilt at most this often while the job runs. */
#define TABLE_PERIOD_NS 100000000ull

struct dao_publisher {
	uint64_t last_summary_ns; /* coarse clock at the last summary */
	void *map;
	size_t len;
	struct dao_pub_area *sum;
	struct dao_pub_area *tab;
	uint32_t cap;
	struct rec **top; /* scratch: min-heap of the largest records */
	uint64_t last_table_ns;
	uint64_t table_cost_ns; /* what the last rebuild took */
	uint64_t table_walked;  /* live buffers the last rebuild walked */
	uint64_t ops_since_wait_table; /* ops since the last rebuild on a wait */
	uint64_t pinned_bytes;
	uint64_t updates;
	pid_t owner; /* a forked child must not remove its parent's segment */
	char path[96];
	struct dao_publisher *next; /* open segments, for removal at exit */
};

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dao_publisher *open_list;
static uint32_t next_serial;
static bool exit_hook;
static atomic_bool warned;

static void warn_once(const char *what, int err)
{
	if (!atomic_exchange(&warned, true))
		dao_warn("daoctl will not see this process: %s: %s", what, strerror(err));
}

/* A process that exits without closing its contexts still removes its
 * segments; one killed outright leaves them to daoctl's stale check. */
static void remove_at_exit(void)
{
	pthread_mutex_lock(&open_mu);
	for (struct dao_publisher *p = open_list; p; p = p->next)
		if (p->owner == getpid())
			unlink(p->path);
	pthread_mutex_unlock(&open_mu);
}

static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int self_start_time(uint64_t *out)
{
	char buf[1024];
	ssize_t n;
	int fd = fault_open("/proc/self/stat", O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	return dao_pub_stat_start_time(buf, out) ? 0 : -EIO;
}

static void copy_text(char *dst, size_t cap, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < cap && src[i]; i++)
		dst[i] = src[i];
	memset(dst + i, 0, cap - i);
}

static void fill_header(struct dao_pub_header *h, const struct device *d, uint32_t serial,
			uint64_t start_time, size_t len, uint32_t cap)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	h->magic = DAO_PUB_MAGIC;
	h->version = DAO_PUB_VERSION;
	h->buf_cap = cap;
	h->total_bytes = len;
	h->summary_off = sizeof(*h);
	h->table_off = sizeof(*h) + dao_pub_summary_bytes();
	h->pid = (uint32_t)getpid();
	h->uid = (uint32_t)getuid();
	h->start_time = start_time;
	h->created_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	h->serial = serial;
	h->lookahead = d->lookahead;
	h->budget = d->budget;
	h->host_budget = d->host.budget;
	copy_text(h->job, sizeof(h->job),
		  d->report.job_name[0] ? d->report.job_name : program_invocation_short_name);
	copy_text(h->backend, sizeof(h->backend), dao_backend_name_of(d->be));
	copy_text(h->policy, sizeof(h->policy), dao_policy_name(d->policy.id));
	h->slurm_job_id = d->report.slurm_job_id;
}

static void publish_summary(struct dao_publisher *p, const struct device *d, uint64_t now)
{
	const dao_stats *st = &d->stats;
	struct dao_pub_summary s = {
		.h2d_bytes = st->h2d_bytes,
		.d2h_bytes = st->d2h_bytes,
		.fetches = st->fetches,
		.prefetches = st->prefetches,
		.writebacks = st->writebacks,
		.evictions = st->evictions,
		.drops = st->drops,
		.stalls = st->stalls,
		.stall_ns = st->stall_ns,
		.kernels = st->kernels,
		/* as dao_stats_get reports them: the arena is the truth */
		.device_bytes = d->res.arena.used,
		.peak_device_bytes = d->res.arena.peak,
		.host_bytes = st->host_bytes,
		.live_buffers = st->live_buffers,
		.budget_bytes = st->budget_bytes,
		.host_budget_bytes = st->host_budget_bytes,
		.pinned_bytes = p->pinned_bytes,
		.ops = d->q.now_seq,
		.updated_ns = now,
		.updates = ++p->updates,
		/* It changes at most once, at an iteration mark (core/ask.c). */
		.policy = (uint64_t)__atomic_load_n(&d->policy.id, __ATOMIC_RELAXED),
	};

	dao_pub_write_begin(p->sum);
	dao_pub_write_words(p->sum, 0, &s, DAO_PUB_WORDS(s));
	dao_pub_write_end(p->sum);
}

/* Larger first; among equals the newer, which is also the order the record
 * list is walked in, so that a run of equal sizes is rejected in O(1) each. */
static bool bigger(const struct rec *a, const struct rec *b)
{
	return a->size != b->size ? a->size > b->size : a->id > b->id;
}

/* Min-heap on `bigger`: top[0] is the smallest kept record. */
static void heap_sift_down(struct rec **h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;

		if (l < n && bigger(h[m], h[l]))
			m = l;
		if (l + 1 < n && bigger(h[m], h[l + 1]))
			m = l + 1;
		if (m == i)
			return;
		struct rec *t = h[i];

		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heap_push(struct rec **h, uint32_t n, struct rec *r)
{
	uint32_t i = n;

	h[i] = r;
	while (i && bigger(h[(i - 1) / 2], h[i])) {
		struct rec *t = h[i];

		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static uint64_t rec_flags(const struct device *d, const struct rec *r)
{
	/* Zero bytes: always resident, never moves (decision 3). */
	bool on_dev = !r->size || (r->blk && r->copies.dev_valid);
	/* Without host data (simulator) a valid host copy needs no allocation. */
	bool on_host = r->size && r->copies.host_valid && (r->host || !d->be->holds_data);
	uint64_t f = (on_dev ? DAO_PUB_LOC_DEVICE : 0) | (on_host ? DAO_PUB_LOC_HOST : 0);

	if (rec_dirty(r))
		f |= DAO_PUB_BUF_DIRTY;
	if (r->released)
		f |= DAO_PUB_BUF_RELEASED;
	if (r->pin_handle)
		f |= DAO_PUB_BUF_PINNED;
	return f;
}

static void publish_table(struct dao_publisher *p, const struct device *d, uint64_t now)
{
	struct dao_pub_table head = { .now_seq = d->q.now_seq, .taken_ns = now };
	uint32_t n = 0;

	/* The walk reads only the records' first lines (size, id, link):
	 * each further line would be one more miss per live buffer. The
	 * pinned bytes are counted as they are pinned (residency.c). */
	for (const struct rec *r = d->recs.all; r; r = r->all.next) {
		struct rec *rr = (struct rec *)r;

		head.live++;
		if (n < p->cap) {
			heap_push(p->top, n++, rr);
		} else if (p->cap && bigger(rr, p->top[0])) {
			p->top[0] = rr;
			heap_sift_down(p->top, n, 0);
		}
	}
	p->pinned_bytes = d->stats.pinned_bytes;
	p->table_walked = head.live;
	head.count = n;
	/* Pop the smallest to the back: the array ends largest first. */
	for (uint32_t k = n; k > 1; k--) {
		struct rec *t = p->top[0];

		p->top[0] = p->top[k - 1];
		p->top[k - 1] = t;
		heap_sift_down(p->top, k - 1, 0);
	}

	dao_pub_write_begin(p->tab);
	dao_pub_write_words(p->tab, 0, &head, DAO_PUB_WORDS(head));
	for (uint32_t i = 0; i < n; i++) {
		const struct rec *r = p->top[i];
		struct dao_pub_buf b = {
			.id = r->id,
			.size = r->size,
			.flags = rec_flags(d, r),
			.next_use = DAO_PUB_NONE,
			.since_last = DAO_PUB_NONE,
		};

		if (r->uses.head) {
			uint64_t at = r->uses.head->op->seq;

			b.next_use = at > d->q.now_seq ? at - d->q.now_seq : 0;
		}
		if (r->last_use)
			b.since_last = d->q.now_seq - r->last_use;
		copy_text(b.label, sizeof(b.label), r->label);
		dao_pub_write_words(p->tab, DAO_PUB_WORDS(head) + (size_t)i * DAO_PUB_WORDS(b), &b,
				    DAO_PUB_WORDS(b));
	}
	dao_pub_write_end(p->tab);
	p->last_table_ns = now;
}

void publish_open(struct device *d)
{
	struct dao_publisher *p;
	struct dao_pub_header *h;
	char tmp[96];
	uint64_t start_time = 0;
	uint32_t serial;
	int fd, err;

	err = -self_start_time(&start_time);
	if (err) {
		warn_once("reading /proc/self/stat", err);
		return;
	}
	p = fault_calloc(1, sizeof(*p));
	if (p)
		p->top = fault_calloc(DAO_PUB_BUFS, sizeof(*p->top));
	if (!p || !p->top) {
		if (p)
			free(p);
		warn_once("allocating the publisher", ENOMEM);
		return;
	}
	p->cap = DAO_PUB_BUFS;
	p->len = sizeof(*h) + dao_pub_summary_bytes() + dao_pub_table_bytes(p->cap);
	p->owner = getpid();

	pthread_mutex_lock(&open_mu);
	serial = next_serial++;
	if (!exit_hook)
		exit_hook = atexit(remove_at_exit) == 0;
	pthread_mutex_unlock(&open_mu);

	snprintf(p->path, sizeof(p->path), DAO_PUB_DIR "/" DAO_PUB_PREFIX "%u.%d.%u",
		 (unsigned)getuid(), (int)p->owner, serial);
	snprintf(tmp, sizeof(tmp), DAO_PUB_DIR "/" DAO_PUB_TMP_PREFIX "%u.%d.%u",
		 (unsigned)getuid(), (int)p->owner, serial);
	/* A leftover of a process that had our pid before us may be in the way. */
	unlink(tmp);
	fd = fault_shm_open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		warn_once(tmp, errno);
		goto fail;
	}
	if (fault_shm_truncate(fd, (off_t)p->len)) {
		warn_once(tmp, errno);
		goto fail_fd;
	}
	p->map = fault_shm_map(p->len, fd);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		warn_once(tmp, errno);
		goto fail_fd;
	}
	close(fd);
	fd = -1;
	h = p->map;
	fill_header(h, d, serial, start_time, p->len, p->cap);
	p->sum = (struct dao_pub_area *)((char *)p->map + h->summary_off);
	p->tab = (struct dao_pub_area *)((char *)p->map + h->table_off);
	publish_summary(p, d, coarse_ns());
	publish_table(p, d, coarse_ns());
	/* rename replaces a stale segment of an earlier process with our pid. */
	if (rename(tmp, p->path)) {
		warn_once(p->path, errno);
		goto fail_fd;
	}
	pthread_mutex_lock(&open_mu);
	p->next = open_list;
	open_list = p;
	pthread_mutex_unlock(&open_mu);
	d->report.pub = p;
	return;

fail_fd:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
fail:
	if (p->map)
		munmap(p->map, p->len);
	free(p->top);
	free(p);
}

void publish_tick(struct device *d, bool busy)
{
	struct dao_publisher *p = d->report.pub;
	uint64_t now;
	bool waited;

	if (!p)
		return;
	p->ops_since_wait_table++;
	now = coarse_ns();
	/* Within one tick of the coarse clock a reader could not tell the
	 * rewrites apart by their time anyway; the last op before the
	 * executor idles is always published. */
	if (busy && now == p->last_summary_ns)
		return;
	p->last_summary_ns = now;
	publish_summary(p, d, now);
	/* The job waiting on an idle executor (sync, read, write) is when a
	 * reader most wants the table to match what the job sees: then it is
	 * rebuilt whenever the ops since the last such rebuild pay for the
	 * walk (the periodic rebuilds in between do not count, so whether a
	 * sync shows the current table depends on the program alone). While
	 * the job runs, rebuilds may take at most a twentieth of the
	 * executor's time. */
	waited = !d->q.head && d->q.flush &&
		 p->ops_since_wait_table * TABLE_WALK_PER_OP >= p->table_walked;
	if (waited || (now - p->last_table_ns >= TABLE_PERIOD_NS &&
		       now - p->last_table_ns >= 20 * p->table_cost_ns)) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0); /* vDSO: no system call */
		publish_table(p, d, now);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		p->table_cost_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull +
				   (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
		if (waited)
			p->ops_since_wait_table = 0;
	}
}

void publish_close(struct device *d)
{
	struct dao_publisher *p = d->report.pub;

	if (!p)
		return;
	d->report.pub = NULL;
	pthread_mutex_lock(&open_mu);
	for (struct dao_publisher **pp = &open_list; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	pthread_mutex_unlock(&open_mu);
	unlink(p->path);
	munmap(p->map, p->len);
	free(p->top);
	free(p);
}
