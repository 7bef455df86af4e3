/* SPDX-License-Identifier: MIT */
/* pages.c - managed memory's page table (pages.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/report.h"
#include "records/um_records.h"
#include "state/card.h"
#include "state/pages.h"

void cm_pages_init(struct cm_alloc *m)
{
	m->npages = (uint32_t)(m->span / CM_PAGE);
	m->page = malloc(m->npages);
	m->poison = calloc(m->npages, sizeof(*m->poison));
	m->pending = calloc(m->npages, sizeof(*m->pending));
	if (!m->page || !m->poison || !m->pending)
		cm_fail("out of memory");
	memset(m->page, PG_EMPTY, m->npages);
}

static bool page_closed(const struct cm_alloc *m, uint32_t i)
{
	return (m->page[i] & PG_CLOSED) || (m->pending[i] && !(m->page[i] & PG_OPEN));
}

void cm_protect(struct cm_alloc *m, uint32_t first, uint32_t n)
{
	uint32_t i = first, end = first + n;

	while (i < end) {
		bool closed = page_closed(m, i);
		uint32_t j = i + 1;

		while (j < end && page_closed(m, j) == closed)
			j++;
		if (mprotect(m->base + (uint64_t)i * CM_PAGE, (uint64_t)(j - i) * CM_PAGE,
			     closed ? PROT_NONE : PROT_READ | PROT_WRITE))
			cm_fail("mprotect of managed memory failed");
		i = j;
	}
}

void cm_pages_pending(struct cm_alloc *m, uint64_t off, uint64_t len, int delta)
{
	uint32_t first = (uint32_t)(off / CM_PAGE), n = (uint32_t)((off + len - 1) / CM_PAGE) - first + 1;

	for (uint32_t i = first; i < first + n; i++) {
		m->pending[i] += (uint32_t)delta;
		/* A new operation closes the page again; the last one done
		 * ends what a host touch opened. */
		if (delta > 0 || !m->pending[i])
			m->page[i] &= (uint8_t)~PG_OPEN;
	}
	cm_protect(m, first, n);
}

/* Runs of pages of [first, first + n) not yet where they are going. */
static void record_moves(struct cm_alloc *m, uint32_t first, uint32_t n, bool to_device,
			 int cause)
{
	uint32_t run = 0;

	for (uint32_t i = first; i <= first + n; i++) {
		if (i < first + n && !!(m->page[i] & PG_DEVICE) != to_device) {
			run++;
			continue;
		}
		if (run)
			cm_um_record(to_device ? CM_UM_HTOD : CM_UM_DTOH,
				     m->base + (uint64_t)(i - run) * CM_PAGE, (uint64_t)run * CM_PAGE,
				     cause);
		run = 0;
	}
}

void cm_pages_move(struct cm_alloc *m, uint32_t first, uint32_t n, bool to_device, int cause)
{
	if (cause != CM_CAUSE_NONE)
		record_moves(m, first, n, to_device, cause);
	for (uint32_t i = first; i < first + n; i++) {
		m->page[i] &= (uint8_t)~PG_EMPTY; /* populated where it goes */
		if (!!(m->page[i] & PG_DEVICE) == to_device)
			continue;
		if (to_device) {
			m->page[i] |= PG_DEVICE;
			cm_card.managed_dev_bytes += CM_PAGE;
		} else {
			m->page[i] &= (uint8_t)~PG_DEVICE;
			cm_card.managed_dev_bytes -= CM_PAGE;
		}
	}
	cm_protect(m, first, n);
	cm_card_update();
}

void cm_pages_evict(uint64_t bytes, const struct cm_alloc *keep)
{
	for (struct cm_alloc *a = cm_allocs; a; a = a->next) {
		if (a == keep || a->kind != CM_MANAGED)
			continue;
		for (uint32_t i = 0; i < a->npages; i++) {
			if (cm_card_fits(bytes))
				return;
			if (a->page[i] & PG_DEVICE) {
				cm_pages_move(a, i, 1, false, CM_CAUSE_EVICTION);
				cm_card.n.evictions++;
			}
		}
	}
}

void cm_device_access(struct cm_alloc *m, uint64_t off, uint64_t len)
{
	uint32_t first = (uint32_t)(off / CM_PAGE), last = (uint32_t)((off + len - 1) / CM_PAGE);

	for (uint32_t i = first; i <= last; i++) {
		uint8_t f = m->page[i];

		if (f & PG_DEVICE)
			continue;
		char *at = m->base + (uint64_t)i * CM_PAGE;

		if (f & PG_ACCESSED) {
			cm_card.n.remote_accesses++; /* mapped: read over the bus */
			cm_um_record(CM_UM_REMOTE_MAP, at, CM_PAGE, CM_REMOTE_POLICY);
			continue;
		}
		cm_card.n.device_faults++;
		cm_um_record(CM_UM_GPU_FAULT, at, 1, 0);
		if (f & PG_PREF_HOST) {
			cm_card.n.remote_accesses++; /* the fault maps it, no move */
			cm_um_record(CM_UM_REMOTE_MAP, at, CM_PAGE, CM_REMOTE_POLICY);
			continue;
		}
		cm_pages_evict(CM_PAGE, m);
		if (!cm_card_fits(CM_PAGE)) {
			cm_card.n.remote_accesses++; /* no room at all: stays remote */
			cm_um_record(CM_UM_REMOTE_MAP, at, CM_PAGE, CM_REMOTE_OUT_OF_MEMORY);
			continue;
		}
		cm_card.n.fault_migrations++;
		cm_pages_move(m, i, 1, true, CM_CAUSE_COHERENCE);
	}
}
