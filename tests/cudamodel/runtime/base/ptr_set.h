/* SPDX-License-Identifier: MIT */
/*
 * ptr_set.h - a set of pointers (the live stream and event handles), so
 * that a handle the caller made up, or destroyed, is refused rather than
 * followed. Open addressing with tombstones; the lock held.
 */
#ifndef DAO_CUDAMODEL_BASE_PTR_SET_H
#define DAO_CUDAMODEL_BASE_PTR_SET_H

#include <stdbool.h>
#include <stdint.h>

struct cm_ptr_set {
	void **slot;
	uint32_t cap, used; /* used counts tombstones too */
};

bool cm_set_has(const struct cm_ptr_set *s, const void *p);
void cm_set_add(struct cm_ptr_set *s, void *p);
void cm_set_del(struct cm_ptr_set *s, const void *p); /* p is in s */

#endif /* DAO_CUDAMODEL_BASE_PTR_SET_H */
