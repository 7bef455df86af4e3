/* SPDX-License-Identifier: MIT */
/*
 * races.c - the happens-before checker over byte ranges (races.h).
 *
 * Each access a stream operation makes (or the host, through a synchronous
 * call or a fault) is kept as a record (range, read or write, actor, the
 * actor's tick, call site) in 2 MiB buckets of the address space. A new
 * access conflicts with a record on another actor when either writes;
 * unless the record's tick is within the new access's clock, nothing
 * orders them: a race, reported with both call sites, and the process
 * stops. A record that a new access covers, follows and conflicts with at
 * least as widely is dropped: any later access unordered with it would
 * be unordered with the new one too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/report.h"
#include "base/site.h"
#include "check/clocks.h"
#include "check/races.h"

#define BUCKET_SHIFT 21
#define NHEADS 4096
#define MAX_RECS 1024

struct rec {
	const char *lo, *hi;
	bool write;
	int actor;
	uint32_t tick;
	const char *what;
	struct cm_site site;
};

struct bucket {
	uint64_t key;
	struct rec *r;
	uint32_t n, cap;
	struct bucket *next;
};

static struct bucket *heads[NHEADS];

static struct bucket *bucket_of(uint64_t key, bool make)
{
	struct bucket **h = &heads[(key * 0x9e3779b97f4a7c15ull) >> 52], *b;

	for (b = *h; b; b = b->next)
		if (b->key == key)
			return b;
	if (!make)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		cm_fail("out of memory");
	b->key = key;
	b->next = *h;
	*h = b;
	return b;
}

static void report(const struct rec *old, const char *lo, const char *hi, bool write,
		   const char *what, const struct cm_site *site, int actor, uint32_t knows)
{
	const char *a = old->lo > lo ? old->lo : lo, *b = old->hi < hi ? old->hi : hi;

	fprintf(stderr,
		"cudamodel: ERROR: race on [%p, %p): %s (%s) is not ordered after %s (%s) by "
		"stream order, events or synchronisation\n",
		(void *)a, (void *)b, what, write ? "write" : "read", old->what,
		old->write ? "write" : "read");
	fprintf(stderr, "cudamodel:   (actor %d knows tick %u of actor %d; the earlier access is its tick %u)\n",
		actor, knows, old->actor, old->tick);
	cm_site_print("this access:", site);
	cm_site_print("the earlier one:", &old->site);
	fflush(stderr);
	_exit(CM_EXIT);
}

void cm_check(const void *p, uint64_t len, bool write, int actor, const struct cm_vc *vc,
	      const struct cm_site *site, const char *what)
{
	const char *lo = p, *hi = lo + len;
	bool record = vc != NULL;

	if (!len)
		return;
	if (!vc)
		vc = cm_host_vc(&actor);
	for (uint64_t key = (uint64_t)(uintptr_t)lo >> BUCKET_SHIFT;
	     key <= ((uint64_t)(uintptr_t)hi - 1) >> BUCKET_SHIFT; key++) {
		const char *blo = (const char *)(uintptr_t)(key << BUCKET_SHIFT);
		const char *clo = lo > blo ? lo : blo;
		const char *chi = hi < blo + (1ull << BUCKET_SHIFT) ? hi : blo + (1ull << BUCKET_SHIFT);
		struct bucket *b = bucket_of(key, record);
		uint32_t keep = 0;

		if (!b)
			continue;
		for (uint32_t i = 0; i < b->n; i++) {
			struct rec *r = &b->r[i];
			bool overlap = r->lo < chi && clo < r->hi;
			bool ordered = r->actor == actor || cm_vc_knows(vc, r->actor, r->tick);

			if (overlap && (r->write || write) && !ordered)
				report(r, clo, chi, write, what, site, actor, vc->c[r->actor]);
			if (record && ordered && clo <= r->lo && r->hi <= chi && (write || !r->write))
				continue; /* superseded */
			b->r[keep++] = *r;
		}
		b->n = keep;
		if (!record)
			continue;
		if (b->n == MAX_RECS) {
			/* Forget the oldest half: only detection is lost. */
			memmove(b->r, b->r + MAX_RECS / 2, (MAX_RECS / 2) * sizeof(*b->r));
			b->n = MAX_RECS / 2;
		}
		if (b->n == b->cap) {
			uint32_t cap = b->cap ? b->cap * 2 : 8;
			struct rec *n = realloc(b->r, cap * sizeof(*n));

			if (!n)
				cm_fail("out of memory");
			b->r = n;
			b->cap = cap;
		}
		b->r[b->n++] = (struct rec){ clo, chi, write, actor, vc->c[actor], what, *site };
	}
}

void cm_check_forget(const void *p, uint64_t len)
{
	const char *lo = p, *hi = lo + len;

	if (!len)
		return;
	for (uint64_t key = (uint64_t)(uintptr_t)lo >> BUCKET_SHIFT;
	     key <= ((uint64_t)(uintptr_t)hi - 1) >> BUCKET_SHIFT; key++) {
		struct bucket *b = bucket_of(key, false);
		uint32_t keep = 0;

		if (!b)
			continue;
		for (uint32_t i = 0; i < b->n; i++)
			if (!(b->r[i].lo < hi && lo < b->r[i].hi))
				b->r[keep++] = b->r[i];
		b->n = keep;
	}
}
