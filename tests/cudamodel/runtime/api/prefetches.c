/* SPDX-License-Identifier: MIT */
/*
 * prefetches.c - cudaMemPrefetchAsync (and its batch) and
 * cudaMemDiscardAndPrefetchBatchAsync: whole 64 KiB pages of one managed
 * allocation, moved by the stream's worker in stream order; a prefetch
 * to the card evicts other managed pages to make room (as the driver
 * does), a discard moves pages without their contents and fills them with
 * poison. A prefetch reads its range as far as the checker is concerned,
 * a discard writes it. DAO_CUDAMODEL_DISCARD=0 plays a driver without
 * discard.
 */
#include <string.h>

#include "api/device.h"
#include "api/init.h"
#include "base/errors.h"
#include "base/lock.h"
#include "base/report.h"
#include "records/um_records.h"
#include "state/allocs.h"
#include "state/card.h"
#include "state/pages.h"
#include "state/poison.h"
#include "state/streams.h"

#define POISON_BYTE 0xdb

/* A prefetch, or a discard (moved without contents, then poisoned). */
struct pages_op {
	struct cm_op op;
	bool discard;
	struct cm_alloc *m;
	uint64_t off, len;
	bool to_device;
};

static void pages_run(struct cm_op *op_)
{
	struct pages_op *op = (struct pages_op *)op_;
	uint32_t first = (uint32_t)(op->off / CM_PAGE);
	uint32_t n = (uint32_t)((op->len + CM_PAGE - 1) / CM_PAGE), moved = 0;

	if (op->to_device) {
		uint64_t need = 0;

		for (uint32_t i = first; i < first + n; i++)
			need += !(op->m->page[i] & PG_DEVICE) ? CM_PAGE : 0;
		cm_pages_evict(need, op->m);
	}
	/* Pages move in order while the card has room: one mprotect. */
	uint32_t upto = first + n;

	if (op->to_device) {
		uint64_t room = cm_card_free();

		for (uint32_t i = first; i < first + n; i++) {
			if (op->m->page[i] & PG_DEVICE)
				continue;
			if (room < CM_PAGE) {
				upto = i; /* the card is full of device memory */
				break;
			}
			room -= CM_PAGE;
			moved++;
		}
	} else {
		for (uint32_t i = first; i < first + n; i++)
			moved += !!(op->m->page[i] & PG_DEVICE);
	}
	if (upto > first)
		cm_pages_move(op->m, first, upto - first, op->to_device,
			      op->discard ? CM_CAUSE_NONE : CM_CAUSE_USER);
	if (!op->discard) {
		cm_card.n.prefetch_migrations += moved;
	} else {
		/* Populated where they go, as a prefetch's are
		 * (cudaMemDiscardAndPrefetchBatchAsync is documented as a
		 * discard and a prefetch): whether the driver does is for
		 * dao-umprobe to find out. */
		cm_card.n.discards += n;
		memset(op->m->alias + op->off, POISON_BYTE, op->len);
		cm_poison_set(op->m, op->off, op->len, &op->op.site);
	}
	cm_pages_pending(op->m, op->off, op->len, -1);
}

/* A managed range of whole pages (the model is stricter than the runtime,
 * which rounds: libdao promises whole 64 KiB granules). */
static struct cm_alloc *managed_pages(const void *p, size_t count, uint64_t *off)
{
	struct cm_alloc *a = cm_find(p);

	if (!a || a->kind != CM_MANAGED || !count)
		return NULL;
	*off = (uint64_t)((const char *)p - a->base);
	if (*off % CM_PAGE || (count % CM_PAGE && *off + count != a->size) ||
	    *off + count > a->size)
		return NULL;
	return a;
}

cudaError_t cudaMemPrefetchAsync(const void *p, size_t count, struct cudaMemLocation loc,
				 unsigned int flags, cudaStream_t sh)
{
	struct cm_stream *s;
	struct cm_alloc *a;
	struct pages_op *op;
	cudaError_t err;
	uint64_t off;

	cm_enter();
	s = cm_stream_of(sh, &err);
	if (!s) {
		cm_unlock();
		return cm_misuse("cudaMemPrefetchAsync", err, "stream %p", (void *)sh);
	}
	a = managed_pages(p, count, &off);
	if (!a || flags || !cm_location_valid(loc, true)) {
		cm_unlock();
		return cm_misuse("cudaMemPrefetchAsync", cudaErrorInvalidValue,
				 "[%p, +%zu) to location type %d id %d, flags 0x%x: whole %llu-byte "
				 "pages of one managed allocation to a valid location wanted",
				 p, count, (int)loc.type, loc.id, flags,
				 (unsigned long long)CM_PAGE);
	}
	op = cm_op_new(sizeof(*op), pages_run);
	op->m = a;
	op->off = off;
	op->len = count;
	op->to_device = loc.type == cudaMemLocationTypeDevice;
	/* A move keeps the bytes: it conflicts with writes only. */
	cm_pages_pending(a, off, count, 1);
	cm_submit(s, &op->op, p, count, NULL, 0, false, "cudaMemPrefetchAsync");
	cm_unlock();
	return cudaSuccess;
}

cudaError_t cudaMemDiscardAndPrefetchBatchAsync(void **dptrs, size_t *sizes, size_t count,
						struct cudaMemLocation *locs, size_t *loc_idx,
						size_t nlocs, unsigned long long flags,
						cudaStream_t sh)
{
	static const char call[] = "cudaMemDiscardAndPrefetchBatchAsync";
	struct cm_stream *s;
	cudaError_t err;
	size_t l = 0;

	cm_init();
	if (cm_config.no_discard)
		return cm_ret(cudaErrorNotSupported);
	cm_enter();
	s = cm_stream_of(sh, &err);
	if (!s) {
		cm_unlock();
		return cm_misuse(call, err, "stream %p", (void *)sh);
	}
	if (!dptrs || !sizes || !count || !locs || !loc_idx || !nlocs || nlocs > count ||
	    loc_idx[0] != 0 || flags) {
		cm_unlock();
		return cm_misuse(call, cudaErrorInvalidValue, "malformed batch");
	}
	for (size_t i = 0; i < nlocs; i++)
		if (!cm_location_valid(locs[i], true) || (i && loc_idx[i] <= loc_idx[i - 1]) ||
		    loc_idx[i] >= count) {
			cm_unlock();
			return cm_misuse(call, cudaErrorInvalidValue, "bad location %zu", i);
		}
	for (size_t i = 0; i < count; i++) {
		uint64_t off;

		if (!managed_pages(dptrs[i], sizes[i], &off)) {
			cm_unlock();
			return cm_misuse(call, cudaErrorInvalidValue,
					 "range %zu, [%p, +%zu): whole pages of one managed "
					 "allocation wanted",
					 i, dptrs[i], sizes[i]);
		}
	}
	for (size_t i = 0; i < count; i++) {
		struct pages_op *op = cm_op_new(sizeof(*op), pages_run);

		while (l + 1 < nlocs && loc_idx[l + 1] <= i)
			l++;
		op->m = managed_pages(dptrs[i], sizes[i], &op->off);
		op->discard = true;
		op->len = sizes[i];
		op->to_device = locs[l].type == cudaMemLocationTypeDevice;
		cm_pages_pending(op->m, op->off, op->len, 1);
		cm_submit(s, &op->op, NULL, 0, dptrs[i], sizes[i], false, call);
	}
	cm_unlock();
	return cudaSuccess;
}

/* As many prefetches, each checked as cudaMemPrefetchAsync checks one. */
cudaError_t cudaMemPrefetchBatchAsync(void **dptrs, size_t *sizes, size_t count,
				      struct cudaMemLocation *locs, size_t *loc_idx, size_t nlocs,
				      unsigned long long flags, cudaStream_t sh)
{
	static const char call[] = "cudaMemPrefetchBatchAsync";
	size_t l = 0;

	if (!dptrs || !sizes || !count || !locs || !loc_idx || !nlocs || nlocs > count ||
	    loc_idx[0] != 0 || flags)
		return cm_misuse(call, cudaErrorInvalidValue, "malformed batch");
	for (size_t i = 1; i < nlocs; i++)
		if (loc_idx[i] <= loc_idx[i - 1] || loc_idx[i] >= count)
			return cm_misuse(call, cudaErrorInvalidValue, "bad location index %zu", i);
	for (size_t i = 0; i < count; i++) {
		cudaError_t err;

		while (l + 1 < nlocs && loc_idx[l + 1] <= i)
			l++;
		err = cudaMemPrefetchAsync(dptrs[i], sizes[i], locs[l], 0, sh);
		if (err != cudaSuccess)
			return err;
	}
	return cudaSuccess;
}
