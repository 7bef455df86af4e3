/* SPDX-License-Identifier: MIT */
/*
 * backends.h - the backends a context can be opened on by kind, behind one
 * table (backends.c): { kind, name, create }. One file per backend
 * implements it (host.c, cuda/); the simulated backend (sim.c) is built by
 * hand through dao_sim.h and is not in the table, nor in libdao.so.
 */
#ifndef DAO_BACKENDS_H
#define DAO_BACKENDS_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"

struct dao_backend_entry {
	dao_backend_kind kind;
	const char *name;
	/* A backend whose arena spans `budget` bytes, or `percent` of the
	 * device's memory when budget is 0. */
	dao_status (*create)(uint64_t budget, uint32_t percent, struct dao_backend **out);
};

/* The entry of kind, NULL for AUTO or a value outside the enum. */
const struct dao_backend_entry *dao_backend_entry(dao_backend_kind kind);

/* What auto means here: cuda-explicit when a CUDA device is usable (and
 * libdao was built with CUDA), else host. */
dao_backend_kind dao_backend_auto_kind(void);

#endif /* DAO_BACKENDS_H */
