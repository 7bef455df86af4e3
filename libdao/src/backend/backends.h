/* SPDX-License-Identifier: MIT */
/*
 * backends.h - the backends a context can be opened on, behind one table
 * (backends.c): { kind, name, create }, one row per dao_backend_kind but
 * DEFAULT. It is the one list of their names: dao_backend_name, DAO_BACKEND
 * and every tool's and the Slurm plugin's list come from it (tools/kinds).
 * One file per backend implements a row (host.c, cuda/); the simulated
 * backend (sim.c) is built by hand through dao_sim.h and is not in the
 * table, nor in libdao.so.
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
	 * device's memory when budget is 0. NULL for auto, which dao_open
	 * resolves to another row first (dao_backend_auto_kind). */
	dao_status (*create)(const struct dao_backend_entry *self, uint64_t budget,
			     uint32_t percent, struct dao_backend **out);
};

/* The row of kind, NULL for DEFAULT or a value no row has. */
const struct dao_backend_entry *dao_backend_entry(dao_backend_kind kind);
/* The row named name, NULL when none is. */
const struct dao_backend_entry *dao_backend_named(const char *name);

/* What auto means here: cuda-explicit when a CUDA device is usable (and
 * libdao was built with CUDA), else host. */
dao_backend_kind dao_backend_auto_kind(void);

#endif /* DAO_BACKENDS_H */
