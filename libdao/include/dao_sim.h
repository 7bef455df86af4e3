/* SPDX-License-Identifier: MIT */
/*
 * dao_sim.h - the simulated backend: a device model with a virtual clock that
 * the real executor and policy drive (daosim, tests).
 *
 * This is the interface of the static library libdao-sim.a (with the trace
 * reader of dao_trace.h), not of libdao.so: programs that use it link
 * libdao-sim.a and the static libdao.a.
 *
 * Engines: one compute engine, one copy engine each way (full duplex). An operation starts when its engine is free and its fence
 * is reached; a kernel takes max(flops / flops_per_s, operand_bytes /
 * mem_bytes_per_s) + launch_ns; a copy takes bytes / bandwidth.
 */
#ifndef DAO_SIM_H
#define DAO_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "dao.h"

/* A device libdao drives (opaque here). */
struct dao_backend;

/* The engine of a span (the same numbering as libdao's engines). */
enum dao_sim_engine {
	DAO_SIM_ENGINE_COMPUTE = 0,
	DAO_SIM_ENGINE_H2D = 1,
	DAO_SIM_ENGINE_D2H = 2,
};

struct dao_sim_model {
	char name[32];
	double h2d_bytes_per_s;
	double d2h_bytes_per_s;
	double flops_per_s;
	double mem_bytes_per_s;
	uint64_t launch_ns;
	uint64_t memory_bytes; /* device memory, for percentage budgets */
	uint32_t contiguous;   /* model a pool needing contiguous ranges (as the
				  host backend) instead of a paged device */
};

/* "h100" or "a100". DAO_ERR_INVALID for an unknown name. */
dao_status dao_sim_model_preset(const char *name, struct dao_sim_model *out);

/* A device file: "key value" lines (name, h2d_gbps, d2h_gbps, tflops,
 * mem_gbps, launch_ns, memory_gib), '#' comments. On failure err gets the
 * line number and reason. */
dao_status dao_sim_model_load(const char *path, struct dao_sim_model *out, char *err,
			      size_t errlen);

/* One operation on the virtual timeline, recorded for plots. */
struct dao_sim_span {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;          /* copied bytes, or operand bytes of a kernel */
	uint64_t resident_bytes; /* kernels: device bytes allocated when prepared */
	uint8_t engine;          /* enum dao_sim_engine */
};

struct dao_sim_result {
	uint64_t end_ns;       /* modeled time: when the last operation ends */
	uint64_t compute_ns;   /* sum of kernel durations */
	uint64_t stall_ns;     /* time the compute engine sat idle waiting for copies */
	uint64_t h2d_busy_ns;
	uint64_t d2h_busy_ns;
	const struct dao_sim_span *spans; /* valid until the backend is destroyed */
	size_t nspans;
};

/* record_spans: keep every span for a plot (memory grows with the trace). */
dao_status dao_backend_sim_create(const struct dao_sim_model *m, uint64_t budget,
				  int record_spans, struct dao_backend **out);
void dao_backend_sim_result(struct dao_backend *be, struct dao_sim_result *out);

/* Destroy a backend no context owns (one dao_open_on_backend never took). */
void dao_backend_destroy(struct dao_backend *be);

/*
 * Open a private context driving a backend the caller built. The context
 * owns `be` from then on, also on failure. DAO_ERR_INVALID when be's rates
 * (backend.h: struct dao_rates) are not all positive and finite: the
 * policy times the window with them. (In libdao.a; libdao.so does not
 * export it.)
 */
dao_status dao_open_on_backend(const dao_config *cfg, struct dao_backend *be, dao_ctx *out);

#endif /* DAO_SIM_H */
