/* SPDX-License-Identifier: MIT */
/*
 * dao-gpuinfo - what the CUDA runtime says of the current device: its name,
 * compute capability, memory (total and free now), managed-memory support,
 * and the driver's and runtime's CUDA versions. One JSON object; with
 * --free, only the free bytes (a number), for scripts that check a size
 * against the card before they ask for it.
 *
 * Usage: dao-gpuinfo [--free]
 * Exit status: 0; 1 a CUDA call failed; 2 bad argument; 77 no usable CUDA
 * device. It changes nothing on the card and allocates nothing there.
 */
#include <stdio.h>
#include <string.h>

#include "gpubench.h"

#define CHECK(call) GPUBENCH_CHECK("dao-gpuinfo", call)

/* The device name as a JSON string body: quotes, backslashes and control
 * characters never reach the output. */
static void json_name(const char *name)
{
	for (const char *c = name; *c; c++)
		putchar(*c == '"' || *c == '\\' || (unsigned char)*c < 0x20 ? '?' : *c);
}

int main(int argc, char **argv)
{
	int n = 0, dev = 0, drv = 0, rt = 0, managed = 0, concurrent = 0;
	struct cudaDeviceProp prop;
	size_t free_b = 0, total = 0;
	int only_free = argc == 2 && strcmp(argv[1], "--free") == 0;

	if (argc > 2 || (argc == 2 && !only_free)) {
		fprintf(stderr, "usage: dao-gpuinfo [--free]\n");
		return 2;
	}
	if (gpubench_device("dao-gpuinfo"))
		return GPUBENCH_NODEV;
	CHECK(cudaGetDeviceCount(&n));
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaMemGetInfo(&free_b, &total));
	if (only_free) {
		printf("%zu\n", free_b);
		return 0;
	}
	CHECK(cudaGetDeviceProperties(&prop, dev));
	CHECK(cudaDriverGetVersion(&drv));
	CHECK(cudaRuntimeGetVersion(&rt));
	CHECK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, dev));
	CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev));
	printf("{\"gpu\":\"");
	json_name(prop.name);
	printf("\",\"device\":%d,\"devices\":%d,\"compute_capability\":\"%d.%d\","
	       "\"cuda_driver\":%d,\"cuda_runtime\":%d,\"total_bytes\":%zu,\"free_bytes\":%zu,"
	       "\"managed_memory\":%s,\"concurrent_managed_access\":%s}\n",
	       dev, n, prop.major, prop.minor, drv, rt, total, free_b, managed ? "true" : "false",
	       concurrent ? "true" : "false");
	return 0;
}
