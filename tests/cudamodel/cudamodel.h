/* SPDX-License-Identifier: MIT */
/*
 * cudamodel.h - what tests may ask the CUDA runtime model (tests/cudamodel/)
 * besides the runtime API: the counters of the modeled card. Tests look the
 * function up with dlsym(RTLD_DEFAULT, "dao_cudamodel_counters") so that
 * the same binary runs against the real runtime, where it is absent.
 */
#ifndef DAO_CUDAMODEL_H
#define DAO_CUDAMODEL_H

#include <stdint.h>

struct dao_cudamodel_counters {
	uint64_t card_bytes;          /* DAO_CUDAMODEL_MEM */
	uint64_t device_bytes;        /* cudaMalloc bytes + device-resident managed pages, now */
	uint64_t device_bytes_peak;
	uint64_t managed_device_bytes; /* device-resident managed pages, now */
	uint64_t managed_device_peak;
	uint64_t prefetch_migrations; /* 64 KiB pages moved by cudaMemPrefetchAsync */
	uint64_t discards;            /* pages discarded (moved without contents) */
	uint64_t device_faults;       /* device touched a host page it had no mapping for */
	uint64_t host_faults;         /* host touched a device-resident managed page */
	uint64_t fault_migrations;    /* pages moved by either kind of fault */
	uint64_t remote_accesses;     /* device read a host page over the bus (advised) */
	uint64_t evictions;           /* pages the card's size pushed back to the host */
	uint64_t misuses;             /* calls refused for bad arguments */
	uint64_t host_registered_bytes; /* host bytes under cudaHostRegister, now */
	/* host touched a managed page never populated (never touched, moved
	 * or discarded since allocated): no move, but a CPU page fault on a
	 * real driver, which populates the page */
	uint64_t host_populations;
};

typedef void (*dao_cudamodel_counters_fn)(struct dao_cudamodel_counters *out);
/* Resets the peaks to the values now. */
typedef void (*dao_cudamodel_reset_peaks_fn)(void);

void dao_cudamodel_counters(struct dao_cudamodel_counters *out);
void dao_cudamodel_reset_peaks(void);

#endif /* DAO_CUDAMODEL_H */
