/* SPDX-License-Identifier: MIT */
/*
 * test_cudamodel.c - the CUDA runtime model catches what it is for. Each
 * scenario runs in a fresh process (this program re-executed with the
 * scenario's name, against the model through LD_LIBRARY_PATH); the parent
 * checks how it ended and what the model said. Scenarios that must be
 * stopped (a missing event wait, a read of discarded data, a host touch of
 * device memory, a refused call) end with the model's exit status 66 and
 * its message; were the detection gone, they would end 0 and fail here.
 * The others check their own results and end 0 (1 on a wrong one).
 */
#include <cuda_runtime.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudamodel/cudamodel.h"
#include "cudamodel/scenario.h"

static const struct cudaMemLocation dev_loc = { cudaMemLocationTypeDevice, 0 };
static const struct cudaMemLocation host_loc = { cudaMemLocationTypeHost, 0 };

/* A device buffer written on one stream and read on another. */
static int two_streams(bool wait, bool blocking_then_legacy)
{
	cudaStream_t s1, s2;
	cudaEvent_t ev;
	void *d, *h, *h2;

	EXPECT(cudaMalloc(&d, MIB) == cudaSuccess);
	EXPECT(cudaHostAlloc(&h, MIB, 0) == cudaSuccess);
	EXPECT(cudaHostAlloc(&h2, MIB, 0) == cudaSuccess);
	memset(h, 7, MIB);
	EXPECT(cudaStreamCreateWithFlags(&s1, blocking_then_legacy ? cudaStreamDefault
								  : cudaStreamNonBlocking) == cudaSuccess);
	EXPECT(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) == cudaSuccess);
	EXPECT(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess);
	EXPECT(cudaMemcpyAsync(d, h, MIB, cudaMemcpyHostToDevice, s1) == cudaSuccess);
	EXPECT(cudaEventRecord(ev, s1) == cudaSuccess);
	if (wait)
		EXPECT(cudaStreamWaitEvent(s2, ev, 0) == cudaSuccess);
	/* The legacy default stream waits for blocking streams by itself. */
	EXPECT(cudaMemcpyAsync(h2, d, MIB, cudaMemcpyDeviceToHost,
			       blocking_then_legacy ? NULL : s2) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(blocking_then_legacy ? NULL : s2) == cudaSuccess);
	EXPECT(((char *)h2)[MIB - 1] == 7);
	EXPECT(cudaEventQuery(ev) == cudaSuccess);
	return 0;
}

static void *managed(uint64_t bytes)
{
	void *m;

	EXPECT(cudaMallocManaged(&m, bytes, cudaMemAttachGlobal) == cudaSuccess);
	return m;
}

static void counters(struct dao_cudamodel_counters *c)
{
	dao_cudamodel_counters(c);
}

static int discarded_read(bool by_host)
{
	char *m = managed(2 * MIB), *h = malloc(MIB);
	void *p = m;
	size_t n = 2 * MIB, first = 0;
	struct cudaMemLocation loc = by_host ? host_loc : dev_loc;
	cudaStream_t s;

	EXPECT(h && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
	EXPECT(cudaMemsetAsync(m, 1, 2 * MIB, s) == cudaSuccess);
	EXPECT(cudaMemDiscardAndPrefetchBatchAsync(&p, &n, 1, &loc, &first, 1, 0, s) ==
	       cudaSuccess);
	/* Writing part of it again makes that part live: no complaint. */
	EXPECT(cudaMemsetAsync(m, 2, MIB, s) == cudaSuccess);
	EXPECT(cudaMemcpyAsync(h, m, MIB, cudaMemcpyDefault, s) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	EXPECT(h[0] == 2);
	if (by_host)
		return m[MIB + 5] == 0; /* the model stops the process first */
	EXPECT(cudaMemcpyAsync(h, m + MIB, MIB, cudaMemcpyDefault, s) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	return 0;
}

static int host_touch(void)
{
	volatile char *d;

	EXPECT(cudaMalloc((void **)&d, MIB) == cudaSuccess);
	return d[100];
}

/* A card of 64 MiB: cudaMalloc beyond it is the real error; managed pages
 * prefetched beyond it push others out, counted. */
static int card_overflow(void)
{
	struct dao_cudamodel_counters c;
	size_t free_b, total;
	void *d, *d2, *a = managed(32 * MIB), *b = managed(32 * MIB);
	cudaStream_t s;

	EXPECT(cudaMemGetInfo(&free_b, &total) == cudaSuccess);
	EXPECT(total == 64 * MIB && free_b == total);
	EXPECT(cudaMalloc(&d, 16 * MIB) == cudaSuccess);
	EXPECT(cudaMemGetInfo(&free_b, &total) == cudaSuccess && free_b == 48 * MIB);
	EXPECT(cudaMalloc(&d2, 64 * MIB) == cudaErrorMemoryAllocation);
	EXPECT(cudaGetLastError() == cudaErrorMemoryAllocation);
	EXPECT(cudaStreamCreate(&s) == cudaSuccess);
	EXPECT(cudaMemPrefetchAsync(a, 32 * MIB, dev_loc, 0, s) == cudaSuccess);
	EXPECT(cudaMemPrefetchAsync(b, 32 * MIB, dev_loc, 0, s) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	counters(&c);
	EXPECT(c.evictions == 16 * MIB / (64 << 10));
	EXPECT(c.device_bytes_peak == 64 * MIB && c.device_bytes == 64 * MIB);
	EXPECT(cudaMemGetInfo(&free_b, &total) == cudaSuccess && free_b == 0);
	EXPECT(cudaFree(d) == cudaSuccess);
	EXPECT(cudaMemGetInfo(&free_b, &total) == cudaSuccess && free_b == 16 * MIB);
	return 0;
}

/* Managed pages: prefetches move, a host touch of a device page faults it
 * back, advice decides between a device fault and a remote access. */
static int page_table(void)
{
	struct dao_cudamodel_counters c;
	char *m = managed(4 * MIB), *h = malloc(64 << 10);
	cudaStream_t s;

	EXPECT(h && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
	m[0] = 9;
	EXPECT(cudaMemPrefetchAsync(m, 2 * MIB, dev_loc, 0, s) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	counters(&c);
	EXPECT(c.prefetch_migrations == 32 && c.managed_device_bytes == 2 * MIB);
	EXPECT(m[0] == 9); /* host fault: page 0 comes back */
	counters(&c);
	EXPECT(c.host_faults == 1 && c.fault_migrations == 1);
	EXPECT(c.managed_device_bytes == 2 * MIB - (64 << 10));
	/* Device reads a host page: without advice a fault that migrates. */
	EXPECT(cudaMemcpyAsync(h, m + 2 * MIB, 64 << 10, cudaMemcpyDefault, s) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	counters(&c);
	EXPECT(c.device_faults == 1 && c.fault_migrations == 2 && c.remote_accesses == 0);
	/* Preferred on the host and mapped for the device: read remotely. */
	EXPECT(cudaMemAdvise(m + 3 * MIB, MIB, cudaMemAdviseSetPreferredLocation, host_loc) ==
	       cudaSuccess);
	EXPECT(cudaMemAdvise(m + 3 * MIB, MIB, cudaMemAdviseSetAccessedBy, dev_loc) == cudaSuccess);
	EXPECT(cudaMemcpyAsync(h, m + 3 * MIB, 64 << 10, cudaMemcpyDefault, s) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	counters(&c);
	EXPECT(c.device_faults == 1 && c.fault_migrations == 2 && c.remote_accesses == 1);
	EXPECT(cudaMemPrefetchAsync(m, 2 * MIB, host_loc, 0, s) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	counters(&c);
	EXPECT(c.managed_device_bytes == 64 << 10); /* the page the device faulted in */
	return 0;
}

/* The host's first touch of a managed page populates it (a CPU page fault
 * on a real driver, with no migration); a page prefetched or discarded to
 * the host is populated already (as documented), even when some of its
 * bytes were discarded on the device. */
static int populations(void)
{
	struct dao_cudamodel_counters c;
	char *m = managed(2 * MIB);
	void *p = m;
	size_t n = 2 * MIB, first = 0;
	struct cudaMemLocation loc = host_loc;
	cudaStream_t s;

	EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
	m[0] = 1;
	m[100] = 2;
	EXPECT(cudaMemPrefetchAsync(m, 2 * MIB, dev_loc, 0, s) == cudaSuccess);
	EXPECT(cudaMemPrefetchAsync(m, 2 * MIB, host_loc, 0, s) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	EXPECT(m[100] == 2 && m[5 << 16] == 0);
	counters(&c);
	EXPECT(c.host_populations == 1 && c.host_faults == 0 && c.prefetch_migrations == 64);
	EXPECT(cudaMemDiscardAndPrefetchBatchAsync(&p, &n, 1, &loc, &first, 1, 0, s) ==
	       cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	m[1 << 16] = 3;
	counters(&c);
	EXPECT(c.host_populations == 1 && c.host_faults == 0 && c.fault_migrations == 0);
	loc = dev_loc;
	EXPECT(cudaMemDiscardAndPrefetchBatchAsync(&p, &n, 1, &loc, &first, 1, 0, s) ==
	       cudaSuccess);
	EXPECT(cudaMemsetAsync(m, 4, MIB, s) == cudaSuccess);
	EXPECT(cudaMemPrefetchAsync(m, 2 * MIB, host_loc, 0, s) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	EXPECT(m[7] == 4);
	counters(&c);
	EXPECT(c.host_populations == 1 && c.host_faults == 0);
	return 0;
}

/* The records populations() leaves in DAO_CUDAMODEL_UM_RECORDS: the first
 * touch, the three prefetches (one run of 32 pages each, of cause user);
 * nothing for the discards, nor for touches of pages that have a page. */
static void check_population_records(const char *path)
{
	static const char *const want[] = { "cpu-fault", "htod", "dtoh", "dtoh" };
	unsigned long long start, end, addr[4], value[4];
	char kind[32], cause[32], line[256];
	FILE *f = fopen(path, "r");
	int n = 0, bad = 0;

	if (!f || !fgets(line, sizeof(line), f) ||
	    strncmp(line, "# dao-umtrace-records 1 clock=monotonic source=cudamodel dropped=0",
		    66)) {
		tap_ok(0, "DAO_CUDAMODEL_UM_RECORDS: a records file with its header");
		if (f)
			fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (n == 4 || sscanf(line, "%31s %llu %llu %llx %llu %31s", kind, &start, &end,
				     &addr[n], &value[n], cause) != 6 ||
		    strcmp(kind, want[n]) || end < start || strcmp(cause, n ? "user" : "-"))
			bad = 1;
		n++;
	}
	fclose(f);
	tap_ok(!bad && n == 4 && addr[1] == addr[0] && addr[2] == addr[0] && addr[3] == addr[0] &&
		       value[1] == 2 * MIB && value[2] == 2 * MIB && value[3] == 2 * MIB,
	       "DAO_CUDAMODEL_UM_RECORDS: the fault and the prefetches' migrations, in order, "
	       "by address; no record for the discards");
}

/* A host touch of a managed page while a prefetch of it is in flight: a
 * write conflicts with it (the move reads the page), whether or not the
 * stream has got to it yet; a read conflicts with nothing and goes
 * through. */
static int moving_touch(bool write)
{
	char *m = managed(2 * MIB);
	volatile char *v = m;
	cudaStream_t s;

	EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
	m[0] = 3;
	EXPECT(cudaMemPrefetchAsync(m, 64 << 10, dev_loc, 0, s) == cudaSuccess);
	if (write)
		v[1] = 4; /* the model stops the process here */
	else
		EXPECT(v[0] == 3);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	return 0;
}

/* A query that sees a stream's write done orders the host after it. With
 * DAO_CUDAMODEL_QUERY=0 no query ever does: the read after one races. */
static int query_orders(void)
{
	const char *q = getenv("DAO_CUDAMODEL_QUERY");
	bool never = q && !strcmp(q, "0");
	char *m = managed(2 * MIB);
	volatile char *v = m;
	cudaStream_t s;
	cudaEvent_t ev;
	cudaError_t err;

	EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
	EXPECT(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess);
	EXPECT(cudaMemsetAsync(m, 5, 64 << 10, s) == cudaSuccess);
	EXPECT(cudaEventRecord(ev, s) == cudaSuccess);
	while ((err = cudaEventQuery(ev)) == cudaErrorNotReady && !never)
		sched_yield();
	EXPECT(err == (never ? cudaErrorNotReady : cudaSuccess));
	EXPECT(v[0] == 5); /* under DAO_CUDAMODEL_QUERY=0 the model stops it here */
	return 0;
}

/* Every misuse gets the runtime's error; the process then fails unless
 * told the misuses were meant. */
static int misuse(void)
{
	struct cudaMemLocation bad = { cudaMemLocationTypeInvalid, 0 };
	char *m = managed(2 * MIB), *h = malloc(1 << 20);
	struct dao_cudamodel_counters c0, c;
	cudaStream_t s;
	cudaEvent_t ev;
	void *d;

	EXPECT(h && cudaMalloc(&d, MIB) == cudaSuccess);
	EXPECT(cudaStreamCreate(&s) == cudaSuccess && cudaEventCreate(&ev) == cudaSuccess);
	counters(&c0);
	EXPECT(cudaHostRegister(h, 1 << 20, 0) == cudaSuccess);
	EXPECT(cudaHostRegister(h + 4096, 4096, 0) == cudaErrorHostMemoryAlreadyRegistered);
	counters(&c);
	EXPECT(c.host_registered_bytes == c0.host_registered_bytes + (1 << 20));
	EXPECT(cudaHostUnregister(h) == cudaSuccess);
	counters(&c);
	EXPECT(c.host_registered_bytes == c0.host_registered_bytes);
	EXPECT(cudaHostUnregister(h) == cudaErrorHostMemoryNotRegistered);
	EXPECT(cudaMemPrefetchAsync(m, 2 * MIB, bad, 0, s) == cudaErrorInvalidValue);
	EXPECT(cudaMemAdvise(m, MIB, cudaMemAdviseSetAccessedBy, host_loc) == cudaErrorInvalidValue);
	EXPECT(cudaMemPrefetchAsync(m + 4096, 64 << 10, dev_loc, 0, s) == cudaErrorInvalidValue);
	EXPECT(cudaMemPrefetchAsync(m, 4 * MIB, dev_loc, 0, s) == cudaErrorInvalidValue);
	EXPECT(cudaMemcpyAsync(d, h, 2 * MIB, cudaMemcpyHostToDevice, s) == cudaErrorInvalidValue);
	EXPECT(cudaMemcpyAsync(h, d, 4096, cudaMemcpyHostToDevice, s) == cudaErrorInvalidValue);
	EXPECT(cudaMemsetAsync(h, 0, 4096, s) == cudaErrorInvalidValue);
	EXPECT(cudaStreamDestroy(s) == cudaSuccess);
	EXPECT(cudaMemsetAsync(d, 0, 4096, s) == cudaErrorInvalidResourceHandle);
	EXPECT(cudaStreamDestroy(s) == cudaErrorInvalidResourceHandle);
	EXPECT(cudaEventDestroy(ev) == cudaSuccess);
	EXPECT(cudaEventSynchronize(ev) == cudaErrorInvalidResourceHandle);
	EXPECT(cudaFree(h) == cudaErrorInvalidValue);
	EXPECT(cudaFree(d) == cudaSuccess);
	EXPECT(cudaFree(d) == cudaErrorInvalidValue);
	EXPECT(cudaSetDevice(1) == cudaErrorInvalidDevice);
	return 0;
}

/* Timing events and synchronous calls. */
static int events(void)
{
	cudaEvent_t a, b, untimed;
	float ms = -1;
	void *d;
	int v = 5, back = 0;

	EXPECT(cudaEventCreate(&a) == cudaSuccess && cudaEventCreate(&b) == cudaSuccess);
	EXPECT(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming) == cudaSuccess);
	EXPECT(cudaEventQuery(a) == cudaSuccess); /* never recorded */
	EXPECT(cudaEventElapsedTime(&ms, a, b) == cudaErrorInvalidResourceHandle);
	EXPECT(cudaMalloc(&d, sizeof(v)) == cudaSuccess);
	EXPECT(cudaEventRecord(a, NULL) == cudaSuccess);
	EXPECT(cudaMemcpy(d, &v, sizeof(v), cudaMemcpyHostToDevice) == cudaSuccess);
	EXPECT(cudaEventRecord(b, NULL) == cudaSuccess);
	EXPECT(cudaEventRecord(untimed, NULL) == cudaSuccess);
	EXPECT(cudaEventSynchronize(b) == cudaSuccess);
	EXPECT(cudaEventElapsedTime(&ms, a, b) == cudaSuccess && ms >= 0);
	EXPECT(cudaEventElapsedTime(&ms, a, untimed) == cudaErrorInvalidResourceHandle);
	EXPECT(cudaMemcpy(&back, d, sizeof(v), cudaMemcpyDeviceToHost) == cudaSuccess && back == 5);
	EXPECT(cudaDeviceSynchronize() == cudaSuccess);
	return 0;
}

/* Under DAO_CUDAMODEL_FAIL=cudaMalloc:2,cudaMemcpyAsync:1+: the second
 * cudaMalloc and every cudaMemcpyAsync fail with the runtime's codes and
 * do nothing; the other calls go through. */
static int injected(void)
{
	void *a = NULL, *b = NULL, *c = NULL;
	int v = 7, back = 0;

	EXPECT(cudaMalloc(&a, sizeof(v)) == cudaSuccess);
	EXPECT(cudaMalloc(&b, sizeof(v)) == cudaErrorMemoryAllocation && !b);
	EXPECT(cudaGetLastError() == cudaErrorMemoryAllocation);
	EXPECT(cudaMalloc(&c, sizeof(v)) == cudaSuccess);
	EXPECT(cudaMemcpyAsync(a, &v, sizeof(v), cudaMemcpyHostToDevice, NULL) ==
	       cudaErrorLaunchFailure);
	EXPECT(cudaMemcpyAsync(a, &v, sizeof(v), cudaMemcpyHostToDevice, NULL) ==
	       cudaErrorLaunchFailure);
	EXPECT(cudaMemcpy(a, &v, sizeof(v), cudaMemcpyHostToDevice) == cudaSuccess);
	EXPECT(cudaMemcpy(&back, a, sizeof(v), cudaMemcpyDeviceToHost) == cudaSuccess && back == 7);
	EXPECT(cudaFree(a) == cudaSuccess && cudaFree(c) == cudaSuccess);
	return 0;
}

static int run_scenario(const char *name)
{
	if (!strcmp(name, "missing-wait"))
		return two_streams(false, false);
	if (!strcmp(name, "event-wait"))
		return two_streams(true, false);
	if (!strcmp(name, "legacy-stream"))
		return two_streams(false, true);
	if (!strcmp(name, "discarded-read-device"))
		return discarded_read(false);
	if (!strcmp(name, "discarded-read-host"))
		return discarded_read(true);
	if (!strcmp(name, "host-touch"))
		return host_touch();
	if (!strcmp(name, "moving-write"))
		return moving_touch(true);
	if (!strcmp(name, "moving-read"))
		return moving_touch(false);
	if (!strcmp(name, "query-orders"))
		return query_orders();
	if (!strcmp(name, "card-overflow"))
		return card_overflow();
	if (!strcmp(name, "page-table"))
		return page_table();
	if (!strcmp(name, "populations"))
		return populations();
	if (!strcmp(name, "misuse"))
		return misuse();
	if (!strcmp(name, "events"))
		return events();
	if (!strcmp(name, "injected"))
		return injected();
	fprintf(stderr, "unknown scenario %s\n", name);
	return 2;
}

int main(int argc, char **argv)
{
	char self[4096];

	if (!scenario_parent(argc, self, sizeof(self)))
		return run_scenario(argv[1]);
	expect(self, "missing-wait", NULL, MODEL_EXIT, "race on",
	       "a read on one stream of what another writes, no event wait: a race, both sites");
	expect(self, "event-wait", NULL, 0, NULL,
	       "the same with cudaStreamWaitEvent: ordered, the bytes arrive");
	expect(self, "legacy-stream", NULL, 0, NULL,
	       "the legacy default stream waits for a blocking stream by itself");
	expect(self, "discarded-read-device", NULL, MODEL_EXIT, "device read of discarded data",
	       "a copy reading discarded bytes is stopped (the rewritten part is not)");
	expect(self, "discarded-read-host", NULL, MODEL_EXIT, "host read of discarded data",
	       "a host read of discarded bytes is stopped");
	expect(self, "host-touch", NULL, MODEL_EXIT, "host read of device memory",
	       "a host read of cudaMalloc'd memory is stopped");
	expect(self, "moving-write", NULL, MODEL_EXIT, "race on",
	       "a host write to a managed page while a prefetch of it is in flight: a race");
	expect(self, "moving-read", NULL, 0, NULL,
	       "a host read of a managed page while a prefetch of it is in flight goes through");
	expect(self, "query-orders", NULL, 0, NULL,
	       "a query that sees a stream's write done orders the host after it");
	expect(self, "query-orders", "DAO_CUDAMODEL_QUERY=0", MODEL_EXIT, "race on",
	       "DAO_CUDAMODEL_QUERY=0: no query orders the host, its read races");
	expect(self, "card-overflow", "DAO_CUDAMODEL_MEM=64M", 0, NULL,
	       "a 64 MiB card: cudaMalloc beyond it fails, managed pages beyond it are evicted");
	expect(self, "injected", "DAO_CUDAMODEL_FAIL=cudaMalloc:2,cudaMemcpyAsync:1+", 0,
	       "failing cudaMalloc (call 2 of it",
	       "DAO_CUDAMODEL_FAIL: the calls named fail with the runtime's codes, the rest go through");
	expect(self, "injected", "DAO_CUDAMODEL_FAIL=count", 1,
	       "DAO_CUDAMODEL_FAIL: calls all=",
	       "DAO_CUDAMODEL_FAIL=count: nothing fails, the calls are counted at exit");
	expect(self, "page-table", NULL, 0, NULL,
	       "prefetches, host and device faults and remote accesses are counted as advised");
	{
		static char env[] = "DAO_CUDAMODEL_UM_RECORDS=/tmp/cudamodel-records-XXXXXX";
		int fd = mkstemp(env + strlen("DAO_CUDAMODEL_UM_RECORDS="));

		if (fd < 0)
			tap_bail("mkstemp failed");
		close(fd);
		expect(self, "populations", env, 0, NULL,
		       "a first host touch populates a page; a page prefetched or discarded has one");
		check_population_records(env + strlen("DAO_CUDAMODEL_UM_RECORDS="));
		unlink(env + strlen("DAO_CUDAMODEL_UM_RECORDS="));
	}
	expect(self, "misuse", "DAO_CUDAMODEL_MISUSE_OK=1", 0, NULL,
	       "misuses get the runtime's errors");
	expect(self, "misuse", NULL, MODEL_EXIT, "refused call(s): failing the process",
	       "a process that made a refused call fails");
	expect(self, "events", "DAO_CUDAMODEL_MISUSE_OK=1", 0, NULL,
	       "events time and order synchronous copies; untimed or unrecorded ones refused");
	tap_plan_done();
	return tap_exit();
}
