/* SPDX-License-Identifier: MIT */
/* poison.c - discarded managed bytes (poison.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/report.h"
#include "base/site.h"
#include "state/pages.h"
#include "state/poison.h"

/* Bits [from, to) of a page's bitmap: set, clear, or test for any set. */
static bool bits(uint64_t *w, uint64_t from, uint64_t to, int how)
{
	while (from < to) {
		uint64_t i = from / 64, lo = from % 64;
		uint64_t hi = (to - i * 64) < 64 ? to - i * 64 : 64;
		uint64_t mask = (hi == 64 ? ~0ull : (1ull << hi) - 1) & ~((1ull << lo) - 1);

		if (how == 0)
			w[i] |= mask;
		else if (how == 1)
			w[i] &= ~mask;
		else if (w[i] & mask)
			return true;
		from = i * 64 + hi;
	}
	return false;
}

#define PAGE_WORDS (CM_PAGE / 64)

/* Calls fn for each page piece of [off, off + len). */
#define FOR_PAGES(off, len, pg, a, b)                                                      \
	for (uint64_t pos_ = (off), end_ = (off) + (len), pg, a, b;                        \
	     pos_ < end_ && ((pg = pos_ / CM_PAGE), (a = pos_ % CM_PAGE),                 \
			     (b = (end_ - pg * CM_PAGE) < CM_PAGE ? end_ - pg * CM_PAGE : CM_PAGE), 1); \
	     pos_ = pg * CM_PAGE + b)

void cm_poison_set(struct cm_alloc *m, uint64_t off, uint64_t len, const struct cm_site *site)
{
	m->discard_site = *site;
	FOR_PAGES(off, len, pg, a, b) {
		if (!m->poison[pg] && !(m->poison[pg] = calloc(PAGE_WORDS, 8)))
			cm_fail("out of memory");
		bits(m->poison[pg], a, b, 0);
		m->page[pg] |= PG_POISON;
	}
	cm_protect(m, (uint32_t)(off / CM_PAGE), (uint32_t)((off + len - 1) / CM_PAGE - off / CM_PAGE + 1));
}

void cm_poison_clear(struct cm_alloc *m, uint64_t off, uint64_t len)
{
	bool changed = false;

	FOR_PAGES(off, len, pg, a, b) {
		if (!m->poison[pg])
			continue;
		bits(m->poison[pg], a, b, 1);
		if (!bits(m->poison[pg], 0, CM_PAGE, 2)) {
			free(m->poison[pg]);
			m->poison[pg] = NULL;
			m->page[pg] &= (uint8_t)~PG_POISON;
			changed = true;
		}
	}
	if (changed)
		cm_protect(m, (uint32_t)(off / CM_PAGE),
			   (uint32_t)((off + len - 1) / CM_PAGE - off / CM_PAGE + 1));
}

void cm_poison_drop_page(struct cm_alloc *m, uint32_t pg)
{
	if (m->poison[pg])
		memset(m->poison[pg], 0, CM_PAGE / 8);
	m->page[pg] &= (uint8_t)~PG_POISON;
	cm_protect(m, pg, 1);
}

void cm_poison_check(struct cm_alloc *m, uint64_t off, uint64_t len, const struct cm_site *site,
		     const char *what)
{
	FOR_PAGES(off, len, pg, a, b) {
		if (m->poison[pg] && bits(m->poison[pg], a, b, 2)) {
			fprintf(stderr,
				"cudamodel: ERROR: %s of discarded data in [%p, +%llu): the bytes "
				"were discarded by cudaMemDiscardAndPrefetchBatchAsync and never "
				"written since\n",
				what, (void *)(m->base + off), (unsigned long long)len);
			cm_site_print("the read:", site);
			cm_site_print("the discard:", &m->discard_site);
			fflush(stderr);
			_exit(CM_EXIT);
		}
	}
}
