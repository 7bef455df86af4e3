/* SPDX-License-Identifier: MIT */
/*
 * pages.h - managed memory's page table: a CM_PAGE page is on the host or
 * on the card, and the caller's mapping of it is PROT_NONE while it is on
 * the card, holds discarded bytes, has no physical page yet, or has a
 * stream operation enqueued on it and not yet run (so that a host touch
 * reaches the model: state/host_faults.c). The lock held.
 */
#ifndef DAO_CUDAMODEL_STATE_PAGES_H
#define DAO_CUDAMODEL_STATE_PAGES_H

#include <stdbool.h>
#include <stdint.h>

#include "state/allocs.h"

/* Managed page states and flags. */
#define PG_DEVICE 1u    /* resident on the card */
#define PG_POISON 2u    /* some bytes were discarded (poison[] says which) */
#define PG_PREF_HOST 4u /* preferred location: host */
#define PG_PREF_DEV 8u
#define PG_ACCESSED 16u /* accessed-by the device: host pages mapped remotely */
/* On the host with no physical page yet (never touched since allocated):
 * the host's first touch is a CPU page fault that populates it. A page
 * that was prefetched or discarded either way has one where it went (as
 * documented: both populate and map at their destination). */
#define PG_EMPTY 32u
/* What keeps the caller's mapping of a page closed (PROT_NONE), pending
 * stream work aside. */
#define PG_CLOSED (PG_DEVICE | PG_POISON | PG_EMPTY)
#define PG_OPEN 64u     /* pending, but a host touch that conflicted with nothing opened it */

/* m's page table: every page on the host, without a physical page yet. */
void cm_pages_init(struct cm_alloc *m);
/* The caller's mapping of pages [first, first + n) of m as their state says. */
void cm_protect(struct cm_alloc *m, uint32_t first, uint32_t n);
/* A stream operation on [off, off + len) of m enqueued (delta 1) or run
 * (-1): while one is pending, the pages are closed to the host too. */
void cm_pages_pending(struct cm_alloc *m, uint64_t off, uint64_t len, int delta);
/* Move managed pages [first, first + n) of m; counts nothing, records
 * each run of pages that changes place as migrations of cause (CUPTI's;
 * CM_CAUSE_NONE: not recorded). */
void cm_pages_move(struct cm_alloc *m, uint32_t first, uint32_t n, bool to_device, int cause);
/* The driver's eviction: managed pages not in keep go back to the host
 * until bytes more fit on the card (or none is left to evict). */
void cm_pages_evict(uint64_t bytes, const struct cm_alloc *keep);
/* The card touches [off, off + len) of m: pages on the host are read over
 * the bus or fault, as advised (counted). */
void cm_device_access(struct cm_alloc *m, uint64_t off, uint64_t len);

#endif /* DAO_CUDAMODEL_STATE_PAGES_H */
