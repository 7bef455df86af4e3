/* SPDX-License-Identifier: MIT */
/*
 * cupti_um.h - what the driver itself reports of managed memory: CUPTI's
 * unified-memory counter records (every migration with its direction and
 * cause, CPU and GPU page faults, remote maps, thrashing and throttling),
 * counted by kind, direction and cause, and each record handed to an
 * optional sink. Shared by libdao-umtrace.so (the LD_PRELOAD collector,
 * umtrace.c), dao-umprobe (umprobe.c) and tests/gpu/test_gpu_budget.c.
 * Header-only: one collection per program, in the object that includes it.
 *
 * CUPTI is opened with dlopen: the programs also run against the CUDA
 * runtime model (tests/cudamodel/), which has no CUPTI, and a machine may
 * have the runtime without the profiling library. Enabling these records
 * needs the device's context (before it CUPTI answers
 * CUPTI_ERROR_NOT_READY): cupti_um_enable is called once it exists.
 *
 * A program into which libdao-umtrace.so is preloaded already has a
 * collection: CUPTI's buffer callbacks are one per process, so a second
 * would steal the collector's records. cupti_um_attach() finds the
 * collector (dao_umtrace_counts, exported by it) and reads its counts
 * instead of starting one of its own.
 */
#ifndef DAO_CUPTI_UM_H
#define DAO_CUPTI_UM_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if __has_include(<cupti_activity.h>) && __has_include(<cupti_callbacks.h>)
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#define CUPTI_UM_HAVE_CUPTI 1
#else
#define CUPTI_UM_HAVE_CUPTI 0
#endif

/* CUPTI's enums, by value: the records file and the JSON use these names. */
enum { CUPTI_UM_HTOD, CUPTI_UM_DTOH, CUPTI_UM_DIRS };
#define CUPTI_UM_CAUSES 6 /* migration causes, and remote-map causes */
static const char *const cupti_um_migration_causes[CUPTI_UM_CAUSES] = {
	"unknown", "user", "coherence", "prefetch", "eviction", "access-counters"
};
static const char *const cupti_um_remote_causes[CUPTI_UM_CAUSES] = {
	"unknown", "coherence", "thrashing", "policy", "out-of-memory", "eviction"
};
static const char *const cupti_um_access_types[5] = { "unknown", "read", "write", "atomic",
						      "prefetch" };

/* Plain integers only: the collector exports this (dao_umtrace_counts). */
struct cupti_um_counts {
	uint64_t records;
	uint64_t migrations[CUPTI_UM_DIRS][CUPTI_UM_CAUSES];
	uint64_t migration_bytes[CUPTI_UM_DIRS][CUPTI_UM_CAUSES];
	uint64_t cpu_faults;
	uint64_t gpu_faults;       /* records */
	uint64_t gpu_fault_groups; /* their values: fault groups for the page */
	uint64_t remote_maps[CUPTI_UM_CAUSES];
	uint64_t remote_map_bytes[CUPTI_UM_CAUSES];
	uint64_t thrashing, throttling;
	uint64_t dtod, dtod_bytes;
	uint64_t dropped; /* records CUPTI could not keep */
};

/* The collector's export, when it is preloaded: flushes CUPTI, then
 * copies its counts; false when it collects nothing (CUPTI unavailable). */
typedef bool (*cupti_um_collector_fn)(struct cupti_um_counts *out);

/* Migrations of every cause but `but` (-1: none) in direction dir. */
static inline uint64_t cupti_um_sum(const uint64_t by[CUPTI_UM_DIRS][CUPTI_UM_CAUSES], int dir,
				    int but)
{
	uint64_t n = 0;

	for (int c = 0; c < CUPTI_UM_CAUSES; c++)
		if (c != but)
			n += by[dir][c];
	return n;
}

/* b - a, field by field. */
static inline void cupti_um_diff(const struct cupti_um_counts *a, const struct cupti_um_counts *b,
				 struct cupti_um_counts *out)
{
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
	uint64_t *o = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		o[i] = y[i] - x[i];
}

/* The counts as the members of a JSON object (no braces), on f. */
static inline void cupti_um_json(FILE *f, const struct cupti_um_counts *c)
{
	fprintf(f, "\"records\": %llu, \"dropped\": %llu, \"migrations\": {",
		(unsigned long long)c->records, (unsigned long long)c->dropped);
	for (int d = 0; d < CUPTI_UM_DIRS; d++) {
		bool first = true;

		fprintf(f, "%s\"%s\": {", d ? ", " : "", d ? "dtoh" : "htod");
		for (int k = 0; k < CUPTI_UM_CAUSES; k++)
			if (c->migrations[d][k]) {
				fprintf(f, "%s\"%s\": {\"count\": %llu, \"bytes\": %llu}",
					first ? "" : ", ", cupti_um_migration_causes[k],
					(unsigned long long)c->migrations[d][k],
					(unsigned long long)c->migration_bytes[d][k]);
				first = false;
			}
		fputc('}', f);
	}
	fprintf(f, "}, \"cpu_page_faults\": %llu, \"gpu_page_faults\": {\"count\": %llu, "
		   "\"fault_groups\": %llu}, \"remote_maps\": {",
		(unsigned long long)c->cpu_faults, (unsigned long long)c->gpu_faults,
		(unsigned long long)c->gpu_fault_groups);
	for (int k = 0, first = 1; k < CUPTI_UM_CAUSES; k++)
		if (c->remote_maps[k]) {
			fprintf(f, "%s\"%s\": {\"count\": %llu, \"bytes\": %llu}", first ? "" : ", ",
				cupti_um_remote_causes[k], (unsigned long long)c->remote_maps[k],
				(unsigned long long)c->remote_map_bytes[k]);
			first = 0;
		}
	fprintf(f, "}, \"thrashing\": %llu, \"throttling\": %llu, \"dtod\": {\"count\": %llu, "
		   "\"bytes\": %llu}",
		(unsigned long long)c->thrashing, (unsigned long long)c->throttling,
		(unsigned long long)c->dtod, (unsigned long long)c->dtod_bytes);
}

#if CUPTI_UM_HAVE_CUPTI
/* Each record, as CUPTI delivers it (on CUPTI's own thread, under the
 * collection's lock). */
typedef void (*cupti_um_sink_fn)(const CUpti_ActivityUnifiedMemoryCounter3 *r, void *arg);

struct cupti_um {
	void *lib;
	char lib_path[512];
	CUptiResult (*configure)(CUpti_ActivityUnifiedMemoryCounterConfig *, uint32_t);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
	CUptiResult (*timestamp)(uint64_t *);
	CUptiResult (*result_string)(CUptiResult, const char **);
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
				       CUpti_CallbackId);
	CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
	pthread_mutex_t mu; /* CUPTI completes buffers on its own thread */
	struct cupti_um_counts counts;
	cupti_um_sink_fn sink;
	void *sink_arg;
	cupti_um_collector_fn collector; /* a preloaded collector's, else NULL */
	bool loaded, enabled;
};

static struct cupti_um cupti_um_state = { .mu = PTHREAD_MUTEX_INITIALIZER };

#define CUPTI_UM_BUFFER (8u << 20)

static void CUPTIAPI cupti_um_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	/* CUPTI wants 8-byte alignment; aligned_alloc gives a page. */
	*buf = aligned_alloc(4096, CUPTI_UM_BUFFER);
	*size = *buf ? CUPTI_UM_BUFFER : 0;
	*max_records = 0;
}

static inline void cupti_um_count(const CUpti_ActivityUnifiedMemoryCounter3 *r,
				  struct cupti_um_counts *c)
{
	uint32_t cause = r->flags < CUPTI_UM_CAUSES ? r->flags : 0;

	c->records++;
	switch (r->counterKind) {
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH: {
		int d = r->counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH;

		c->migrations[d][cause]++;
		c->migration_bytes[d][cause] += r->value;
		break;
	}
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
		c->cpu_faults++;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
		c->gpu_faults++;
		c->gpu_fault_groups += r->value;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP:
		c->remote_maps[cause]++;
		c->remote_map_bytes[cause] += r->value;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING:
		c->thrashing++;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING:
		c->throttling++;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD:
		c->dtod++;
		c->dtod_bytes += r->value;
		break;
	default:
		break;
	}
}

static void CUPTIAPI cupti_um_buffer_completed(CUcontext cu_ctx, uint32_t stream, uint8_t *buf,
					       size_t size, size_t valid)
{
	struct cupti_um *um = &cupti_um_state;
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)size;
	pthread_mutex_lock(&um->mu);
	while (um->next(buf, valid, &rec) == CUPTI_SUCCESS) {
		const CUpti_ActivityUnifiedMemoryCounter3 *r =
			(const CUpti_ActivityUnifiedMemoryCounter3 *)rec;

		if (rec->kind != CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)
			continue;
		cupti_um_count(r, &um->counts);
		if (um->sink)
			um->sink(r, um->sink_arg);
	}
	if (um->dropped(cu_ctx, stream, &dropped) == CUPTI_SUCCESS)
		um->counts.dropped += dropped;
	pthread_mutex_unlock(&um->mu);
	free(buf);
}

/* CUPTI's reason for res, for a message. */
static inline const char *cupti_um_why(CUptiResult res)
{
	const char *s = NULL;

	if (cupti_um_state.result_string && cupti_um_state.result_string(res, &s) == CUPTI_SUCCESS &&
	    s)
		return s;
	return "unknown CUPTI error";
}

/*
 * Open CUPTI and register the record buffers: DAO_UMTRACE_CUPTI (a path)
 * if set, else libcupti.so.13 or libcupti.so on the loader's path, else
 * the toolkit's extras/CUPTI. False with the reason in why (a static
 * string or one in `buf` of `len` bytes).
 */
static inline bool cupti_um_load(const char **why, char *buf, size_t len)
{
	static const char *const names[] = {
		"libcupti.so.13",
		"libcupti.so",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
	};
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	struct cupti_um *um = &cupti_um_state;
	const char *env = getenv("DAO_UMTRACE_CUPTI");
	CUptiResult res;

	if (um->loaded)
		return true;
	if (env && *env) {
		um->lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
		snprintf(um->lib_path, sizeof(um->lib_path), "%s", env);
	}
	for (size_t i = 0; !um->lib && !(env && *env) && i < sizeof(names) / sizeof(names[0]); i++) {
		um->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		snprintf(um->lib_path, sizeof(um->lib_path), "%s", names[i]);
	}
	if (!um->lib) {
		const char *e = dlerror();

		snprintf(buf, len, "libcupti cannot be loaded (%s)", e ? e : "not found");
		*why = buf;
		return false;
	}
	*(void **)&reg = dlsym(um->lib, "cuptiActivityRegisterCallbacks");
	*(void **)&um->configure = dlsym(um->lib, "cuptiActivityConfigureUnifiedMemoryCounter");
	*(void **)&um->enable = dlsym(um->lib, "cuptiActivityEnable");
	*(void **)&um->flush = dlsym(um->lib, "cuptiActivityFlushAll");
	*(void **)&um->next = dlsym(um->lib, "cuptiActivityGetNextRecord");
	*(void **)&um->dropped = dlsym(um->lib, "cuptiActivityGetNumDroppedRecords");
	*(void **)&um->timestamp = dlsym(um->lib, "cuptiGetTimestamp");
	*(void **)&um->result_string = dlsym(um->lib, "cuptiGetResultString");
	*(void **)&um->subscribe = dlsym(um->lib, "cuptiSubscribe");
	*(void **)&um->enable_callback = dlsym(um->lib, "cuptiEnableCallback");
	*(void **)&um->enable_domain = dlsym(um->lib, "cuptiEnableDomain");
	if (!reg || !um->configure || !um->enable || !um->flush || !um->next || !um->dropped ||
	    !um->timestamp || !um->subscribe || !um->enable_callback || !um->enable_domain) {
		*why = "libcupti lacks the activity or callback API";
		return false;
	}
	res = reg(cupti_um_buffer_requested, cupti_um_buffer_completed);
	if (res != CUPTI_SUCCESS) {
		snprintf(buf, len, "cuptiActivityRegisterCallbacks failed: %s", cupti_um_why(res));
		*why = buf;
		return false;
	}
	um->loaded = true;
	return true;
}

/* Enable the records; the device's context must exist. CUPTI's result
 * (CUPTI_ERROR_NOT_READY before the context). */
static inline CUptiResult cupti_um_enable(void)
{
	static const CUpti_ActivityUnifiedMemoryCounterKind kinds[] = {
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD,
	};
	CUpti_ActivityUnifiedMemoryCounterConfig cfg[sizeof(kinds) / sizeof(kinds[0])];
	struct cupti_um *um = &cupti_um_state;
	CUptiResult res;

	if (um->enabled)
		return CUPTI_SUCCESS;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		cfg[i] = (CUpti_ActivityUnifiedMemoryCounterConfig){
			.scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE,
			.kind = kinds[i],
			.deviceId = 0,
			.enable = 1,
		};
	res = um->configure(cfg, sizeof(kinds) / sizeof(kinds[0]));
	if (res == CUPTI_SUCCESS)
		res = um->enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
	um->enabled = res == CUPTI_SUCCESS;
	return res;
}

/* Everything CUPTI holds delivered, then the counts so far. */
static inline void cupti_um_snapshot(struct cupti_um_counts *out)
{
	struct cupti_um *um = &cupti_um_state;

	if (um->collector) {
		if (!um->collector(out))
			memset(out, 0, sizeof(*out));
		return;
	}
	if (um->enabled)
		um->flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&um->mu);
	*out = um->counts;
	pthread_mutex_unlock(&um->mu);
}

/*
 * For a program that collects once its context exists (the probe, the
 * budget test): a preloaded collector's counts if there is one, else a
 * collection of its own, loaded and enabled now. False with the reason
 * (in buf) when neither can be had.
 */
static inline bool cupti_um_attach(const char **why, char *buf, size_t len)
{
	struct cupti_um *um = &cupti_um_state;
	CUptiResult res;

	*(void **)&um->collector = dlsym(RTLD_DEFAULT, "dao_umtrace_counts");
	if (um->collector) {
		struct cupti_um_counts c;

		if (um->collector(&c))
			return true;
		*why = "the preloaded collector collects nothing (see its output)";
		return false;
	}
	if (dlsym(RTLD_DEFAULT, "dao_cudamodel_counters")) {
		*why = "the CUDA runtime model is loaded, not a driver";
		return false;
	}
	if (!cupti_um_load(why, buf, len))
		return false;
	res = cupti_um_enable();
	if (res != CUPTI_SUCCESS) {
		snprintf(buf, len, "CUPTI refuses the unified-memory records: %s", cupti_um_why(res));
		*why = buf;
		return false;
	}
	return true;
}
#else
static inline bool cupti_um_attach(const char **why, char *buf, size_t len)
{
	(void)buf;
	(void)len;
	*why = "built without CUPTI's headers";
	return false;
}

static inline void cupti_um_snapshot(struct cupti_um_counts *out)
{
	memset(out, 0, sizeof(*out));
}
#endif

#endif /* DAO_CUPTI_UM_H */
