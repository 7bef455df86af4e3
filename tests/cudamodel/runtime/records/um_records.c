/* SPDX-License-Identifier: MIT */
/*
 * um_records.c - DAO_CUDAMODEL_UM_RECORDS=<file> (um_records.h): every page
 * the model moves or faults, written at exit in the records format of
 * CUPTI's unified-memory records that tools/gpubench/umtrace.c writes
 * ("dao-umtrace-records 1", Documentation/cuda.md), so that the analysis
 * of libdao's request log against the driver's account
 * (tools/gpubench/um-analyze.pl) runs in `make check` on a real job.
 *
 * What the model says of itself, in CUPTI's terms: a prefetch's pages are
 * migrations of cause "user", the card's evictions of cause "eviction", a
 * fault's migrations of cause "coherence"; a host touch of a card page or
 * of a page never populated is a CPU page fault, a device touch of a host
 * page it has no mapping for a GPU page fault, a read over the bus a
 * remote map. A discard moves no bytes and says nothing: what the real
 * driver reports for one is what the experiments on a GPU find out.
 *
 * Records go into memory mapped once (a fault may be recorded inside the
 * model's signal handler, where nothing may be allocated); what does not
 * fit is counted as dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "base/report.h"
#include "records/um_records.h"

struct um_rec {
	uint64_t t_ns;
	uint64_t addr;
	uint64_t value;
	uint8_t kind;
	uint8_t cause;
};

#define UM_MAX_RECORDS (1u << 20)

static struct um_rec *recs;
static uint32_t nrecs;
static uint64_t dropped;
static const char *path;

static const char *const kind_names[] = {
	[CM_UM_HTOD] = "htod",           [CM_UM_DTOH] = "dtoh",
	[CM_UM_CPU_FAULT] = "cpu-fault", [CM_UM_GPU_FAULT] = "gpu-fault",
	[CM_UM_REMOTE_MAP] = "remote-map",
};

static const char *const migration_causes[] = { "unknown", "user", "coherence", "prefetch",
						"eviction", "access-counters" };
static const char *const remote_causes[] = { "unknown", "coherence", "thrashing", "policy",
					     "out-of-memory", "eviction" };

void cm_um_init(void)
{
	const char *p = getenv("DAO_CUDAMODEL_UM_RECORDS");
	void *m;

	if (!p || !*p)
		return;
	m = mmap(NULL, UM_MAX_RECORDS * sizeof(*recs), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		cm_fail("DAO_CUDAMODEL_UM_RECORDS: no memory for the records");
	recs = m;
	path = p;
}

void cm_um_record(enum cm_um_kind kind, const void *addr, uint64_t value, int cause)
{
	struct timespec t;

	if (!recs)
		return;
	if (nrecs == UM_MAX_RECORDS) {
		dropped++;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t);
	recs[nrecs++] = (struct um_rec){
		.t_ns = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec,
		.addr = (uint64_t)(uintptr_t)addr,
		.value = value,
		.kind = (uint8_t)kind,
		.cause = (uint8_t)cause,
	};
}

void cm_um_write(void)
{
	FILE *f;

	if (!recs)
		return;
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "cudamodel: DAO_CUDAMODEL_UM_RECORDS: cannot write %s\n", path);
		return;
	}
	fprintf(f, "# dao-umtrace-records 1 clock=monotonic source=cudamodel dropped=%llu\n",
		(unsigned long long)dropped);
	for (uint32_t i = 0; i < nrecs; i++) {
		const struct um_rec *r = &recs[i];
		const char *cause = "-";

		if (r->kind == CM_UM_HTOD || r->kind == CM_UM_DTOH)
			cause = migration_causes[r->cause];
		else if (r->kind == CM_UM_REMOTE_MAP)
			cause = remote_causes[r->cause];
		else if (r->kind == CM_UM_GPU_FAULT)
			cause = "unknown";
		fprintf(f, "%s %llu %llu 0x%llx %llu %s\n", kind_names[r->kind],
			(unsigned long long)r->t_ns, (unsigned long long)r->t_ns,
			(unsigned long long)r->addr, (unsigned long long)r->value, cause);
	}
	fclose(f);
}
