/* SPDX-License-Identifier: MIT */
/*
 * dao_publish.h - the shared-memory segment through which a libdao process
 * shows its residency to daoctl (layout version 3, Documentation/daoctl.md).
 *
 * One segment per device of a process: DAO_PUB_DIR/dao.<uid>.<pid>.<serial>,
 * mode 0600, created under a temporary name and renamed once its header is
 * complete, so a reader never finds a half-initialised header under the final
 * name. The header never changes afterwards. Two parts change:
 *
 *   summary  counters, rewritten after every executor op
 *   table    the largest live buffers, rewritten at most every ~100 ms and
 *            whenever the job waits on the executor
 *
 * Each part is a run of 64-bit words guarded by its own sequence counter
 * (odd while the writer is inside). Every word is accessed atomically:
 * the writer stores with release order after making the counter odd, the
 * reader loads with acquire order and re-reads the counter, so a reader that
 * saw any word of an unfinished write also sees the counter move and retries.
 * No fences are needed (sanitizers model none), and atomic words cannot race.
 * Keeping the two parts apart lets a reader copy the table without being
 * starved by the per-op summary updates.
 *
 * Versions grow only by appending fields, to the header or to the summary:
 * version 2 added slurm_job_id to the header, version 3 the policy in
 * force to the summary (a job that chose none takes plan at an iteration
 * mark; the header's policy is the one the device opened with).
 * summary_off is the size of the header the writer knows, and table_off -
 * summary_off the size of its summary, so a reader takes an older segment
 * (dao_pub_summary_bytes_of its version) with the fields it lacks zero.
 */
#ifndef DAO_PUBLISH_H
#define DAO_PUBLISH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DAO_PUB_DIR "/dev/shm"
#define DAO_PUB_PREFIX "dao."
#define DAO_PUB_TMP_PREFIX ".dao-tmp."
/* "DAOPUB" in memory order on little-endian machines. */
#define DAO_PUB_MAGIC 0x00004255504f4144ull
#define DAO_PUB_VERSION 3u
/* Buffers published per device; the largest ones are kept. */
#define DAO_PUB_BUFS 256u
#define DAO_PUB_TEXT 64
#define DAO_PUB_SHORT 16
/* next_use / since_last: no such use. */
#define DAO_PUB_NONE UINT64_MAX

enum dao_pub_location {
	DAO_PUB_LOC_NOWHERE = 0, /* no valid copy: never written, or dead until overwritten */
	DAO_PUB_LOC_HOST = 1,
	DAO_PUB_LOC_DEVICE = 2,
	DAO_PUB_LOC_BOTH = 3,
};

/* dao_pub_buf.flags */
#define DAO_PUB_BUF_LOC_MASK 0x3ull
#define DAO_PUB_BUF_DIRTY (1ull << 2)    /* valid on the device only */
#define DAO_PUB_BUF_RELEASED (1ull << 3) /* the job dropped it; queued uses remain */
#define DAO_PUB_BUF_PINNED (1ull << 4)   /* its host copy is pinned by the module */

/* Written once, before the segment is renamed to its final name. */
struct dao_pub_header {
	uint64_t magic;
	uint32_t version;
	uint32_t buf_cap;
	uint64_t total_bytes; /* size of the whole segment */
	uint64_t summary_off; /* byte offset of struct dao_pub_area for the summary */
	uint64_t table_off;   /* byte offset of struct dao_pub_area for the table */
	uint32_t pid;
	uint32_t uid;
	uint64_t start_time; /* /proc/<pid>/stat field 22: tells a reused pid apart */
	uint64_t created_ns; /* CLOCK_REALTIME at creation */
	uint32_t serial;     /* device number within the process */
	uint32_t lookahead;
	uint64_t budget;
	uint64_t host_budget;
	char job[DAO_PUB_TEXT];
	char backend[DAO_PUB_SHORT];
	char policy[DAO_PUB_SHORT];
	/* version 2 */
	uint64_t slurm_job_id; /* SLURM_JOB_ID of the process, 0 outside Slurm */
};

/* The header of version 1: everything before slurm_job_id. */
#define DAO_PUB_HEADER_V1_BYTES offsetof(struct dao_pub_header, slurm_job_id)

/* The summary, as words in this order. */
struct dao_pub_summary {
	uint64_t h2d_bytes;
	uint64_t d2h_bytes;
	uint64_t fetches;
	uint64_t prefetches;
	uint64_t writebacks;
	uint64_t evictions;
	uint64_t drops;
	uint64_t stalls;
	uint64_t stall_ns;
	uint64_t kernels;
	uint64_t device_bytes;
	uint64_t peak_device_bytes;
	uint64_t host_bytes;
	uint64_t live_buffers;
	uint64_t budget_bytes;
	uint64_t host_budget_bytes;
	uint64_t pinned_bytes; /* host copies pinned through the module, at the last table */
	uint64_t ops;          /* executor ops done (the device's logical time) */
	uint64_t updated_ns;   /* CLOCK_MONOTONIC_COARSE at the last update */
	uint64_t updates;      /* summary writes so far */
	/* version 3 */
	uint64_t policy;       /* the dao_policy in force (0: not published) */
};

/* The summary of versions 1 and 2: everything before policy. */
#define DAO_PUB_SUMMARY_V2_BYTES offsetof(struct dao_pub_summary, policy)

/* The table's head, followed by `count` struct dao_pub_buf. */
struct dao_pub_table {
	uint64_t count;    /* entries that follow, <= buf_cap */
	uint64_t live;     /* live buffers when taken (count is min(live, buf_cap)) */
	uint64_t now_seq;  /* logical time the distances below refer to */
	uint64_t taken_ns; /* CLOCK_MONOTONIC_COARSE when taken */
};

struct dao_pub_buf {
	uint64_t id; /* the device-wide buffer serial, as in dao-traces */
	uint64_t size;
	uint64_t flags;      /* DAO_PUB_BUF_* */
	uint64_t next_use;   /* ops until the next queued use, DAO_PUB_NONE if none */
	uint64_t since_last; /* ops since the last executed use, DAO_PUB_NONE if never */
	char label[DAO_PUB_TEXT];
};

#define DAO_PUB_WORDS(type) (sizeof(type) / sizeof(uint64_t))
_Static_assert(sizeof(struct dao_pub_summary) % 8 == 0, "summary is whole words");
_Static_assert(sizeof(struct dao_pub_table) % 8 == 0, "table head is whole words");
_Static_assert(sizeof(struct dao_pub_buf) % 8 == 0, "buffer entry is whole words");
_Static_assert(sizeof(struct dao_pub_header) % 8 == 0, "header is whole words");
_Static_assert(sizeof(_Atomic uint64_t) == 8, "atomic words are plain words");

/* A seqlock-guarded run of words. */
struct dao_pub_area {
	_Atomic uint64_t seq;
	_Atomic uint64_t w[];
};

/* The summary area of a segment of layout `version` (1 to DAO_PUB_VERSION). */
static inline size_t dao_pub_summary_bytes_of(uint32_t version)
{
	return sizeof(struct dao_pub_area) +
	       (version < 3 ? DAO_PUB_SUMMARY_V2_BYTES : sizeof(struct dao_pub_summary));
}

static inline size_t dao_pub_summary_bytes(void)
{
	return dao_pub_summary_bytes_of(DAO_PUB_VERSION);
}

static inline size_t dao_pub_table_bytes(uint32_t cap)
{
	return sizeof(struct dao_pub_area) + sizeof(struct dao_pub_table) +
	       (size_t)cap * sizeof(struct dao_pub_buf);
}

/* ------------------------------------------------------------- writer */

/* Single writer per area. */
static inline void dao_pub_write_begin(struct dao_pub_area *a)
{
	uint64_t s = atomic_load_explicit(&a->seq, memory_order_relaxed);

	atomic_store_explicit(&a->seq, s + 1, memory_order_relaxed);
}

/* Release order: a reader that loads any of these words with acquire order
 * also sees the odd counter stored before it. */
static inline void dao_pub_write_words(struct dao_pub_area *a, size_t at, const void *src,
				       size_t nwords)
{
	const unsigned char *p = src;

	for (size_t i = 0; i < nwords; i++) {
		uint64_t v;

		memcpy(&v, p + i * 8, 8);
		atomic_store_explicit(&a->w[at + i], v, memory_order_release);
	}
}

static inline void dao_pub_write_end(struct dao_pub_area *a)
{
	uint64_t s = atomic_load_explicit(&a->seq, memory_order_relaxed);

	atomic_store_explicit(&a->seq, s + 1, memory_order_release);
}

/* ------------------------------------------------------------- reader */

/* Start a read attempt: false while a write is in progress (try again). */
static inline bool dao_pub_read_begin(const struct dao_pub_area *a, uint64_t *seq)
{
	*seq = atomic_load_explicit((_Atomic uint64_t *)&a->seq, memory_order_acquire);
	return !(*seq & 1);
}

static inline void dao_pub_read_words(const struct dao_pub_area *a, size_t at, void *dst,
				      size_t nwords)
{
	unsigned char *p = dst;

	for (size_t i = 0; i < nwords; i++) {
		uint64_t v = atomic_load_explicit((_Atomic uint64_t *)&a->w[at + i],
						  memory_order_acquire);

		memcpy(p + i * 8, &v, 8);
	}
}

/* True when nothing was written since dao_pub_read_begin: the copy is whole.
 * The acquire loads of the words keep this load after them. */
static inline bool dao_pub_read_end(const struct dao_pub_area *a, uint64_t seq)
{
	return atomic_load_explicit((_Atomic uint64_t *)&a->seq, memory_order_relaxed) == seq;
}

/* ------------------------------------------------------------ identity */

/*
 * Field 22 (start time, clock ticks after boot) of a /proc/<pid>/stat text:
 * with the pid it names a process uniquely, so a segment whose pid now
 * belongs to another process is recognised as stale. The command name in
 * field 2 may hold spaces and parentheses: fields are counted from the last ')'.
 */
static inline bool dao_pub_stat_start_time(const char *stat, uint64_t *out)
{
	const char *p = strrchr(stat, ')');
	char *end;
	unsigned long long v;

	if (!p)
		return false;
	for (int field = 3; field <= 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return false;
		p++;
	}
	if (*p < '0' || *p > '9')
		return false;
	v = strtoull(p, &end, 10);
	if (end == p || (*end != ' ' && *end != '\n' && *end != 0))
		return false;
	*out = v;
	return true;
}

#endif /* DAO_PUBLISH_H */
