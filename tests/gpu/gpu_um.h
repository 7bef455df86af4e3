/* SPDX-License-Identifier: MIT */
/*
 * gpu_um.h - what the driver itself reports of managed memory on a real
 * device: CUPTI's unified-memory counters, every migration with its cause
 * and every GPU page fault, collected while a test runs.
 *
 * Why not cudaMemGetInfo: the driver keeps the device pages that managed
 * data leaves for reuse, so the card's used memory stays at the largest
 * footprint the job ever had on it (issue 9's H100 run: 4 x 256 MiB slices
 * prefetched in and out one at a time leave 1 GiB in use; a cudaMalloc of
 * all the free memory plus 512 MiB then succeeds, so the driver gives them
 * back on demand). Residency is what the driver migrates, and CUPTI says
 * who asked: a migration caused by anything but the program's own prefetch
 * (a fault, the driver's own prefetching or eviction, access counters) is
 * residency libdao did not decide.
 *
 * CUPTI is opened with dlopen: the tests also link against the CUDA runtime
 * model (tests/cudamodel/), which has its own counters and no CUPTI, and a
 * machine may have the runtime without the profiling library. Collection
 * starts once, after the device's context exists (before it, CUPTI answers
 * CUPTI_ERROR_NOT_READY to enabling these counters), and a snapshot flushes
 * what the driver has reported so far; two snapshots bracket a run.
 */
#ifndef DAO_TEST_GPU_UM_H
#define DAO_TEST_GPU_UM_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
#define GPU_UM_HAVE_CUPTI 1
#else
#define GPU_UM_HAVE_CUPTI 0
#endif

struct gpu_um_counts {
	uint64_t asked_h2d_bytes;  /* migrations the program prefetched */
	uint64_t asked_d2h_bytes;
	uint64_t driver_migrations; /* migrations of any other cause */
	uint64_t driver_bytes;
	/* Their bytes by direction (0 in, 1 out) and CUPTI's cause (0-5:
	 * unknown, user, coherence, the driver's prefetch, eviction, access
	 * counters). */
	uint64_t driver_bytes_by[2][6];
	uint64_t gpu_faults;
	uint64_t cpu_faults;
	uint64_t remote_maps;
	uint64_t dropped;        /* records CUPTI could not keep */
};

#if GPU_UM_HAVE_CUPTI
struct gpu_um {
	void *lib;
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
	pthread_mutex_t mu; /* CUPTI completes buffers on its own thread */
	struct gpu_um_counts counts;
};

/* One collector per process: CUPTI's buffer callbacks take no argument. */
static struct gpu_um gpu_um_state = { .mu = PTHREAD_MUTEX_INITIALIZER };

#define GPU_UM_BUFFER (8u << 20)

static void CUPTIAPI gpu_um_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	/* CUPTI wants 8-byte alignment; aligned_alloc gives a page. */
	*buf = aligned_alloc(4096, GPU_UM_BUFFER);
	*size = *buf ? GPU_UM_BUFFER : 0;
	*max_records = 0;
}

static void gpu_um_count(const CUpti_ActivityUnifiedMemoryCounter3 *r, struct gpu_um_counts *c)
{
	switch (r->counterKind) {
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
		if (r->flags != CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER) {
			c->driver_migrations++;
			c->driver_bytes += r->value;
			c->driver_bytes_by[r->counterKind ==
					   CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH]
					  [r->flags < 6 ? r->flags : 0] += r->value;
		} else if (r->counterKind ==
			   CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD) {
			c->asked_h2d_bytes += r->value;
		} else {
			c->asked_d2h_bytes += r->value;
		}
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
		c->gpu_faults += r->value;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
		c->cpu_faults++;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP:
		c->remote_maps++;
		break;
	default:
		break;
	}
}

static void CUPTIAPI gpu_um_buffer_completed(CUcontext cu_ctx, uint32_t stream, uint8_t *buf,
					     size_t size, size_t valid)
{
	struct gpu_um *um = &gpu_um_state;
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)size;
	pthread_mutex_lock(&um->mu);
	while (um->next(buf, valid, &rec) == CUPTI_SUCCESS)
		if (rec->kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)
			gpu_um_count((const CUpti_ActivityUnifiedMemoryCounter3 *)rec, &um->counts);
	if (um->dropped(cu_ctx, stream, &dropped) == CUPTI_SUCCESS)
		um->counts.dropped += dropped;
	pthread_mutex_unlock(&um->mu);
	free(buf);
}

/* Start collecting, once the device's context exists. False, with the
 * reason in `why`, when CUPTI cannot be loaded or refuses the counters (no
 * profiling permission, say). */
static inline bool gpu_um_start(const char **why)
{
	static const CUpti_ActivityUnifiedMemoryCounterKind kinds[] = {
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP,
	};
	CUpti_ActivityUnifiedMemoryCounterConfig cfg[sizeof(kinds) / sizeof(kinds[0])];
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*configure)(CUpti_ActivityUnifiedMemoryCounterConfig *, uint32_t);
	struct gpu_um *um = &gpu_um_state;

	um->lib = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!um->lib)
		um->lib = dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL);
	if (!um->lib) {
		*why = "libcupti cannot be loaded";
		return false;
	}
	*(void **)&reg = dlsym(um->lib, "cuptiActivityRegisterCallbacks");
	*(void **)&configure = dlsym(um->lib, "cuptiActivityConfigureUnifiedMemoryCounter");
	*(void **)&um->enable = dlsym(um->lib, "cuptiActivityEnable");
	*(void **)&um->disable = dlsym(um->lib, "cuptiActivityDisable");
	*(void **)&um->flush = dlsym(um->lib, "cuptiActivityFlushAll");
	*(void **)&um->next = dlsym(um->lib, "cuptiActivityGetNextRecord");
	*(void **)&um->dropped = dlsym(um->lib, "cuptiActivityGetNumDroppedRecords");
	if (!reg || !configure || !um->enable || !um->disable || !um->flush || !um->next ||
	    !um->dropped) {
		*why = "libcupti lacks the activity API";
		return false;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		cfg[i] = (CUpti_ActivityUnifiedMemoryCounterConfig){
			.scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE,
			.kind = kinds[i],
			.deviceId = 0,
			.enable = 1,
		};
	if (reg(gpu_um_buffer_requested, gpu_um_buffer_completed) != CUPTI_SUCCESS) {
		*why = "cuptiActivityRegisterCallbacks failed";
		return false;
	}
	if (configure(cfg, sizeof(kinds) / sizeof(kinds[0])) != CUPTI_SUCCESS) {
		*why = "CUPTI refuses the unified-memory counters";
		return false;
	}
	if (um->enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) != CUPTI_SUCCESS) {
		*why = "CUPTI refuses unified-memory activity";
		return false;
	}
	return true;
}

/* What the driver has reported since gpu_um_start, up to now. */
static inline void gpu_um_snapshot(struct gpu_um_counts *out)
{
	struct gpu_um *um = &gpu_um_state;

	um->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&um->mu);
	*out = um->counts;
	pthread_mutex_unlock(&um->mu);
}
#else
static inline bool gpu_um_start(const char **why)
{
	*why = "built without CUPTI's headers";
	return false;
}

static inline void gpu_um_snapshot(struct gpu_um_counts *out)
{
	*out = (struct gpu_um_counts){ 0 };
}
#endif

#endif /* DAO_TEST_GPU_UM_H */
