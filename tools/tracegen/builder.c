/* SPDX-License-Identifier: MIT */
/*
 * builder.c - hold a generated job in memory and write it as dao-trace v1
 * (Documentation/trace-format.md). Ids are handed out at first use and
 * transient buffers are freed after their last use, so generators only say
 * what each kernel touches; the rules of the format (disjoint lists, data
 * that starts on the host is read first, data that starts nowhere is written
 * first) are checked here once for every family.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"

#define TG_SIZE_LIMIT (UINT64_C(1) << 63)

struct tg_buffer {
	uint64_t bytes;
	unsigned flags;
	const char *kind;  /* a string literal of the generator */
	char label[48];    /* "" when none */
	uint64_t trace_id; /* 0 until first use, then its id in the trace */
	size_t last_use;   /* event index of its last kernel */
	int used;
};

enum tg_event_type { TG_EV_KERNEL, TG_EV_ITERATION };

struct tg_event {
	enum tg_event_type type;
	const char *name; /* a string literal of the generator */
	uint64_t value;   /* flops, or the iteration number */
	size_t first_op;
	uint32_t nr, nw, nrw;
};

void tg_init(struct tg_builder *b)
{
	memset(b, 0, sizeof(*b));
}

void tg_destroy(struct tg_builder *b)
{
	free(b->bufs);
	free(b->events);
	free(b->ops);
	free(b->preamble);
	memset(b, 0, sizeof(*b));
}

void tg_fail(struct tg_builder *b, const char *fmt, ...)
{
	va_list ap;

	if (b->failed)
		return;
	b->failed = 1;
	va_start(ap, fmt);
	vsnprintf(b->err, sizeof(b->err), fmt, ap);
	va_end(ap);
}

uint64_t tg_mul(struct tg_builder *b, uint64_t x, uint64_t y)
{
	uint64_t r;

	if (__builtin_mul_overflow(x, y, &r) || r >= TG_SIZE_LIMIT) {
		tg_fail(b, "a size or flop count overflows 2^63 (parameters too large)");
		return 0;
	}
	return r;
}

uint64_t tg_add(struct tg_builder *b, uint64_t x, uint64_t y)
{
	uint64_t r;

	if (__builtin_add_overflow(x, y, &r) || r >= TG_SIZE_LIMIT) {
		tg_fail(b, "a size or flop count overflows 2^63 (parameters too large)");
		return 0;
	}
	return r;
}

void tg_preamble(struct tg_builder *b, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (b->failed)
		return;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		tg_fail(b, "out of memory");
		return;
	}
	free(b->preamble);
	b->preamble = s;
}

/* Grow *arr (of elements of size sz) to hold at least need elements. */
static int grow(struct tg_builder *b, void **arr, size_t *cap, size_t need, size_t sz)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 256;
	while (ncap < need)
		ncap *= 2;
	p = reallocarray(*arr, ncap, sz);
	if (!p) {
		tg_fail(b, "out of memory");
		return -1;
	}
	*arr = p;
	*cap = ncap;
	return 0;
}

uint32_t tg_buffer(struct tg_builder *b, uint64_t bytes, unsigned flags, const char *kind,
		   const char *labelfmt, ...)
{
	struct tg_buffer *buf;
	va_list ap;

	if (b->failed)
		return 0;
	if (bytes >= TG_SIZE_LIMIT) {
		tg_fail(b, "buffer of %llu bytes out of range", (unsigned long long)bytes);
		return 0;
	}
	if (b->nbufs >= UINT32_MAX - 1) {
		tg_fail(b, "too many buffers");
		return 0;
	}
	if (grow(b, (void **)&b->bufs, &b->capbufs, b->nbufs + 1, sizeof(*b->bufs)))
		return 0;
	buf = &b->bufs[b->nbufs++];
	memset(buf, 0, sizeof(*buf));
	buf->bytes = bytes;
	buf->flags = flags;
	buf->kind = kind;
	if (labelfmt) {
		va_start(ap, labelfmt);
		vsnprintf(buf->label, sizeof(buf->label), labelfmt, ap);
		va_end(ap);
	}
	return (uint32_t)b->nbufs; /* handles start at 1 */
}

void tg_list_clear(struct tg_list *l)
{
	l->n = 0;
}

void tg_list_add(struct tg_builder *b, struct tg_list *l, uint32_t h)
{
	if (l->n >= TG_MAX_OPS) {
		tg_fail(b, "more than %d operands in one list", TG_MAX_OPS);
		return;
	}
	l->id[l->n++] = h;
}

/* Check one list's handles against the buffers and earlier operands of the
 * same kernel, then append them. */
static int add_ops(struct tg_builder *b, const char *name, const struct tg_list *l, int reads,
		   size_t start)
{
	for (uint32_t i = 0; l && i < l->n; i++) {
		uint32_t h = l->id[i];
		struct tg_buffer *buf;

		if (h == 0 || h > b->nbufs) {
			tg_fail(b, "kernel %s names an unknown buffer handle %u", name, h);
			return -1;
		}
		for (size_t j = start; j < b->nops; j++) {
			if (b->ops[j] == h) {
				tg_fail(b, "kernel %s names buffer %u twice", name, h);
				return -1;
			}
		}
		buf = &b->bufs[h - 1];
		if (!buf->used && !!(buf->flags & TG_HOST) != reads) {
			tg_fail(b, "kernel %s: first use of %s buffer %s %s", name, buf->kind,
				buf->label, reads ? "reads data that starts nowhere" :
						    "overwrites data that starts on the host");
			return -1;
		}
		buf->used = 1;
		buf->last_use = b->nevents;
		b->ops[b->nops++] = h;
	}
	return 0;
}

void tg_kernel(struct tg_builder *b, const char *name, uint64_t flops, const struct tg_list *r,
	       const struct tg_list *w, const struct tg_list *rw)
{
	size_t n = (r ? r->n : 0) + (w ? w->n : 0) + (rw ? rw->n : 0);
	struct tg_event *e;
	size_t start;

	if (b->failed)
		return;
	if (b->nkernels >= TG_MAX_KERNELS) {
		tg_fail(b, "more than %u kernels", TG_MAX_KERNELS);
		return;
	}
	if (grow(b, (void **)&b->events, &b->capevents, b->nevents + 1, sizeof(*b->events)) ||
	    grow(b, (void **)&b->ops, &b->capops, b->nops + n, sizeof(*b->ops)))
		return;
	start = b->nops;
	if (add_ops(b, name, r, 1, start) || add_ops(b, name, w, 0, start) ||
	    add_ops(b, name, rw, 1, start))
		return;
	e = &b->events[b->nevents++];
	e->type = TG_EV_KERNEL;
	e->name = name;
	e->value = flops;
	e->first_op = start;
	e->nr = r ? r->n : 0;
	e->nw = w ? w->n : 0;
	e->nrw = rw ? rw->n : 0;
	b->nkernels++;
}

void tg_iteration(struct tg_builder *b, uint64_t n)
{
	struct tg_event *e;

	if (b->failed)
		return;
	if (grow(b, (void **)&b->events, &b->capevents, b->nevents + 1, sizeof(*b->events)))
		return;
	e = &b->events[b->nevents++];
	memset(e, 0, sizeof(*e));
	e->type = TG_EV_ITERATION;
	e->value = n;
}

static void write_list(FILE *out, const char *tag, const struct tg_builder *b, size_t from,
		       uint32_t n)
{
	fprintf(out, " %s=", tag);
	if (n == 0) {
		fputc('-', out);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		fprintf(out, "%s%llu", i ? "," : "",
			(unsigned long long)b->bufs[b->ops[from + i] - 1].trace_id);
}

int tg_write(struct tg_builder *b, FILE *out)
{
	uint64_t next_id = 1;

	if (b->failed)
		return -1;
	fputs("dao-trace 1\n", out);
	if (b->preamble)
		fprintf(out, "# %s\n", b->preamble);
	for (size_t i = 0; i < b->nevents; i++) {
		const struct tg_event *e = &b->events[i];
		size_t nops;

		if (e->type == TG_EV_ITERATION) {
			fprintf(out, "i %llu\n", (unsigned long long)e->value);
			continue;
		}
		nops = (size_t)e->nr + e->nw + e->nrw;
		for (size_t j = 0; j < nops; j++) {
			struct tg_buffer *buf = &b->bufs[b->ops[e->first_op + j] - 1];

			if (buf->trace_id)
				continue;
			buf->trace_id = next_id++;
			fprintf(out, "b %llu %llu %s%s%s\n", (unsigned long long)buf->trace_id,
				(unsigned long long)buf->bytes, buf->kind, buf->label[0] ? " " : "",
				buf->label);
		}
		fprintf(out, "k %s %llu", e->name, (unsigned long long)e->value);
		write_list(out, "r", b, e->first_op, e->nr);
		write_list(out, "w", b, e->first_op + e->nr, e->nw);
		write_list(out, "rw", b, e->first_op + e->nr + e->nw, e->nrw);
		fputc('\n', out);
		for (size_t j = 0; j < nops; j++) {
			const struct tg_buffer *buf = &b->bufs[b->ops[e->first_op + j] - 1];

			if (buf->last_use == i && !(buf->flags & TG_KEEP))
				fprintf(out, "f %llu\n", (unsigned long long)buf->trace_id);
		}
	}
	/* Ids are handed out again on a second write. */
	for (size_t i = 0; i < b->nbufs; i++)
		b->bufs[i].trace_id = 0;
	if (fflush(out) || ferror(out)) {
		snprintf(b->err, sizeof(b->err), "write failed: %s", strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}
