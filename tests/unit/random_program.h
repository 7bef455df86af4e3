/* SPDX-License-Identifier: MIT */
/*
 * random_program.h - random dao programs and their plain-memory reference,
 * for test_property and the soak test (tests/soak/).
 *
 * A program creates buffers (some of zero bytes) and views of them, writes
 * inputs, launches kernels that compute deterministic functions of what they
 * read, reads results and releases handles at random points. run_reference
 * runs it on plain memory, run_dao through libdao; every read of the two must
 * be the same bytes. About a quarter of the kernels are host kernels
 * (DAO_LAUNCH_HOST): the same function on the operands' host copies. A
 * program's scale multiplies its buffer sizes (1: up to 8 KiB).
 */
#ifndef DAO_TEST_RANDOM_PROGRAM_H
#define DAO_TEST_RANDOM_PROGRAM_H

#include "common.h"

#define MAX_OPERANDS 6
#define MAX_STEPS 90
#define MAX_BUFFER 8192
/* The host backend's arena granularity: each owner occupies a multiple. */
#define GRANULE 256

enum step_kind { S_CREATE, S_VIEW, S_WRITE, S_READ, S_KERNEL, S_RELEASE, S_SYNC, S_ITERATION };

/* A handle as the program sees it: a window [off, off + len) of an owner. */
struct prog_handle {
	uint32_t owner;
	uint64_t off; /* absolute, in the owner */
	uint64_t len;
};

struct prog_kernel {
	uint64_t seed;
	uint32_t count;
	bool named;
	bool no_fn; /* launched with fn NULL (only when nothing is written) */
	bool on_host; /* a host kernel */
	uint32_t handle[MAX_OPERANDS];
	dao_mode mode[MAX_OPERANDS];
	uint64_t size[MAX_OPERANDS];
};

struct prog_step {
	enum step_kind kind;
	uint32_t h;        /* the handle acted on; for CREATE and VIEW the new one */
	uint32_t parent;   /* VIEW: the handle viewed */
	uint64_t off, len; /* VIEW: in the parent; WRITE, READ: in the handle */
	uint64_t seed;     /* WRITE: contents */
	uint32_t kernel;
};

struct program {
	uint32_t scale; /* buffer sizes are this many times the usual ones */
	struct prog_step steps[MAX_STEPS * 3];
	size_t nsteps;
	struct prog_handle handles[MAX_STEPS * 3];
	size_t nhandles;
	uint64_t owner_size[MAX_STEPS];
	size_t nowners;
	struct prog_kernel kernels[MAX_STEPS];
	size_t nkernels;
	uint64_t read_bytes;
	uint64_t peak;       /* most live owner bytes at any step, in granules */
	uint64_t max_kernel; /* most distinct owner bytes one device kernel needs */
	uint64_t max_buffer;
	uint64_t handles_left; /* never released: dao_close reports them */
	uint64_t owners_left;  /* owners still referenced at the end */
};

static inline uint64_t granules(uint64_t bytes)
{
	return (bytes + GRANULE - 1) / GRANULE * GRANULE;
}

static inline uint64_t mix64(uint64_t x)
{
	return test_rng_next(&x);
}

/* ------------------------------------------------------------ the kernel */

static inline uint64_t hash_bytes(uint64_t h, const unsigned char *p, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return mix64(h ^ len);
}

/*
 * The same function runs under libdao and in the reference. It first hashes
 * every operand it reads, then overwrites each w operand whole from that
 * hash and transforms each rw operand in place, in operand order, so that
 * operands aliasing one owner behave alike in both. It also checks what the
 * executor handed over and fails the kernel when that is wrong.
 */
static inline int prop_kernel(const dao_kernel_args *a)
{
	const struct prog_kernel *k = a->user;
	uint64_t h = k->seed;

	if (a->count != k->count)
		return 1;
	for (uint32_t i = 0; i < k->count; i++)
		if (a->sizes[i] != k->size[i] || (k->size[i] && !a->ptrs[i]))
			return 1;
	for (uint32_t i = 0; i < k->count; i++)
		if (k->mode[i] != DAO_W)
			h = hash_bytes(h, a->ptrs[i], a->sizes[i]);
	for (uint32_t i = 0; i < k->count; i++) {
		unsigned char *p = a->ptrs[i];
		uint64_t st = mix64(h + i);

		if (k->mode[i] == DAO_W) {
			test_fill(p, a->sizes[i], st);
		} else if (k->mode[i] == DAO_RW) {
			for (uint64_t j = 0; j < a->sizes[i]; j++)
				p[j] = (unsigned char)((p[j] * 5u + 1u) ^ (unsigned char)(st >> (j % 57)));
		}
	}
	return 0;
}

/* ------------------------------------------------------------- generator */

struct gen {
	uint64_t rng;
	struct program *p;
	bool alive[MAX_STEPS * 3];
	uint32_t refs[MAX_STEPS];
	bool init[MAX_STEPS]; /* every byte of the owner has been defined */
	uint64_t live;
};

static inline uint64_t pick_size_unscaled(uint64_t *rng)
{
	switch (test_rng_next(rng) % 10) {
	case 0:
		return 0;
	case 1:
	case 2:
	case 3:
		return test_rng_range(rng, 1, 64);
	case 4:
	case 5:
	case 6:
	case 7:
		return test_rng_range(rng, 65, 2048);
	default:
		return test_rng_range(rng, 2049, MAX_BUFFER);
	}
}

/* A size of the program's distribution, times its scale. */
static inline uint64_t pick_size(struct gen *g)
{
	return pick_size_unscaled(&g->rng) * g->p->scale;
}

static inline bool covers_owner(const struct program *p, uint32_t h)
{
	const struct prog_handle *ph = &p->handles[h];

	return ph->off == 0 && ph->len == p->owner_size[ph->owner];
}

/* A random live handle, or -1 when there is none. */
static inline int pick_alive(struct gen *g)
{
	size_t n = g->p->nhandles;

	if (n == 0)
		return -1;
	for (size_t start = test_rng_next(&g->rng) % n, i = 0; i < n; i++) {
		size_t h = (start + i) % n;

		if (g->alive[h])
			return (int)h;
	}
	return -1;
}

static inline struct prog_step *add_step(struct program *p, enum step_kind kind)
{
	struct prog_step *s = &p->steps[p->nsteps++];

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	return s;
}

static inline void gen_create(struct gen *g)
{
	struct program *p = g->p;
	uint64_t size = pick_size(g);
	uint32_t o = (uint32_t)p->nowners++;
	uint32_t h = (uint32_t)p->nhandles++;
	struct prog_step *s = add_step(p, S_CREATE);

	p->owner_size[o] = size;
	p->handles[h] = (struct prog_handle){ .owner = o, .off = 0, .len = size };
	s->h = h;
	s->len = size;
	g->alive[h] = true;
	g->refs[o] = 1;
	g->init[o] = size == 0;
	g->live += granules(size);
	if (g->live > p->peak)
		p->peak = g->live;
	if (granules(size) > p->max_buffer)
		p->max_buffer = granules(size);
	/* Half the buffers get their input at once, the rest from a w kernel. */
	if (size && test_rng_chance(&g->rng, 1, 2)) {
		s = add_step(p, S_WRITE);
		s->h = h;
		s->len = size;
		s->seed = test_rng_next(&g->rng);
		g->init[o] = true;
	}
}

static inline void gen_view(struct gen *g, uint32_t parent)
{
	struct program *p = g->p;
	const struct prog_handle *ph = &p->handles[parent];
	uint64_t off = test_rng_range(&g->rng, 0, ph->len);
	uint64_t len = test_rng_range(&g->rng, 0, ph->len - off);
	uint32_t h = (uint32_t)p->nhandles++;
	struct prog_step *s = add_step(p, S_VIEW);

	/* Now and then a view of the whole parent, so views can initialise. */
	if (test_rng_chance(&g->rng, 1, 4)) {
		off = 0;
		len = ph->len;
	}
	p->handles[h] = (struct prog_handle){ .owner = ph->owner, .off = ph->off + off, .len = len };
	s->h = h;
	s->parent = parent;
	s->off = off;
	s->len = len;
	g->alive[h] = true;
	g->refs[ph->owner]++;
}

/* A sub-range of handle h; all of it when the owner is not yet defined. */
static inline void gen_access(struct gen *g, enum step_kind kind, uint32_t h)
{
	struct program *p = g->p;
	const struct prog_handle *ph = &p->handles[h];
	struct prog_step *s;
	uint64_t off = 0, len = ph->len;

	if (!g->init[ph->owner] && (kind == S_READ || !covers_owner(p, h)))
		return;
	if (g->init[ph->owner] && test_rng_chance(&g->rng, 1, 2)) {
		off = test_rng_range(&g->rng, 0, ph->len);
		len = test_rng_range(&g->rng, 0, ph->len - off);
	}
	s = add_step(p, kind);
	s->h = h;
	s->off = off;
	s->len = len;
	s->seed = test_rng_next(&g->rng);
	if (kind == S_READ)
		p->read_bytes += len;
	else
		g->init[ph->owner] = true;
}

static inline void gen_kernel(struct gen *g)
{
	struct program *p = g->p;
	struct prog_kernel *k = &p->kernels[p->nkernels];
	uint32_t want = test_rng_chance(&g->rng, 1, 20) ? 0
							: (uint32_t)test_rng_range(&g->rng, 1, MAX_OPERANDS);
	bool seen[MAX_STEPS] = { false };
	bool writes = false;
	uint64_t need = 0;
	struct prog_step *s;

	memset(k, 0, sizeof(*k));
	k->seed = test_rng_next(&g->rng);
	for (int tries = 0; k->count < want && tries < 4 * MAX_OPERANDS; tries++) {
		int h = pick_alive(g);
		uint32_t o, i = k->count;

		if (h < 0)
			break;
		o = p->handles[h].owner;
		if (g->init[o])
			k->mode[i] = (dao_mode)test_rng_range(&g->rng, DAO_R, DAO_RW);
		else if (covers_owner(p, (uint32_t)h))
			k->mode[i] = DAO_W; /* the only defined way to give it contents */
		else
			continue;
		k->handle[i] = (uint32_t)h;
		k->size[i] = p->handles[h].len;
		k->count++;
		writes |= k->mode[i] == DAO_W;
		if (!seen[o]) {
			seen[o] = true;
			need += granules(p->owner_size[o]);
		}
	}
	/* Owners become defined only after the kernel: none of its operands may
	 * read what it is about to define. */
	for (uint32_t i = 0; i < k->count; i++)
		if (k->mode[i] == DAO_W && covers_owner(p, k->handle[i]))
			g->init[p->handles[k->handle[i]].owner] = true;
	k->named = test_rng_chance(&g->rng, 1, 2);
	k->no_fn = !writes && test_rng_chance(&g->rng, 1, 10);
	/* From bits of its seed, not a draw: a seed gives the same program
	 * as before host kernels. Their operands need no device room. */
	k->on_host = (k->seed >> 40) % 4 == 0;
	if (!k->on_host && need > p->max_kernel)
		p->max_kernel = need;
	s = add_step(p, S_KERNEL);
	s->kernel = (uint32_t)p->nkernels++;
}

static inline void gen_release(struct gen *g, uint32_t h)
{
	struct program *p = g->p;
	uint32_t o = p->handles[h].owner;

	add_step(p, S_RELEASE)->h = h;
	g->alive[h] = false;
	if (--g->refs[o] == 0)
		g->live -= granules(p->owner_size[o]);
}

/* The program of a seed; scale 1 gives test_property's programs. */
static inline void generate(struct program *p, uint64_t seed, uint32_t scale)
{
	struct gen *g = calloc(1, sizeof(*g));
	size_t nsteps;

	if (!g)
		tap_bail("out of memory");
	memset(p, 0, sizeof(*p));
	p->scale = scale;
	g->p = p;
	g->rng = seed;
	nsteps = test_rng_range(&g->rng, 5, MAX_STEPS - 10);
	while (p->nsteps < nsteps && p->nowners < MAX_STEPS - 1 && p->nkernels < MAX_STEPS - 1 &&
	       p->nhandles < MAX_STEPS * 2) {
		unsigned r = (unsigned)(test_rng_next(&g->rng) % 100);
		int h = pick_alive(g);

		if (h < 0 || r < 15)
			gen_create(g);
		else if (r < 25)
			gen_view(g, (uint32_t)h);
		else if (r < 33)
			gen_access(g, S_WRITE, (uint32_t)h);
		else if (r < 43)
			gen_access(g, S_READ, (uint32_t)h);
		else if (r < 85)
			gen_kernel(g);
		else if (r < 95)
			gen_release(g, (uint32_t)h);
		else if (r < 98)
			add_step(p, S_SYNC);
		else
			add_step(p, S_ITERATION);
	}
	/* Final contents: every defined handle is read whole. */
	for (uint32_t h = 0; h < p->nhandles; h++) {
		if (!g->alive[h] || !g->init[p->handles[h].owner])
			continue;
		add_step(p, S_READ)->h = h;
		p->steps[p->nsteps - 1].len = p->handles[h].len;
		p->read_bytes += p->handles[h].len;
	}
	/* Release some of the rest just before the end; dao_close counts the
	 * others as leaks. */
	for (uint32_t h = 0; h < p->nhandles; h++)
		if (g->alive[h] && test_rng_chance(&g->rng, 1, 2))
			gen_release(g, h);
	for (uint32_t h = 0; h < p->nhandles; h++)
		p->handles_left += g->alive[h];
	for (uint32_t o = 0; o < p->nowners; o++)
		p->owners_left += g->refs[o] > 0;
	free(g);
}

/* ------------------------------------------------------------- reference */

static inline void run_reference(const struct program *p, unsigned char *reads)
{
	unsigned char *mem[MAX_STEPS] = { NULL };
	uint64_t pos = 0;

	for (size_t o = 0; o < p->nowners; o++) {
		/* Undefined contents are never read; fill them anyway. */
		mem[o] = malloc(p->owner_size[o] + 1);
		if (!mem[o])
			tap_bail("out of memory");
		memset(mem[o], 0xcd, p->owner_size[o] + 1);
	}
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct prog_step *s = &p->steps[i];
		const struct prog_handle *ph = &p->handles[s->h];
		const struct prog_kernel *k;
		void *ptrs[MAX_OPERANDS];
		uint64_t sizes[MAX_OPERANDS];
		dao_kernel_args args;

		switch (s->kind) {
		case S_WRITE:
			test_fill(mem[ph->owner] + ph->off + s->off, s->len, s->seed);
			break;
		case S_READ:
			memcpy(reads + pos, mem[ph->owner] + ph->off + s->off, s->len);
			pos += s->len;
			break;
		case S_KERNEL:
			k = &p->kernels[s->kernel];
			if (k->no_fn)
				break;
			for (uint32_t j = 0; j < k->count; j++) {
				const struct prog_handle *oh = &p->handles[k->handle[j]];

				ptrs[j] = mem[oh->owner] + oh->off;
				sizes[j] = oh->len;
			}
			args = (dao_kernel_args){ .user = (void *)k, .ptrs = ptrs, .sizes = sizes,
						  .count = k->count };
			if (prop_kernel(&args))
				tap_bail("reference kernel rejected its own operands");
			break;
		default:
			break;
		}
	}
	for (size_t o = 0; o < p->nowners; o++)
		free(mem[o]);
}

/* ----------------------------------------------------------- libdao runs */

/* Without DAO_CONFIG_PRIVATE in flags, the context is on the process's
 * shared device, whose statistics are not the program's: run_dao does not
 * check them. */
struct run_cfg {
	dao_policy policy;
	uint64_t budget;
	uint32_t lookahead;
	uint32_t flags;
};

struct run_result {
	dao_stats stats;
	char why[256];
};

#define RUN_FAIL(r, ...)                                              \
	do {                                                          \
		snprintf((r)->why, sizeof((r)->why), __VA_ARGS__);    \
		goto fail;                                            \
	} while (0)

/* Checks that hold after dao_sync whatever the policy decided. */
static inline bool stats_consistent(const struct program *p, const struct run_cfg *rc,
				    const dao_stats *s, struct run_result *r)
{
	if (s->kernels != p->nkernels)
		snprintf(r->why, sizeof(r->why), "stats.kernels %" PRIu64 ", ran %zu", s->kernels,
			 p->nkernels);
	else if (s->live_buffers != p->owners_left)
		snprintf(r->why, sizeof(r->why),
			 "after sync live_buffers %" PRIu64 ", owners referenced %" PRIu64,
			 s->live_buffers, p->owners_left);
	else if (s->budget_bytes != rc->budget)
		snprintf(r->why, sizeof(r->why), "budget_bytes %" PRIu64 ", asked %" PRIu64,
			 s->budget_bytes, rc->budget);
	else if (s->peak_device_bytes > s->budget_bytes || s->device_bytes > s->peak_device_bytes)
		snprintf(r->why, sizeof(r->why),
			 "device bytes %" PRIu64 " peak %" PRIu64 " budget %" PRIu64,
			 s->device_bytes, s->peak_device_bytes, s->budget_bytes);
	else if (s->prefetches > s->fetches || s->drops > s->evictions)
		snprintf(r->why, sizeof(r->why),
			 "prefetches %" PRIu64 " > fetches %" PRIu64 " or drops %" PRIu64
			 " > evictions %" PRIu64,
			 s->prefetches, s->fetches, s->drops, s->evictions);
	else
		return true;
	return false;
}

static inline bool run_dao(const struct program *p, const struct run_cfg *rc,
			   unsigned char *reads, struct run_result *r)
{
	dao_config cfg = test_config(rc->budget, rc->policy, rc->lookahead, rc->flags);
	dao_buf *hs = calloc(p->nhandles + 1, sizeof(*hs));
	unsigned char *tmp = malloc(p->max_buffer + 1);
	uint64_t pos = 0, leaked = 0;
	dao_ctx ctx;
	dao_status st;
	size_t i = 0;
	char name[32];

	if (!hs || !tmp)
		tap_bail("out of memory");
	r->why[0] = '\0';
	st = dao_open(&cfg, &ctx);
	if (st != DAO_OK) {
		snprintf(r->why, sizeof(r->why), "dao_open: %s", dao_strerror(st));
		free(hs);
		free(tmp);
		return false;
	}
	for (; i < p->nsteps; i++) {
		const struct prog_step *s = &p->steps[i];
		const struct prog_kernel *k;
		dao_operand ops[MAX_OPERANDS];

		switch (s->kind) {
		case S_CREATE:
			st = dao_buffer_create(ctx, s->len, &hs[s->h]);
			break;
		case S_VIEW:
			st = dao_view_create(ctx, hs[s->parent], s->off, s->len, &hs[s->h]);
			break;
		case S_WRITE:
			test_fill(tmp, s->len, s->seed);
			st = dao_write(ctx, hs[s->h], s->off, tmp, s->len);
			break;
		case S_READ:
			st = dao_read(ctx, hs[s->h], s->off, reads + pos, s->len);
			pos += s->len;
			break;
		case S_KERNEL:
			k = &p->kernels[s->kernel];
			for (uint32_t j = 0; j < k->count; j++)
				ops[j] = (dao_operand){ hs[k->handle[j]], k->mode[j] };
			snprintf(name, sizeof(name), "k%u", s->kernel);
			if (k->on_host)
				st = dao_launch_flags(ctx, k->named ? name : NULL, 1000,
						      DAO_LAUNCH_HOST, k->no_fn ? NULL : prop_kernel,
						      (void *)k, k->count ? ops : NULL, k->count);
			else if (k->named)
				st = dao_launch_named(ctx, name, 1000, k->no_fn ? NULL : prop_kernel,
						      (void *)k, k->count ? ops : NULL, k->count);
			else
				st = dao_launch(ctx, k->no_fn ? NULL : prop_kernel, (void *)k,
						k->count ? ops : NULL, k->count);
			break;
		case S_RELEASE:
			st = dao_release(ctx, hs[s->h]);
			break;
		case S_SYNC:
			st = dao_sync(ctx);
			break;
		case S_ITERATION:
			st = dao_iteration(ctx);
			break;
		}
		if (st != DAO_OK)
			RUN_FAIL(r, "step %zu (kind %d): %s", i, (int)s->kind, dao_strerror(st));
	}
	st = dao_sync(ctx);
	if (st != DAO_OK)
		RUN_FAIL(r, "final dao_sync: %s", dao_strerror(st));
	st = dao_stats_get(ctx, &r->stats);
	if (st != DAO_OK)
		RUN_FAIL(r, "dao_stats_get: %s", dao_strerror(st));
	if ((rc->flags & DAO_CONFIG_PRIVATE) && !stats_consistent(p, rc, &r->stats, r))
		goto fail;
	st = dao_close(ctx, &leaked);
	free(hs);
	free(tmp);
	if (st != DAO_OK) {
		snprintf(r->why, sizeof(r->why), "dao_close: %s", dao_strerror(st));
		return false;
	}
	if (leaked != p->handles_left) {
		snprintf(r->why, sizeof(r->why), "dao_close leaked %" PRIu64 ", expected %" PRIu64,
			 leaked, p->handles_left);
		return false;
	}
	return true;
fail:
	(void)dao_close(ctx, NULL);
	free(hs);
	free(tmp);
	return false;
}

/* percent of the program's peak live bytes, never below what its largest
 * kernel or buffer needs. */
static inline uint64_t budget_for(const struct program *p, unsigned percent)
{
	uint64_t b = granules(p->peak * percent / 100);

	if (b < p->max_kernel)
		b = p->max_kernel;
	if (b < p->max_buffer)
		b = p->max_buffer;
	return b < GRANULE ? GRANULE : b;
}

/* Where the first difference lies, for the diagnostic. */
static inline void describe_mismatch(const struct program *p, const unsigned char *want,
				     const unsigned char *got, char *out, size_t cap)
{
	uint64_t pos = 0;

	for (size_t i = 0; i < p->nsteps; i++) {
		const struct prog_step *s = &p->steps[i];

		if (s->kind != S_READ)
			continue;
		for (uint64_t j = 0; j < s->len; j++) {
			if (want[pos + j] != got[pos + j]) {
				snprintf(out, cap,
					 "step %zu reads handle %u [%" PRIu64 ", +%" PRIu64
					 "): byte %" PRIu64 " is %#x, reference %#x",
					 i, s->h, s->off, s->len, j, got[pos + j], want[pos + j]);
				return;
			}
		}
		pos += s->len;
	}
	snprintf(out, cap, "no difference found");
}

#endif /* DAO_TEST_RANDOM_PROGRAM_H */
