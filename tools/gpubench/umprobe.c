/* SPDX-License-Identifier: MIT */
/*
 * dao-umprobe - one managed-memory primitive at a time, each timed (events
 * on the device, the clock on the host) and with the unified-memory records
 * it caused (CUPTI's, tools/gpubench/cupti_um.h; flushed between steps), so
 * that what cuda-managed's calls cost and cause is seen apart from any job
 * (issue 23; Documentation/cuda.md, "Experiments"):
 *
 *  - prefetches to the device and to the host, the first time and again,
 *    with and without libdao's advice (preferred location host, accessed
 *    by the device), onto host pages populated or never populated;
 *  - discards (cudaMemDiscardAndPrefetchBatchAsync) to the device and to
 *    the host, and a host write and read after each;
 *  - device accesses without a kernel (a memset and a copy by the copy
 *    engines) of pages on the host;
 *  - candidate ways to take data off the device faster than a prefetch to
 *    the host: cudaMemcpyAsync from device-resident managed pages into
 *    pinned memory, prefetches to the host split over four streams or in
 *    one batch (cudaMemPrefetchBatchAsync); and cuda-explicit's own pinned
 *    copies, for comparison.
 *
 * Prints one JSON object. Every CUDA call is checked: a failed one ends its
 * step with the call and CUDA's reason in the step's "error", and the
 * probe goes on unless the context is lost.
 *
 * Usage: dao-umprobe [--mib N]  (N MiB per buffer, default 256, even).
 * Exit status: 0 every step ran; 1 a step failed; 2 bad argument or too
 * little free device memory; 77 no usable CUDA device.
 *
 * Safety on shared cards: it asks for 4 buffers of managed memory, one of
 * device memory and one pinned, and refuses unless the card has 8 times a
 * buffer free (cudaMemGetInfo, before anything is allocated), so managed
 * memory never needs the driver's eviction. Nothing about the card is
 * changed.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cupti_um.h"

#define MIB (1ull << 20)
#define STREAMS 4

struct probe {
	uint64_t bytes;
	cudaStream_t s[STREAMS];
	cudaEvent_t start, stop, joined[STREAMS];
	char *plain;   /* managed, no advice */
	char *advised; /* managed, libdao's advice */
	char *fresh;   /* managed, advised, never touched by the host */
	char *untouched; /* managed, advised, populated by a prefetch to the host */
	char *pinned;  /* cudaHostAlloc */
	char *dev;     /* cudaMalloc */
	struct cudaMemLocation dev_loc, host_loc;
	bool um; /* the records are collected */
	int failed;
	bool lost; /* a sticky error: the context is gone */
	char error[256];
};

/* Check one call: on failure note it in the step and return false. */
#define CK(p, call) ck(p, (call), #call)

static bool ck(struct probe *p, cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return true;
	if (!p->error[0])
		snprintf(p->error, sizeof(p->error), "%s: %s (%s)", what, cudaGetErrorString(err),
			 cudaGetErrorName(err));
	/* Errors that leave the context unusable are sticky: stop there. */
	if (cudaGetLastError() != cudaSuccess && cudaDeviceSynchronize() != cudaSuccess)
		p->lost = true;
	return false;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ primitives */

static bool prefetch(struct probe *p, char *m, bool to_device)
{
	return CK(p, cudaMemPrefetchAsync(m, p->bytes, to_device ? p->dev_loc : p->host_loc, 0,
					  p->s[0]));
}

static bool discard(struct probe *p, char *m, bool to_device)
{
	void *ptr = m;
	size_t n = p->bytes, first = 0;
	struct cudaMemLocation loc = to_device ? p->dev_loc : p->host_loc;

	return CK(p, cudaMemDiscardAndPrefetchBatchAsync(&ptr, &n, 1, &loc, &first, 1, 0, p->s[0]));
}

static bool sync0(struct probe *p)
{
	return CK(p, cudaStreamSynchronize(p->s[0]));
}

static bool host_write(struct probe *p, char *m)
{
	memset(m, 0x5a, p->bytes);
	return true;
}

static bool host_read(struct probe *p, char *m)
{
	volatile uint64_t sum = 0;

	/* One word a 4 KiB page touches every page, as a copy out would. */
	for (uint64_t i = 0; i < p->bytes; i += 4096)
		sum += ((volatile uint64_t *)(m + i))[0];
	(void)sum;
	return true;
}

/* Prefetches to the host split over the streams, all at once. */
static bool prefetch_host_split(struct probe *p, char *m)
{
	uint64_t part = p->bytes / STREAMS;
	bool ok = true;

	for (int i = 1; i < STREAMS; i++)
		ok = ok && CK(p, cudaStreamWaitEvent(p->s[i], p->start, 0));
	for (int i = 0; i < STREAMS && ok; i++)
		ok = CK(p, cudaMemPrefetchAsync(m + i * part, part, p->host_loc, 0, p->s[i]));
	for (int i = 1; i < STREAMS && ok; i++)
		ok = CK(p, cudaEventRecord(p->joined[i], p->s[i])) &&
		     CK(p, cudaStreamWaitEvent(p->s[0], p->joined[i], 0));
	return ok;
}

/* One cudaMemPrefetchBatchAsync of 8 ranges to the host. */
static bool prefetch_host_batch(struct probe *p, char *m)
{
	void *ptrs[8];
	size_t sizes[8], first = 0;
	struct cudaMemLocation loc = p->host_loc;

	for (int i = 0; i < 8; i++) {
		ptrs[i] = m + (uint64_t)i * (p->bytes / 8);
		sizes[i] = p->bytes / 8;
	}
	return CK(p, cudaMemPrefetchBatchAsync(ptrs, sizes, 8, &loc, &first, 1, 0, p->s[0]));
}

/* ------------------------------------------------------------ steps */

enum op {
	OP_PREFETCH_DEVICE,
	OP_PREFETCH_HOST,
	OP_DISCARD_DEVICE,
	OP_DISCARD_HOST,
	OP_HOST_WRITE,
	OP_HOST_READ,
	OP_DEVICE_MEMSET,      /* the copy engine writes the managed pages */
	OP_DEVICE_COPY_OUT,    /* the copy engine reads them into device memory */
	OP_MEMCPY_TO_PINNED,   /* managed (on the device) -> pinned */
	OP_MEMCPY_FROM_PINNED, /* pinned -> managed (on the device) */
	OP_EXPLICIT_D2H,       /* cudaMalloc -> pinned: cuda-explicit's eviction */
	OP_EXPLICIT_H2D,
	OP_PREFETCH_HOST_SPLIT,
	OP_PREFETCH_HOST_BATCH,
};

struct step {
	const char *name;
	int buf; /* 0 plain, 1 advised, 2 fresh, 3 untouched */
	enum op prep[3]; /* untimed, in order; OP_NONE ends */
	int nprep;
	enum op op;
};

static const char *const buf_names[] = { "plain", "advised", "fresh-advised",
					 "untouched-advised" };

/*
 * The sequence: each buffer's state follows from the steps before it on
 * the same buffer (noted after each), so a step's name says the state it
 * starts from. prep steps set a state without being timed.
 */
static const struct step steps[] = {
	/* libdao's advice on and off: the same walk on both buffers. */
#define WALK(b)                                                                          \
	{ "host-first-touch", b, { 0 }, 0, OP_HOST_WRITE },                              \
	{ "prefetch-to-device", b, { 0 }, 0, OP_PREFETCH_DEVICE },                       \
	{ "prefetch-to-host", b, { 0 }, 0, OP_PREFETCH_HOST },                           \
	{ "host-read-after-prefetch-to-host", b, { 0 }, 0, OP_HOST_READ },               \
	{ "prefetch-to-device-again", b, { 0 }, 0, OP_PREFETCH_DEVICE },                 \
	{ "prefetch-to-host-again", b, { 0 }, 0, OP_PREFETCH_HOST },                     \
	{ "host-write-after-prefetch-to-host", b, { 0 }, 0, OP_HOST_WRITE },             \
	{ "discard-to-host", b, { OP_PREFETCH_DEVICE }, 1, OP_DISCARD_HOST },            \
	{ "host-write-after-discard-to-host", b, { 0 }, 0, OP_HOST_WRITE },              \
	{ "discard-to-device", b, { 0 }, 0, OP_DISCARD_DEVICE },                         \
	{ "device-write-after-discard-to-device", b, { 0 }, 0, OP_DEVICE_MEMSET },       \
	{ "prefetch-to-host-after-device-write", b, { 0 }, 0, OP_PREFETCH_HOST },        \
	{ "device-write-of-host-pages", b, { 0 }, 0, OP_DEVICE_MEMSET },                 \
	{ "device-read-of-host-pages", b, { OP_PREFETCH_HOST }, 1, OP_DEVICE_COPY_OUT },  \
	{ "host-read-after-device-access", b, { OP_PREFETCH_HOST }, 1, OP_HOST_READ }
	WALK(0),
	WALK(1),
#undef WALK
	/* Pages the host never had: populated on the device, then out. */
	{ "prefetch-to-host-never-on-host", 2, { OP_PREFETCH_DEVICE, OP_DEVICE_MEMSET }, 2,
	  OP_PREFETCH_HOST },
	/* Pages nobody had: does a prefetch populate them faster than the
	 * host's first touch faults them in (host-first-touch)? */
	{ "prefetch-to-host-never-touched", 3, { 0 }, 0, OP_PREFETCH_HOST },
	{ "host-write-after-prefetch-of-never-touched", 3, { 0 }, 0, OP_HOST_WRITE },
	/* Faster ways off the device, on the advised buffer as libdao has it. */
	{ "memcpy-device-managed-to-pinned", 1, { OP_PREFETCH_DEVICE }, 1, OP_MEMCPY_TO_PINNED },
	{ "memcpy-pinned-to-device-managed", 1, { 0 }, 0, OP_MEMCPY_FROM_PINNED },
	{ "prefetch-to-host-4-streams", 1, { OP_PREFETCH_DEVICE }, 1, OP_PREFETCH_HOST_SPLIT },
	{ "prefetch-to-host-batch-of-8", 1, { OP_PREFETCH_DEVICE }, 1, OP_PREFETCH_HOST_BATCH },
	{ "explicit-memcpy-device-to-pinned", 1, { 0 }, 0, OP_EXPLICIT_D2H },
	{ "explicit-memcpy-pinned-to-device", 1, { 0 }, 0, OP_EXPLICIT_H2D },
};

static bool is_host(enum op op)
{
	return op == OP_HOST_WRITE || op == OP_HOST_READ;
}

static bool run_op(struct probe *p, char *m, enum op op)
{
	switch (op) {
	case OP_PREFETCH_DEVICE: return prefetch(p, m, true);
	case OP_PREFETCH_HOST: return prefetch(p, m, false);
	case OP_DISCARD_DEVICE: return discard(p, m, true);
	case OP_DISCARD_HOST: return discard(p, m, false);
	case OP_HOST_WRITE: return host_write(p, m);
	case OP_HOST_READ: return host_read(p, m);
	case OP_DEVICE_MEMSET: return CK(p, cudaMemsetAsync(m, 0x3c, p->bytes, p->s[0]));
	case OP_DEVICE_COPY_OUT:
		return CK(p, cudaMemcpyAsync(p->dev, m, p->bytes, cudaMemcpyDefault, p->s[0]));
	case OP_MEMCPY_TO_PINNED:
		return CK(p, cudaMemcpyAsync(p->pinned, m, p->bytes, cudaMemcpyDefault, p->s[0]));
	case OP_MEMCPY_FROM_PINNED:
		return CK(p, cudaMemcpyAsync(m, p->pinned, p->bytes, cudaMemcpyDefault, p->s[0]));
	case OP_EXPLICIT_D2H:
		return CK(p, cudaMemcpyAsync(p->pinned, p->dev, p->bytes, cudaMemcpyDeviceToHost,
					     p->s[0]));
	case OP_EXPLICIT_H2D:
		return CK(p, cudaMemcpyAsync(p->dev, p->pinned, p->bytes, cudaMemcpyHostToDevice,
					     p->s[0]));
	case OP_PREFETCH_HOST_SPLIT: return prefetch_host_split(p, m);
	case OP_PREFETCH_HOST_BATCH: return prefetch_host_batch(p, m);
	}
	return false;
}

static void print_step(struct probe *p, const struct step *st, double seconds,
		       const struct cupti_um_counts *d, bool first)
{
	printf("%s\n    {\"name\": \"%s\", \"buffer\": \"%s\", \"bytes\": %llu, ", first ? "" : ",",
	       st->name, buf_names[st->buf], (unsigned long long)p->bytes);
	if (p->error[0]) {
		printf("\"error\": \"");
		for (const char *c = p->error; *c; c++)
			putchar(*c == '"' || *c == '\\' ? '\'' : *c);
		printf("\", ");
	} else {
		printf("\"seconds\": %.6f, \"gb_per_s\": %.3f, ", seconds,
		       seconds > 0 ? (double)p->bytes / seconds / 1e9 : 0.0);
	}
	if (p->um) {
		printf("\"um\": {");
		cupti_um_json(stdout, d);
		printf("}}");
	} else {
		printf("\"um\": null}");
	}
}

/* One step: its preparation untimed, then the records flushed, the op
 * timed, the records flushed again. */
static void run_step(struct probe *p, const struct step *st, bool first)
{
	char *bufs[] = { p->plain, p->advised, p->fresh, p->untouched };
	char *m = bufs[st->buf];
	struct cupti_um_counts a, b, d;
	double t0, seconds = 0;
	float ms = 0;
	bool ok = true;

	p->error[0] = 0;
	for (int i = 0; i < st->nprep && ok; i++)
		ok = run_op(p, m, st->prep[i]) && sync0(p);
	if (ok && p->um)
		cupti_um_snapshot(&a);
	if (ok && is_host(st->op)) {
		t0 = now_s();
		ok = run_op(p, m, st->op);
		seconds = now_s() - t0;
	} else if (ok) {
		ok = CK(p, cudaEventRecord(p->start, p->s[0])) && run_op(p, m, st->op) &&
		     CK(p, cudaEventRecord(p->stop, p->s[0])) &&
		     CK(p, cudaEventSynchronize(p->stop)) &&
		     CK(p, cudaEventElapsedTime(&ms, p->start, p->stop));
		seconds = ms * 1e-3;
	}
	if (ok && p->um) {
		cupti_um_snapshot(&b);
		cupti_um_diff(&a, &b, &d);
	}
	if (!ok) {
		p->failed++;
		memset(&d, 0, sizeof(d));
	}
	print_step(p, st, seconds, &d, first);
}

static bool setup(struct probe *p)
{
	bool ok = CK(p, cudaMallocManaged((void **)&p->plain, p->bytes, cudaMemAttachGlobal)) &&
		  CK(p, cudaMallocManaged((void **)&p->advised, p->bytes, cudaMemAttachGlobal)) &&
		  CK(p, cudaMallocManaged((void **)&p->fresh, p->bytes, cudaMemAttachGlobal)) &&
		  CK(p, cudaMallocManaged((void **)&p->untouched, p->bytes, cudaMemAttachGlobal)) &&
		  CK(p, cudaHostAlloc((void **)&p->pinned, p->bytes, cudaHostAllocDefault)) &&
		  CK(p, cudaMalloc((void **)&p->dev, p->bytes)) &&
		  CK(p, cudaEventCreate(&p->start)) && CK(p, cudaEventCreate(&p->stop));

	/* libdao's advice (cuda_managed.c), on all but the plain one. */
	for (int i = 0; i < 3 && ok; i++) {
		char *m = i == 0 ? p->advised : i == 1 ? p->fresh : p->untouched;

		ok = CK(p, cudaMemAdvise(m, p->bytes, cudaMemAdviseSetPreferredLocation,
					 p->host_loc)) &&
		     CK(p, cudaMemAdvise(m, p->bytes, cudaMemAdviseSetAccessedBy, p->dev_loc));
	}
	for (int i = 0; i < STREAMS && ok; i++)
		ok = CK(p, cudaStreamCreateWithFlags(&p->s[i], cudaStreamNonBlocking)) &&
		     CK(p, cudaEventCreateWithFlags(&p->joined[i], cudaEventDisableTiming));
	/* The pinned and device buffers' own first touches stay out. */
	if (ok) {
		memset(p->pinned, 1, p->bytes);
		ok = CK(p, cudaMemsetAsync(p->dev, 1, p->bytes, p->s[0])) && sync0(p);
	}
	return ok;
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++)
		putchar(*s == '"' || *s == '\\' ? '\'' : *s);
	putchar('"');
}

int main(int argc, char **argv)
{
	struct probe p = { .bytes = 256 * MIB };
	struct cudaDeviceProp prop;
	size_t free_b = 0, total = 0;
	char why_buf[512];
	const char *why = NULL;
	int n = 0;

	for (int i = 1; i < argc; i++) {
		char *end;
		unsigned long long v;

		if (strcmp(argv[i], "--mib") || i + 1 == argc)
			goto usage;
		v = strtoull(argv[++i], &end, 10);
		if (*end || !v || v % 2 || v > (1u << 20))
			goto usage;
		p.bytes = v * MIB;
	}
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		fprintf(stderr, "dao-umprobe: no usable CUDA device\n");
		return 77;
	}
	p.dev_loc = (struct cudaMemLocation){ .type = cudaMemLocationTypeDevice, .id = 0 };
	p.host_loc = (struct cudaMemLocation){ .type = cudaMemLocationTypeHost, .id = 0 };
	if (!CK(&p, cudaSetDevice(0)) || !CK(&p, cudaFree(NULL)) ||
	    !CK(&p, cudaMemGetInfo(&free_b, &total)) || !CK(&p, cudaGetDeviceProperties(&prop, 0))) {
		fprintf(stderr, "dao-umprobe: %s\n", p.error);
		return 1;
	}
	if (free_b / 8 < p.bytes) {
		printf("{\"error\": \"refused: %llu bytes per buffer need 8 times that free on the "
		       "device, %zu are\"}\n",
		       (unsigned long long)p.bytes, free_b);
		return 2;
	}
	p.um = cupti_um_attach(&why, why_buf, sizeof(why_buf));
	printf("{\"device\": ");
	json_string(prop.name);
	printf(", \"free_bytes\": %zu, \"total_bytes\": %zu, \"bytes\": %llu, \"um\": {", free_b,
	       total, (unsigned long long)p.bytes);
	if (p.um) {
		printf("\"available\": true}");
	} else {
		printf("\"available\": false, \"reason\": ");
		json_string(why);
		putchar('}');
	}
	if (!setup(&p)) {
		printf(", \"error\": ");
		json_string(p.error);
		printf("}\n");
		return 1;
	}
	printf(", \"steps\": [");
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && !p.lost; i++)
		run_step(&p, &steps[i], i == 0);
	printf("\n  ]%s}\n", p.lost ? ", \"error\": \"the context was lost: steps left out\"" : "");
	return p.failed || p.lost ? 1 : 0;
usage:
	fprintf(stderr, "usage: dao-umprobe [--mib N]  (N MiB per buffer, even, default 256)\n");
	return 2;
}
