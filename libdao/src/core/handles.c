/* SPDX-License-Identifier: MIT */
/*
 * handles.c - handles: what a dao_ctx or a dao_buf names.
 *
 * A dao_ctx is (generation << 32 | slot + 1) in a process-wide table, so a
 * closed or forged handle is refused instead of dereferenced.
 *
 * A dao_buf is tag(12) | generation(28) | slot + 1 (24 bits). The tag names
 * the context, so a handle passed to the wrong context is recognised; the
 * generation changes whenever a slot is freed, so a released handle never
 * names the buffer that later takes its slot (decision 1). A slot that has
 * issued all 2^28 generations retires instead of wrapping: one slot record
 * per 2^28 releases stays allocated until the context closes, and the 2^24
 * slot numbers would last 2^52 releases.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/fault.h"
#include "base/log.h"
#include "core/chunks.h"
#include "core/inbox.h"
#include "core/queue.h"
#include "core/lock.h"
#include "core/record.h"
#include "core/handles.h"

#define SLOT_BITS 24
#define GEN_BITS 28
#define SLOT_MASK ((1u << SLOT_BITS) - 1)
#define GEN_MASK ((1u << GEN_BITS) - 1)

static _Atomic uint32_t gen_seed = 1;
/* Tags of open contexts, to tell a foreign handle from garbage: written
 * under the registry's lock, read by any lookup. */
static _Atomic uint32_t tags_open[(CTX_TAGS + 1) / 32];
/* The tag given last: the next search starts after it, so a closed
 * context's tag is the last to be given again (its stale handles then meet
 * DAO_ERR_HANDLE for as long as possible). Registry lock. */
static uint32_t tag_cursor;

static bool tag_is_open(uint32_t tag)
{
	return atomic_load(&tags_open[tag / 32]) & (1u << (tag % 32));
}

/* A tag no open context holds; DAO_ERR_LIMIT when all are held. */
static dao_status tag_alloc(uint32_t *tag)
{
	for (uint32_t n = 0; n < CTX_TAGS; n++) {
		uint32_t t = tag_cursor % CTX_TAGS + 1;

		tag_cursor = t;
		if (!tag_is_open(t)) {
			atomic_fetch_or(&tags_open[t / 32], 1u << (t % 32));
			*tag = t;
			return DAO_OK;
		}
	}
	return DAO_ERR_LIMIT;
}

static void tag_free(uint32_t tag)
{
	atomic_fetch_and(&tags_open[tag / 32], ~(1u << (tag % 32)));
}

dao_buf slot_handle(const struct ctx *c, uint32_t idx)
{
	const struct slot *s = &c->slots[idx];

	return (dao_buf){ ((uint64_t)c->tag << (SLOT_BITS + GEN_BITS)) |
			  ((uint64_t)(s->gen & GEN_MASK) << SLOT_BITS) | (idx + 1) };
}

dao_status slot_lookup(struct ctx *c, dao_buf b, struct slot **out)
{
	uint32_t idx = (uint32_t)(b.id & SLOT_MASK);
	uint32_t gen = (uint32_t)((b.id >> SLOT_BITS) & GEN_MASK);
	uint32_t tag = (uint32_t)(b.id >> (SLOT_BITS + GEN_BITS));
	struct slot *s;

	if (tag != c->tag) {
		if (tag && tag_is_open(tag))
			return DAO_ERR_FOREIGN;
		return DAO_ERR_HANDLE;
	}
	if (idx == 0 || idx > __atomic_load_n(&c->fresh, __ATOMIC_ACQUIRE))
		return DAO_ERR_HANDLE;
	s = &c->slots[idx - 1];
	/* The generation first: a create without dev->mu writes only free
	 * slots, whose generation no live handle carries, and their refs
	 * last (dao_buffer_create). */
	if ((s->gen & GEN_MASK) != gen || !__atomic_load_n(&s->refs, __ATOMIC_ACQUIRE))
		return DAO_ERR_HANDLE;
	*out = s;
	return DAO_OK;
}

/*
 * The slot table grows by doubling. Outside AddressSanitizer it starts as
 * one huge-page chunk (core/chunks.c) and grows by mremap into a mapping
 * aligned to huge pages: the slots already there are neither copied nor
 * touched again, and the kernel may back the table with huge pages, one
 * fault per 2 MiB instead of per 4 KiB (advice; fine if refused). Under
 * AddressSanitizer it stays a heap block, which ASan watches.
 */
#ifdef __SANITIZE_ADDRESS__
#define SLOTS_FIRST 64u

static struct slot *table_grow(struct slot *old, size_t old_bytes, size_t bytes)
{
	(void)old_bytes;
	return fault_realloc(old, bytes);
}

void slot_table_free(struct ctx *c)
{
	free(c->slots);
	c->slots = NULL;
	c->nslots = c->fresh = 0;
}

void slot_table_prime(struct ctx *c)
{
	(void)c;
}
#else
static size_t page_up(size_t n)
{
	size_t page = 4096;

	return (n + page - 1) & ~(page - 1);
}

/* A table of at least HUGE_BYTES is a mapping aligned to them, so the
 * kernel may back all of it with huge pages. The first is one huge page
 * (43,690 slots): its pages are touched only as creates reach them, and
 * one fault brings in what 512 faults of small pages would (each costs
 * as much as a hundred creates on a virtual machine), and the table moves
 * only beyond it. */
#define HUGE_BYTES CHUNK_BYTES
#define SLOTS_FIRST ((uint32_t)(HUGE_BYTES / sizeof(struct slot)))

static size_t table_bytes(size_t n)
{
	return n >= HUGE_BYTES ? (n + HUGE_BYTES - 1) & ~(size_t)(HUGE_BYTES - 1) : page_up(n);
}

static struct slot *table_grow(struct slot *old, size_t old_bytes, size_t bytes)
{
	size_t want = table_bytes(bytes);
	char *at;
	bool zero;

	/* The first: one chunk, faulted in now if fresh (slots are written
	 * when handed out; dao_open takes it: slot_table_prime). */
	if (!old) {
		at = chunk_get(&zero);
		if (at && zero)
			chunk_fault_in(at);
		return (struct slot *)(void *)at;
	}
	at = chunk_map(want);
	if (!at)
		return NULL;
	/* The slots already there move with their pages, neither copied
	 * nor touched again. */
	if (mremap(old, table_bytes(old_bytes), want, MREMAP_MAYMOVE | MREMAP_FIXED, at) ==
	    MAP_FAILED) {
		munmap(at, want);
		return NULL;
	}
	madvise(at, want, MADV_HUGEPAGE);
	return (struct slot *)(void *)at;
}


void slot_table_free(struct ctx *c)
{
	if (c->slots && c->nslots == SLOTS_FIRST)
		chunk_put(c->slots); /* the next context's first table */
	else if (c->slots)
		munmap(c->slots, table_bytes((size_t)c->nslots * sizeof(*c->slots)));
	c->slots = NULL;
	c->nslots = c->fresh = 0;
}
#endif

/* One doubling of c's table; the first is SLOTS_FIRST slots. */
static dao_status slot_table_grow(struct ctx *c)
{
	uint32_t n = c->nslots ? c->nslots * 2 : SLOTS_FIRST;
	struct slot *v;

	if (c->nslots >= SLOT_MASK)
		return DAO_ERR_LIMIT;
	if (n > SLOT_MASK)
		n = SLOT_MASK;
	v = table_grow(c->slots, (size_t)c->nslots * sizeof(*v), (size_t)n * sizeof(*v));
	if (!v)
		return DAO_ERR_NOMEM;
	c->slots = v;
	c->nslots = n;
	return DAO_OK;
}

#ifndef __SANITIZE_ADDRESS__
void slot_table_prime(struct ctx *c)
{
	/* On failure the first create tries again. */
	if (!c->slots)
		(void)slot_table_grow(c);
}
#endif

bool slot_table_full(const struct ctx *c)
{
	return !c->free_head && c->fresh == c->nslots;
}

/*
 * A slot never used before is written only when it is handed out, so the
 * table's pages are touched one by one as creates reach them, not all at
 * each doubling. Its first generation comes from a process-wide sequence:
 * slots of other contexts and tables start apart.
 */
dao_status slot_new(struct ctx *c, uint32_t *idx)
{
	if (c->free_head) {
		*idx = c->free_head - 1;
		c->free_head = c->slots[*idx].next_free;
		return DAO_OK;
	}
	if (c->fresh == c->nslots) {
		dao_status st = slot_table_grow(c);

		if (st != DAO_OK)
			return st;
	}
	{
		uint32_t i = c->fresh, gen = atomic_fetch_add(&gen_seed, 7919u);

		c->slots[i] = (struct slot){ .gen = gen, .gen_first = gen };
		/* After the slot is written: lookups without slot_mu read
		 * slots below it only (slot_lookup). */
		__atomic_store_n(&c->fresh, i + 1, __ATOMIC_RELEASE);
		*idx = i;
	}
	return DAO_OK;
}

void slot_put(struct ctx *c, uint32_t idx)
{
	struct slot *s = &c->slots[idx];

	s->gen++;
	s->refs = 0;
	s->rec = NULL;
	c->live_handles--;
	if (((s->gen ^ s->gen_first) & GEN_MASK) == 0)
		return; /* every generation used: retired, never free again */
	s->next_free = c->free_head;
	c->free_head = idx + 1;
}

/* Give back a slot slot_new just handed out, unused: as if never taken. */
void slot_put_unused(struct ctx *c, uint32_t idx)
{
	c->slots[idx].next_free = c->free_head;
	c->free_head = idx + 1;
}

uint32_t slot_index(dao_buf b)
{
	return (uint32_t)(b.id & SLOT_MASK) - 1;
}

struct reg_slot {
	uint32_t gen;
	struct ctx *c;
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cv = PTHREAD_COND_INITIALIZER;

/* ctx->calls: the count of calls in flight in the low bits, this bit once
 * close began. Entering and closing change it under reg_mu; leaving
 * subtracts without it, and wakes the closer only when it leaves last
 * after the close began (it never touches the context after that, since
 * the closer may free it at once). */
#define CTX_CLOSING (1u << 31)

static bool ctx_closing(const struct ctx *c)
{
	return __atomic_load_n(&c->calls, __ATOMIC_SEQ_CST) & CTX_CLOSING;
}
static struct reg_slot *reg;
static uint32_t nreg;

/* The open context h names, or NULL when it names none or one that is
 * closing. Caller holds reg_mu. */
static struct ctx *live_ctx(dao_ctx h)
{
	uint32_t idx = (uint32_t)h.id, gen = (uint32_t)(h.id >> 32);
	struct ctx *c;

	if (idx == 0 || idx > nreg || reg[idx - 1].gen != gen || !(c = reg[idx - 1].c) ||
	    ctx_closing(c))
		return NULL;
	return c;
}

/* A kernel function runs on its device's executor, which waits for it: a call
 * from there that queues work or waits for queued work could never finish. */
static dao_status enter_unlocked(dao_ctx h, bool queues_or_waits, struct ctx **out)
{
	struct ctx *c;

	pthread_mutex_lock(&reg_mu);
	if (!(c = live_ctx(h))) {
		pthread_mutex_unlock(&reg_mu);
		return DAO_ERR_CLOSED;
	}
	if (queues_or_waits && queue_consumer_is_current(c->dev)) {
		pthread_mutex_unlock(&reg_mu);
		dao_log_at(c->log_level, DAO_LOG_ERROR,
			   "called from inside a kernel function on the device that runs it");
		return DAO_ERR_REENTRANT;
	}
	__atomic_fetch_add(&c->calls, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&reg_mu);
	dao_log_scope_push(c->log_level);
	*out = c;
	return DAO_OK;
}

void ctx_lock_device(struct ctx *c)
{
	dev_lock(c->dev);
	/* What the call looks at includes every launch and every buffer
	 * made before it. */
	inbox_drain(c->dev);
	rec_adopt(c->dev);
	/* Deterministic mode: the job's calls interleave with whole ops only,
	 * so what the executor sees never depends on thread timing. */
	if (c->dev->flags & DAO_CONFIG_DETERMINISTIC)
		queue_wait_turn(c->dev);
}

static dao_status enter(dao_ctx h, bool queues_or_waits, struct ctx **out)
{
	dao_status st = enter_unlocked(h, queues_or_waits, out);

	if (st == DAO_OK)
		ctx_lock_device(*out);
	return st;
}

dao_status ctx_enter(dao_ctx h, struct ctx **out)
{
	return enter(h, false, out);
}

dao_status ctx_enter_to_queue(dao_ctx h, struct ctx **out)
{
	return enter(h, true, out);
}

dao_status ctx_enter_unlocked(dao_ctx h, struct ctx **out)
{
	return enter_unlocked(h, false, out);
}

dao_status ctx_enter_to_launch(dao_ctx h, struct ctx **out)
{
	return enter_unlocked(h, true, out);
}

void ctx_leave(struct ctx *c)
{
	dev_unlock(c->dev);
	ctx_leave_unlocked(c);
}

void ctx_leave_unlocked(struct ctx *c)
{
	dao_log_scope_pop();
	if (__atomic_sub_fetch(&c->calls, 1, __ATOMIC_SEQ_CST) == CTX_CLOSING) {
		/* The closer waits under reg_mu: taking it here means the
		 * broadcast reaches it. */
		pthread_mutex_lock(&reg_mu);
		pthread_cond_broadcast(&reg_cv);
		pthread_mutex_unlock(&reg_mu);
	}
}

dao_status registry_insert(struct ctx *c)
{
	dao_status st;
	uint32_t i;

	for (i = 0; i < nreg; i++)
		if (!reg[i].c)
			break;
	if (i == nreg) {
		struct reg_slot *n = fault_realloc(reg, (nreg + 16) * sizeof(*n));

		if (!n)
			return DAO_ERR_NOMEM;
		memset(n + nreg, 0, 16 * sizeof(*n));
		reg = n;
		nreg += 16;
	}
	st = tag_alloc(&c->tag);
	if (st != DAO_OK) {
		dao_err("%u contexts are open: no context tag is free", CTX_TAGS);
		return st;
	}
	reg[i].gen++;
	reg[i].c = c;
	c->id = ((uint64_t)reg[i].gen << 32) | (i + 1);
	return DAO_OK;
}

void registry_lock(void)
{
	pthread_mutex_lock(&reg_mu);
}

void registry_unlock(void)
{
	pthread_mutex_unlock(&reg_mu);
}

dao_status registry_close(dao_ctx h, struct ctx **out)
{
	struct ctx *c;

	pthread_mutex_lock(&reg_mu);
	if (!(c = live_ctx(h))) {
		pthread_mutex_unlock(&reg_mu);
		return DAO_ERR_CLOSED;
	}
	if (queue_consumer_is_current(c->dev)) {
		/* Close drains the queue, the kernel calling it included. */
		pthread_mutex_unlock(&reg_mu);
		dao_log_at(c->log_level, DAO_LOG_ERROR,
			   "dao_close called from inside a kernel function on the device that runs it");
		return DAO_ERR_REENTRANT;
	}
	__atomic_fetch_or(&c->calls, CTX_CLOSING, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&c->calls, __ATOMIC_SEQ_CST) != CTX_CLOSING)
		pthread_cond_wait(&reg_cv, &reg_mu);
	reg[(uint32_t)h.id - 1].c = NULL;
	/* Only now: until its calls drained, the tag still named this context. */
	tag_free(c->tag);
	pthread_mutex_unlock(&reg_mu);
	*out = c;
	return DAO_OK;
}
