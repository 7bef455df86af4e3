/* SPDX-License-Identifier: MIT */
/*
 * umtrace.c - libdao-umtrace.so, an LD_PRELOAD collector of what the
 * driver does to managed memory, for any CUDA program (dao-cholesky on
 * cuda-managed, the GPU tests):
 *
 *   DAO_UMTRACE=<file>          at exit, one JSON object: the records by
 *                               kind, direction and cause, with bytes, and
 *                               the records CUPTI dropped; or
 *                               {"available": false, "reason": ...}
 *   DAO_UMTRACE_RECORDS=<file>  at exit, every record (the "dao-umtrace-
 *                               records 1" format of Documentation/cuda.md),
 *                               times on CLOCK_MONOTONIC like libdao's
 *                               request log (DAO_CUDA_REQUEST_LOG)
 *   DAO_UMTRACE_CUPTI=<path>    the CUPTI library, if not on the usual paths
 *   DAO_UMTRACE_MAX_RECORDS=<n> records kept for DAO_UMTRACE_RECORDS (default
 *                               16M, 40 bytes each); the rest are counted
 *                               ("not_kept") and reported as dropped there
 *
 * Without DAO_UMTRACE it does nothing. CUPTI's unified-memory records can
 * be enabled only once the context exists: a resource callback enables
 * them when it is created, and failing that (CUPTI_ERROR_NOT_READY) every
 * runtime call's exit tries again until they are. CUPTI timestamps are
 * turned into CLOCK_MONOTONIC by an offset measured when they are enabled
 * (and again at exit: the JSON gives the drift).
 *
 * Other programs in the process that want the same counts (dao-umprobe,
 * test_gpu_budget) call dao_umtrace_counts instead of starting a second
 * collection (tools/gpubench/cupti_um.h).
 */
#include <errno.h>
#include <stdatomic.h>

#include "cupti_um.h"

#define UMTRACE_API __attribute__((visibility("default")))

UMTRACE_API bool dao_umtrace_counts(struct cupti_um_counts *out);

static const char *out_path, *records_path;
static const char *reason; /* why nothing is collected; NULL: collecting */
static char reason_buf[512];

#if CUPTI_UM_HAVE_CUPTI
struct kept {
	uint64_t start, end, addr, value;
	uint32_t kind, flags;
};

static struct kept *kept;
static size_t nkept, kept_cap;
static uint64_t not_kept;
static size_t max_kept = 16u << 20;
static CUpti_SubscriberHandle subscriber;
static atomic_bool enabled, retrying, context_gone;
/* CUPTI's clock less CLOCK_MONOTONIC, when enabled and at exit. */
static int64_t offset_ns, offset_exit_ns;
static uint64_t offset_spread_ns;

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The offset from the closest of a few bracketing readings. */
static int64_t measure_offset(uint64_t *spread)
{
	int64_t best = 0;
	uint64_t best_spread = UINT64_MAX;

	for (int i = 0; i < 16; i++) {
		uint64_t a = mono_ns(), c = 0, b;

		if (cupti_um_state.timestamp(&c) != CUPTI_SUCCESS)
			break;
		b = mono_ns();
		if (b - a < best_spread) {
			best_spread = b - a;
			best = (int64_t)c - (int64_t)(a + (b - a) / 2);
		}
	}
	*spread = best_spread;
	return best;
}

/* On CUPTI's thread, under its lock. */
static void keep(const CUpti_ActivityUnifiedMemoryCounter3 *r, void *arg)
{
	(void)arg;
	if (nkept == kept_cap) {
		size_t cap = kept_cap ? kept_cap * 2 : 1u << 16;
		struct kept *n = cap <= max_kept ? realloc(kept, cap * sizeof(*n)) : NULL;

		if (!n) {
			not_kept++;
			return;
		}
		kept = n;
		kept_cap = cap;
	}
	kept[nkept++] = (struct kept){ r->start, r->end, r->address, r->value,
				       (uint32_t)r->counterKind, r->flags };
}

static void flush_at_exit(void)
{
	if (!atomic_load(&context_gone))
		cupti_um_state.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	offset_exit_ns = measure_offset(&(uint64_t){ 0 });
}

static void try_enable(void)
{
	CUptiResult res;

	if (atomic_load(&enabled))
		return;
	res = cupti_um_enable();
	if (res == CUPTI_SUCCESS) {
		offset_ns = measure_offset(&offset_spread_ns);
		atomic_store(&enabled, true);
		reason = NULL;
		/* After CUPTI's own exit handlers were registered: runs first. */
		atexit(flush_at_exit);
		if (atomic_exchange(&retrying, false))
			cupti_um_state.enable_domain(0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
	} else if (res == CUPTI_ERROR_NOT_READY) {
		if (!atomic_exchange(&retrying, true))
			cupti_um_state.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
	} else {
		snprintf(reason_buf, sizeof(reason_buf),
			 "CUPTI refuses the unified-memory records: %s", cupti_um_why(res));
		reason = reason_buf;
	}
}

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)user;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
		try_enable();
	} else if (domain == CUPTI_CB_DOMAIN_RESOURCE &&
		   cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
		/* The last chance to have the context's records. */
		if (atomic_load(&enabled))
			cupti_um_state.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		atomic_store(&context_gone, true);
	} else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
		   ((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_EXIT &&
		   atomic_load(&retrying)) {
		try_enable();
	}
}

static void start(void)
{
	const char *m = getenv("DAO_UMTRACE_MAX_RECORDS");
	CUptiResult res;

	if (m && *m) {
		char *end;

		max_kept = strtoull(m, &end, 10);
		if (*end || !max_kept) {
			snprintf(reason_buf, sizeof(reason_buf),
				 "DAO_UMTRACE_MAX_RECORDS=%s: not a positive number", m);
			reason = reason_buf;
			return;
		}
	}
	if (!cupti_um_load(&reason, reason_buf, sizeof(reason_buf)))
		return;
	cupti_um_state.sink = keep;
	res = cupti_um_state.subscribe(&subscriber, on_callback, NULL);
	if (res == CUPTI_SUCCESS)
		res = cupti_um_state.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
						     CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	if (res == CUPTI_SUCCESS)
		res = cupti_um_state.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
						     CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	if (res != CUPTI_SUCCESS) {
		snprintf(reason_buf, sizeof(reason_buf), "CUPTI refuses a subscriber: %s",
			 cupti_um_why(res));
		reason = reason_buf;
		return;
	}
	reason = "no CUDA context was created";
}

static const char *kind_name(uint32_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD: return "htod";
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH: return "dtoh";
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT: return "cpu-fault";
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT: return "gpu-fault";
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING: return "thrashing";
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING: return "throttling";
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP: return "remote-map";
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD: return "dtod";
	default: return NULL;
	}
}

static const char *cause_name(uint32_t k, uint32_t flags)
{
	switch (k) {
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
		return cupti_um_migration_causes[flags < CUPTI_UM_CAUSES ? flags : 0];
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP:
		return cupti_um_remote_causes[flags < CUPTI_UM_CAUSES ? flags : 0];
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
		return cupti_um_access_types[flags < 5 ? flags : 0];
	default:
		return "-";
	}
}

/* The records, CUPTI's times moved onto CLOCK_MONOTONIC. */
static void write_records(uint64_t dropped)
{
	FILE *f = fopen(records_path, "w");

	if (!f) {
		fprintf(stderr, "libdao-umtrace: cannot write %s: %s\n", records_path,
			strerror(errno));
		return;
	}
	fprintf(f, "# dao-umtrace-records 1 clock=monotonic source=cupti dropped=%llu\n",
		(unsigned long long)(dropped + not_kept));
	pthread_mutex_lock(&cupti_um_state.mu);
	for (size_t i = 0; i < nkept; i++) {
		const struct kept *k = &kept[i];
		const char *name = kind_name(k->kind);
		uint64_t end = k->end >= k->start ? k->end : k->start;

		if (name)
			fprintf(f, "%s %lld %lld 0x%llx %llu %s\n", name,
				(long long)((int64_t)k->start - offset_ns),
				(long long)((int64_t)end - offset_ns), (unsigned long long)k->addr,
				(unsigned long long)k->value, cause_name(k->kind, k->flags));
	}
	pthread_mutex_unlock(&cupti_um_state.mu);
	if (fclose(f))
		fprintf(stderr, "libdao-umtrace: writing %s failed\n", records_path);
}
#endif

UMTRACE_API bool dao_umtrace_counts(struct cupti_um_counts *out)
{
#if CUPTI_UM_HAVE_CUPTI
	if (atomic_load(&enabled)) {
		cupti_um_snapshot(out);
		return true;
	}
#endif
	memset(out, 0, sizeof(*out));
	return false;
}

static void write_summary(void)
{
	FILE *f = fopen(out_path, "w");

	if (!f) {
		fprintf(stderr, "libdao-umtrace: cannot write %s: %s\n", out_path, strerror(errno));
		return;
	}
#if CUPTI_UM_HAVE_CUPTI
	if (atomic_load(&enabled)) {
		struct cupti_um_counts c;

		pthread_mutex_lock(&cupti_um_state.mu);
		c = cupti_um_state.counts;
		pthread_mutex_unlock(&cupti_um_state.mu);
		fprintf(f, "{\"available\": true, \"cupti\": \"%s\", \"kept\": %llu, "
			   "\"not_kept\": %llu, \"clock\": {\"offset_ns\": %lld, "
			   "\"spread_ns\": %llu, \"drift_ns\": %lld}, ",
			cupti_um_state.lib_path, (unsigned long long)nkept,
			(unsigned long long)not_kept, (long long)offset_ns,
			(unsigned long long)offset_spread_ns,
			(long long)(offset_exit_ns - offset_ns));
		cupti_um_json(f, &c);
		fputs("}\n", f);
		if (records_path && *records_path)
			write_records(c.dropped);
	} else
#endif
	{
		/* A reason is a static string or one without quotes. */
		fprintf(f, "{\"available\": false, \"reason\": \"");
		for (const char *p = reason; *p; p++)
			fputc(*p == '"' || *p == '\\' ? '\'' : *p, f);
		fprintf(f, "\"}\n");
	}
	if (fclose(f))
		fprintf(stderr, "libdao-umtrace: writing %s failed\n", out_path);
}

__attribute__((constructor)) static void umtrace_init(void)
{
	out_path = getenv("DAO_UMTRACE");
	if (!out_path || !*out_path)
		return;
	records_path = getenv("DAO_UMTRACE_RECORDS");
	atexit(write_summary);
	/* Libraries are loaded before constructors run: the model, when it
	 * stands in for the runtime, is found already. */
	if (dlsym(RTLD_DEFAULT, "dao_cudamodel_counters")) {
		reason = "the CUDA runtime model is loaded, not a driver";
		return;
	}
#if CUPTI_UM_HAVE_CUPTI
	start();
#else
	reason = "built without CUPTI's headers";
#endif
}
