/* SPDX-License-Identifier: MIT */
/*
 * dao-gpubw - pinned host-to-device, device-to-host and bidirectional
 * bandwidth of the current CUDA device, measured the way libdao's
 * cuda-explicit backend copies: cudaMemcpyAsync of large pinned buffers on
 * one stream per direction, timed with events. Prints one JSON object; the
 * figures are the denominators of bench-gpu's bound.
 *
 * It also measures a device-to-device copy between the two device
 * buffers (d2d_bytes_per_s: bytes copied per second, each read once and
 * written once), a measure of the card's memory bandwidth for daosim's
 * device file.
 *
 * Usage: dao-gpubw [BYTES [REPEATS]]  (default 256 MiB, 8).
 * Exit status: 0 measured; 1 a CUDA call failed; 2 bad argument;
 * 77 no usable CUDA device.
 *
 * Safety on lent cards: 2 x BYTES of device memory at most, refused beyond
 * half of what is free; nothing about the card is changed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpubench.h"

#define CHECK(call) GPUBENCH_CHECK("dao-gpubw", call)

struct dir {
	cudaStream_t s;
	void *host, *dev;
	void *peer; /* device-to-device: the destination */
	enum cudaMemcpyKind kind;
};

static void issue(struct dir *d, size_t bytes)
{
	if (d->kind == cudaMemcpyHostToDevice)
		CHECK(cudaMemcpyAsync(d->dev, d->host, bytes, d->kind, d->s));
	else if (d->kind == cudaMemcpyDeviceToDevice)
		CHECK(cudaMemcpyAsync(d->peer, d->dev, bytes, d->kind, d->s));
	else
		CHECK(cudaMemcpyAsync(d->host, d->dev, bytes, d->kind, d->s));
}

/* Bytes per second moved by `n` directions at once, `reps` copies each. */
static double measure(struct dir *dirs, int n, size_t bytes, int reps)
{
	cudaEvent_t start, stop, joined[2];
	float ms = 0;

	CHECK(cudaEventCreate(&start));
	CHECK(cudaEventCreate(&stop));
	for (int i = 0; i < n; i++)
		CHECK(cudaEventCreateWithFlags(&joined[i], cudaEventDisableTiming));
	/* Warm-up copy: first-touch and mapping costs stay out. */
	for (int i = 0; i < n; i++)
		issue(&dirs[i], bytes);
	CHECK(cudaEventRecord(start, dirs[0].s));
	for (int i = 1; i < n; i++)
		CHECK(cudaStreamWaitEvent(dirs[i].s, start, 0));
	for (int r = 0; r < reps; r++)
		for (int i = 0; i < n; i++)
			issue(&dirs[i], bytes);
	for (int i = 1; i < n; i++) {
		CHECK(cudaEventRecord(joined[i], dirs[i].s));
		CHECK(cudaStreamWaitEvent(dirs[0].s, joined[i], 0));
	}
	CHECK(cudaEventRecord(stop, dirs[0].s));
	CHECK(cudaEventSynchronize(stop));
	CHECK(cudaEventElapsedTime(&ms, start, stop));
	CHECK(cudaEventDestroy(start));
	CHECK(cudaEventDestroy(stop));
	for (int i = 0; i < n; i++)
		CHECK(cudaEventDestroy(joined[i]));
	return (double)bytes * reps * n / (ms * 1e-3);
}

int main(int argc, char **argv)
{
	size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 256ull << 20;
	int reps = argc > 2 ? atoi(argv[2]) : 8, dev = 0, drv = 0;
	struct cudaDeviceProp prop;
	size_t free_b, total;
	struct dir d[2], d2d;
	double h2d, d2h, both, dd;

	if (argc > 3 || !bytes || reps < 1) {
		fprintf(stderr, "usage: dao-gpubw [BYTES [REPEATS]]\n");
		return 2;
	}
	if (gpubench_device("dao-gpubw"))
		return GPUBENCH_NODEV;
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaGetDeviceProperties(&prop, dev));
	CHECK(cudaDriverGetVersion(&drv));
	CHECK(cudaMemGetInfo(&free_b, &total));
	if (2 * bytes > free_b / 2) {
		fprintf(stderr, "dao-gpubw: %zu bytes twice is more than half of the %zu free\n",
			bytes, free_b);
		return 2;
	}
	for (int i = 0; i < 2; i++) {
		CHECK(cudaStreamCreateWithFlags(&d[i].s, cudaStreamNonBlocking));
		CHECK(cudaHostAlloc(&d[i].host, bytes, cudaHostAllocDefault));
		CHECK(cudaMalloc(&d[i].dev, bytes));
		CHECK(cudaMemset(d[i].dev, 0, bytes));
		d[i].kind = i == 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
	}
	h2d = measure(&d[0], 1, bytes, reps);
	d2h = measure(&d[1], 1, bytes, reps);
	both = measure(d, 2, bytes, reps);
	d2d = (struct dir){ d[0].s, NULL, d[0].dev, d[1].dev, cudaMemcpyDeviceToDevice };
	dd = measure(&d2d, 1, bytes, reps);
	printf("{\"gpu\":\"%s\",\"cuda_driver\":%d,\"memory_bytes\":%zu,\"copy_bytes\":%zu,"
	       "\"repeats\":%d,\"h2d_bytes_per_s\":%.6g,\"d2h_bytes_per_s\":%.6g,"
	       "\"bidir_bytes_per_s\":%.6g,\"d2d_bytes_per_s\":%.6g}\n",
	       prop.name, drv, total, bytes, reps, h2d, d2h, both, dd);
	for (int i = 0; i < 2; i++) {
		CHECK(cudaFreeHost(d[i].host));
		CHECK(cudaFree(d[i].dev));
		CHECK(cudaStreamDestroy(d[i].s));
	}
	return 0;
}
