/* SPDX-License-Identifier: MIT */
/*
 * program.h - random libdao programs whose kernels only move bytes, so that
 * the same program runs on any backend (the kernels execute their actions
 * with memcpy/memset on host pointers, or with the CUDA calls a test hands
 * in on device pointers) and a plain-memory interpreter gives the exact
 * expected contents: any byte lost, stale or misplaced by residency shows.
 *
 * A program: buffers written whole from a seed, kernels of one to three
 * distinct buffers with random modes (r, w, rw; at least one written), now
 * and then an iteration mark, a host read of a buffer (checked by a hash of
 * what it returns) or a host write of part of one; a read of most buffers
 * at the end (the others are released unread, possibly still resident). A kernel
 * is a list of actions on its operands: fill an output with a byte, copy a
 * range of one operand into another. A w operand is filled whole first, so
 * it never depends on its old contents. About one kernel in four is a host
 * kernel (DAO_LAUNCH_HOST): the same actions, done with the CPU on its
 * operands' host copies, on every backend.
 */
#ifndef DAO_TEST_PROGRAM_H
#define DAO_TEST_PROGRAM_H

#include "../unit/common.h"

#define PROG_MAX_BUFS 64
#define PROG_MAX_KERNELS 400
#define PROG_MAX_OPS 3
#define PROG_MAX_ACTIONS 8

enum prog_action_kind { ACT_FILL, ACT_COPY };

struct prog_action {
	enum prog_action_kind kind;
	uint32_t dst, src; /* operand indices */
	uint64_t dst_off, src_off, len;
	int byte;
};

struct prog_kernel {
	bool on_host; /* launched with DAO_LAUNCH_HOST */
	uint32_t nops;
	uint32_t buf[PROG_MAX_OPS];
	dao_mode mode[PROG_MAX_OPS];
	uint32_t nact;
	struct prog_action act[PROG_MAX_ACTIONS];
	bool iteration_after; /* dao_iteration() follows it */
	int32_t read_after;   /* a buffer dao_read whole after it, or -1 */
	int32_t write_after;  /* a buffer dao_write'n after it, or -1 ... */
	uint64_t write_off, write_len, write_seed; /* ... with these bytes */
};

/* How a kernel's actions reach memory. stream is the launch's (NULL on
 * the host backend and for host kernels). Return 0 on success. */
struct prog_exec {
	int (*fill)(void *dst, int byte, uint64_t len, void *stream);
	int (*copy)(void *dst, const void *src, uint64_t len, void *stream);
	/* How a host kernel's actions reach memory (its operands' host
	 * copies, with the CPU); NULL: prog_host_exec. */
	const struct prog_exec *host;
};

struct program {
	uint32_t nbufs;
	uint64_t size[PROG_MAX_BUFS];
	uint64_t seed[PROG_MAX_BUFS]; /* initial contents */
	bool unread[PROG_MAX_BUFS];   /* released without the final read */
	uint32_t nkernels;
	struct prog_kernel k[PROG_MAX_KERNELS];
	uint32_t nreads; /* of read_after, in program order */
	/* bytes of the largest device kernel's operands (a host kernel's
	 * need no room on the device) */
	uint64_t largest_kernel;
	/* The tightest budget the program runs in: its largest device
	 * kernel's operands, and no less than its largest buffer, which
	 * dao_buffer_create refuses under a budget that can never hold it
	 * even when no kernel uses it. */
	uint64_t min_budget;
	uint64_t total;          /* bytes of all buffers */
};

/* Per launch: the kernel and how to execute it. */
struct prog_launch {
	const struct prog_kernel *k;
	const struct prog_exec *x;
};

static inline uint64_t prog_round(uint64_t v, uint64_t granule)
{
	return (v + granule - 1) / granule * granule;
}

/*
 * nbufs buffers of min_size..max_size bytes, nkernels kernels. granule:
 * the backend's allocation unit, for largest_kernel and min_budget (what
 * the tightest budget must hold).
 */
static inline void prog_generate(struct program *p, uint64_t *rng, uint32_t nbufs,
				 uint32_t nkernels, uint64_t min_size, uint64_t max_size,
				 uint64_t granule)
{
	/* Which kernels run on the host comes from a stream of its own, so
	 * that a seed gives the same buffers and kernels as before host
	 * kernels were drawn. */
	uint64_t host_rng = *rng ^ 0x686f73746b65726eull;

	memset(p, 0, sizeof(*p));
	p->nbufs = nbufs;
	p->nkernels = nkernels;
	for (uint32_t b = 0; b < nbufs; b++) {
		p->size[b] = test_rng_range(rng, min_size, max_size);
		p->seed[b] = test_rng_next(rng);
		p->unread[b] = test_rng_chance(rng, 1, 4);
		p->total += p->size[b];
	}
	for (uint32_t i = 0; i < nkernels; i++) {
		struct prog_kernel *k = &p->k[i];
		uint64_t bytes = 0;
		bool written = false;

		k->nops = (uint32_t)test_rng_range(rng, 1, nbufs < PROG_MAX_OPS ? nbufs : PROG_MAX_OPS);
		for (uint32_t o = 0; o < k->nops; o++) {
			uint32_t b;
			bool dup;

			do { /* distinct buffers */
				b = (uint32_t)test_rng_range(rng, 0, nbufs - 1);
				dup = false;
				for (uint32_t q = 0; q < o; q++)
					dup |= k->buf[q] == b;
			} while (dup);
			k->buf[o] = b;
			k->mode[o] = (dao_mode)test_rng_range(rng, DAO_R, DAO_RW);
			written |= k->mode[o] != DAO_R;
			bytes += prog_round(p->size[b], granule);
		}
		if (!written)
			k->mode[k->nops - 1] = DAO_RW;
		k->on_host = test_rng_chance(&host_rng, 1, 4);
		if (!k->on_host && bytes > p->largest_kernel)
			p->largest_kernel = bytes;
		/* Outputs w are filled whole first. */
		for (uint32_t o = 0; o < k->nops; o++)
			if (k->mode[o] == DAO_W)
				k->act[k->nact++] = (struct prog_action){
					.kind = ACT_FILL, .dst = o, .len = p->size[k->buf[o]],
					.byte = (int)test_rng_range(rng, 0, 255)
				};
		while (k->nact < PROG_MAX_ACTIONS && test_rng_chance(rng, 3, 4)) {
			struct prog_action a = { 0 };
			uint64_t dsz, ssz;

			a.dst = (uint32_t)test_rng_range(rng, 0, k->nops - 1);
			if (k->mode[a.dst] == DAO_R)
				continue;
			dsz = p->size[k->buf[a.dst]];
			a.src = (uint32_t)test_rng_range(rng, 0, k->nops - 1);
			if (a.src == a.dst) {
				a.kind = ACT_FILL;
				a.len = test_rng_range(rng, 1, dsz);
				a.dst_off = test_rng_range(rng, 0, dsz - a.len);
				a.byte = (int)test_rng_range(rng, 0, 255);
			} else {
				ssz = p->size[k->buf[a.src]];
				a.kind = ACT_COPY;
				a.len = test_rng_range(rng, 1, dsz < ssz ? dsz : ssz);
				a.dst_off = test_rng_range(rng, 0, dsz - a.len);
				a.src_off = test_rng_range(rng, 0, ssz - a.len);
			}
			k->act[k->nact++] = a;
		}
		k->iteration_after = test_rng_chance(rng, 1, 16);
		k->read_after = -1;
		k->write_after = -1;
		if (test_rng_chance(rng, 1, 8)) {
			k->read_after = (int32_t)test_rng_range(rng, 0, nbufs - 1);
			p->nreads++;
		}
		if (test_rng_chance(rng, 1, 8)) {
			uint64_t sz;

			k->write_after = (int32_t)test_rng_range(rng, 0, nbufs - 1);
			sz = p->size[k->write_after];
			/* Whole (a w access) or part (rw) of it. */
			k->write_len = test_rng_chance(rng, 1, 2) ? sz : test_rng_range(rng, 1, sz);
			k->write_off = test_rng_range(rng, 0, sz - k->write_len);
			k->write_seed = test_rng_next(rng);
		}
	}
	p->min_budget = p->largest_kernel;
	for (uint32_t b = 0; b < nbufs; b++)
		if (prog_round(p->size[b], granule) > p->min_budget)
			p->min_budget = prog_round(p->size[b], granule);
}

/* FNV-1a: what a mid-program read returned, in one number. */
static inline uint64_t prog_hash(const uint8_t *b, uint64_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint64_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static inline int prog_apply(const struct prog_kernel *k, void *const *ptrs,
			     const struct prog_exec *x, void *stream)
{
	for (uint32_t i = 0; i < k->nact; i++) {
		const struct prog_action *a = &k->act[i];
		char *dst = (char *)ptrs[a->dst] + a->dst_off;
		int rc = a->kind == ACT_FILL
				 ? x->fill(dst, a->byte, a->len, stream)
				 : x->copy(dst, (const char *)ptrs[a->src] + a->src_off, a->len, stream);

		if (rc)
			return rc;
	}
	return 0;
}

static inline int prog_kernel_fn(const dao_kernel_args *args)
{
	const struct prog_launch *l = args->user;

	return prog_apply(l->k, args->ptrs, l->x, args->stream);
}

static inline int prog_host_fill(void *dst, int byte, uint64_t len, void *stream)
{
	memset(dst, byte, len);
	return 0;
}

static inline int prog_host_copy(void *dst, const void *src, uint64_t len, void *stream)
{
	memcpy(dst, src, len);
	return 0;
}

static const struct prog_exec prog_host_exec = { prog_host_fill, prog_host_copy, NULL };

/* The bytes of a mid-program write (tmp: at least write_len bytes). */
static inline void prog_write_bytes(const struct prog_kernel *k, uint8_t *tmp)
{
	test_fill(tmp, k->write_len, k->write_seed);
}

/* What the program must read back, buffer by buffer (out[b]: size[b]
 * bytes), and the hash of each mid-program read (reads[nreads]). */
static inline void prog_reference(const struct program *p, uint8_t **out, uint64_t *reads)
{
	uint32_t r = 0;

	for (uint32_t b = 0; b < p->nbufs; b++)
		test_fill(out[b], p->size[b], p->seed[b]);
	for (uint32_t i = 0; i < p->nkernels; i++) {
		const struct prog_kernel *k = &p->k[i];
		void *ptrs[PROG_MAX_OPS];

		for (uint32_t o = 0; o < k->nops; o++)
			ptrs[o] = out[k->buf[o]];
		prog_apply(k, ptrs, &prog_host_exec, NULL);
		if (k->read_after >= 0)
			reads[r++] = prog_hash(out[k->read_after], p->size[k->read_after]);
		if (k->write_after >= 0)
			prog_write_bytes(k, out[k->write_after] + k->write_off);
	}
}

/* Launch kernel i of p on bufs, executed by x; l is its launch record,
 * which the kernel function reads until it has run. */
static inline dao_status prog_launch_one(const struct program *p, uint32_t i, dao_ctx ctx,
					 const dao_buf *bufs, const struct prog_exec *x,
					 struct prog_launch *l)
{
	const struct prog_kernel *k = &p->k[i];
	dao_operand ops[PROG_MAX_OPS];

	*l = (struct prog_launch){ k, x };
	for (uint32_t o = 0; o < k->nops; o++)
		ops[o] = (dao_operand){ bufs[k->buf[o]], k->mode[o] };
	if (k->on_host) {
		l->x = x->host ? x->host : &prog_host_exec;
		return dao_launch_flags(ctx, NULL, 0, DAO_LAUNCH_HOST, prog_kernel_fn, l, ops,
					k->nops);
	}
	return dao_launch(ctx, prog_kernel_fn, l, ops, k->nops);
}

/*
 * Run p on ctx with the kernels executed by x; out[b] gets what each
 * buffer reads back at the end, reads[] the hash of each mid-program read.
 * DAO_OK, or the first failing status. tmp: a scratch of the largest
 * buffer's size.
 */
static inline dao_status prog_run(const struct program *p, dao_ctx ctx, const struct prog_exec *x,
				  uint8_t **out, uint64_t *reads, uint8_t *tmp)
{
	struct prog_launch *l = calloc(p->nkernels, sizeof(*l));
	dao_buf bufs[PROG_MAX_BUFS];
	uint32_t made = 0, r = 0;
	dao_status st = l ? DAO_OK : DAO_ERR_NOMEM;

	for (; st == DAO_OK && made < p->nbufs; made++) {
		st = dao_buffer_create(ctx, p->size[made], &bufs[made]);
		if (st != DAO_OK)
			break;
		test_fill(out[made], p->size[made], p->seed[made]);
		st = dao_write(ctx, bufs[made], 0, out[made], p->size[made]);
	}
	for (uint32_t i = 0; st == DAO_OK && i < p->nkernels; i++) {
		const struct prog_kernel *k = &p->k[i];

		st = prog_launch_one(p, i, ctx, bufs, x, &l[i]);
		if (st == DAO_OK && k->iteration_after)
			st = dao_iteration(ctx);
		if (st == DAO_OK && k->read_after >= 0) {
			st = dao_read(ctx, bufs[k->read_after], 0, tmp, p->size[k->read_after]);
			reads[r++] = prog_hash(tmp, p->size[k->read_after]);
		}
		if (st == DAO_OK && k->write_after >= 0) {
			prog_write_bytes(k, tmp);
			st = dao_write(ctx, bufs[k->write_after], k->write_off, tmp, k->write_len);
		}
	}
	for (uint32_t b = 0; st == DAO_OK && b < p->nbufs; b++)
		if (!p->unread[b])
			st = dao_read(ctx, bufs[b], 0, out[b], p->size[b]);
	if (st == DAO_OK)
		st = dao_sync(ctx);
	for (uint32_t b = 0; b < made; b++) {
		dao_status rel = dao_release(ctx, bufs[b]);

		if (st == DAO_OK)
			st = rel;
	}
	free(l);
	return st;
}

/* Buffers for a program's results; exits on failure (setup, not a check). */
static inline uint8_t **prog_out_alloc(const struct program *p)
{
	uint8_t **out = calloc(p->nbufs, sizeof(*out));

	if (!out)
		tap_bail("out of memory");
	for (uint32_t b = 0; b < p->nbufs; b++)
		if (!(out[b] = malloc(p->size[b])))
			tap_bail("out of memory");
	return out;
}

static inline void prog_out_free(const struct program *p, uint8_t **out)
{
	for (uint32_t b = 0; b < p->nbufs; b++)
		free(out[b]);
	free(out);
}

/* Index of the first buffer whose contents differ, nbufs + i for the
 * first mid-program read i that differs, or -1. */
static inline int prog_compare(const struct program *p, uint8_t **got, uint8_t **want,
			       const uint64_t *got_reads, const uint64_t *want_reads)
{
	for (uint32_t b = 0; b < p->nbufs; b++)
		if (!p->unread[b] && memcmp(got[b], want[b], p->size[b]))
			return (int)b;
	for (uint32_t i = 0; i < p->nreads; i++)
		if (got_reads[i] != want_reads[i])
			return (int)(p->nbufs + i);
	return -1;
}

/* Everything one run of a program needs besides the program. */
struct prog_result {
	uint8_t **out;
	uint64_t *reads;
	uint8_t *tmp;
};

static inline void prog_result_alloc(const struct program *p, struct prog_result *r)
{
	uint64_t max = 1;

	for (uint32_t b = 0; b < p->nbufs; b++)
		if (p->size[b] > max)
			max = p->size[b];
	r->out = prog_out_alloc(p);
	r->reads = calloc(p->nreads + 1, sizeof(*r->reads));
	r->tmp = malloc(max);
	if (!r->reads || !r->tmp)
		tap_bail("out of memory");
}

static inline void prog_result_free(const struct program *p, struct prog_result *r)
{
	prog_out_free(p, r->out);
	free(r->reads);
	free(r->tmp);
}

#endif /* DAO_TEST_PROGRAM_H */
