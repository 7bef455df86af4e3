/* SPDX-License-Identifier: MIT */
/*
 * fence.h - engines and fences: how the layers name a point in the work of
 * a device's engines (the backend's submissions, the arena's free blocks,
 * the core's records).
 */
#ifndef DAO_FENCE_H
#define DAO_FENCE_H

#include <stdint.h>

enum dao_engine {
	DAO_ENGINE_COMPUTE = 0,
	DAO_ENGINE_H2D = 1,
	DAO_ENGINE_D2H = 2,
	DAO_ENGINES = 3,
};

/* A point in the work of each engine: reached once every engine e has
 * completed its submission number seq[e] (0 = nothing to wait for). */
typedef struct dao_fence {
	uint64_t seq[DAO_ENGINES];
} dao_fence;

static inline void dao_fence_join(dao_fence *into, const dao_fence *other)
{
	for (int e = 0; e < DAO_ENGINES; e++)
		if (other->seq[e] > into->seq[e])
			into->seq[e] = other->seq[e];
}

static inline void dao_fence_add(dao_fence *into, enum dao_engine e, uint64_t seq)
{
	if (seq > into->seq[e])
		into->seq[e] = seq;
}

#endif /* DAO_FENCE_H */
