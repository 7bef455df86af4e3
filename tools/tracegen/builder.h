/* SPDX-License-Identifier: MIT */
/*
 * builder.h - a job's kernels held in memory, then written as dao-trace v1.
 *
 * A generator creates buffers and appends kernels in submission order; the
 * builder gives each buffer its trace id at its first use (so a `b` line
 * comes just before the kernel that first names it, as a program allocates
 * just before use), and writes `f` right after the last use of every buffer
 * not marked TG_KEEP (activations, gradients, per-step inputs). A buffer
 * never used is never written. Errors are sticky: the first one (overflow,
 * a size out of range, a kernel that breaks the format's rules, no memory)
 * is kept with its message and every later call does nothing.
 */
#ifndef DAO_TRACEGEN_BUILDER_H
#define DAO_TRACEGEN_BUILDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Buffer flags. */
enum {
	TG_HOST = 1u << 0, /* its data starts on the host: first use must read */
	TG_KEEP = 1u << 1, /* the program keeps it to the end: never freed */
};

/* At most this many operands in one of a kernel's r, w, rw lists. */
#define TG_MAX_OPS 32
/* Refuse traces larger than this many kernels (memory stays bounded). */
#define TG_MAX_KERNELS 4000000u

struct tg_list {
	uint32_t n;
	uint32_t id[TG_MAX_OPS]; /* builder buffer handles */
};

struct tg_buffer;
struct tg_event;

struct tg_builder {
	struct tg_buffer *bufs;
	size_t nbufs, capbufs;
	struct tg_event *events;
	size_t nevents, capevents;
	uint32_t *ops; /* all kernels' operands: r, then w, then rw */
	size_t nops, capops;
	size_t nkernels;
	char *preamble; /* comment text, one line, without '#' */
	int failed;
	char err[256];
};

void tg_init(struct tg_builder *b);
void tg_destroy(struct tg_builder *b);

/* Record the first error (printf-style); later ones are dropped. */
__attribute__((format(printf, 2, 3))) void tg_fail(struct tg_builder *b, const char *fmt, ...);

/* a * b, or a sticky error when it overflows (or exceeds 2^63 - 1). */
uint64_t tg_mul(struct tg_builder *b, uint64_t x, uint64_t y);
uint64_t tg_add(struct tg_builder *b, uint64_t x, uint64_t y);

/* The comment line written after the header (no '#', no newline). */
void tg_preamble(struct tg_builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A new buffer of `bytes` bytes; kind and label are single words (label may
 * be NULL). Returns its handle (0 when the builder has failed). */
uint32_t tg_buffer(struct tg_builder *b, uint64_t bytes, unsigned flags, const char *kind,
		   const char *labelfmt, ...) __attribute__((format(printf, 5, 6)));

/* Append one kernel. The lists hold handles; `name` is one word. */
void tg_kernel(struct tg_builder *b, const char *name, uint64_t flops, const struct tg_list *r,
	       const struct tg_list *w, const struct tg_list *rw);

/* Append an iteration boundary `i n`. */
void tg_iteration(struct tg_builder *b, uint64_t n);

/* List helpers: TG_L(a, b, ...) is a list literal (NULL means none);
 * tg_list_add appends one handle (overflowing TG_MAX_OPS fails the builder). */
#define TG_L(...)                                                                   \
	(&(struct tg_list){ .n = sizeof((uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t), \
			    .id = { __VA_ARGS__ } })
void tg_list_clear(struct tg_list *l);
void tg_list_add(struct tg_builder *b, struct tg_list *l, uint32_t h);

/* Write the whole trace. Returns 0, or -1 with the reason in b->err (a
 * failed builder, or an I/O error). */
int tg_write(struct tg_builder *b, FILE *out);

#endif /* DAO_TRACEGEN_BUILDER_H */
