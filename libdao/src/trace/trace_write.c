/* SPDX-License-Identifier: MIT */
/*
 * trace_write.c - write dao-trace v1 (DAO_TRACE=path).
 *
 * Whatever the job passes as names and labels, the output must parse: words
 * are sanitised here rather than trusted. Errors are remembered and reported
 * once, at close, because the job must not fail for its trace.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "dao_trace.h"
#include "trace/trace_writer.h"

/* Names longer than this are cut: informational, and lines stay short. */
#define WORD_MAX 255

struct dao_trace_writer {
	pthread_mutex_t lock; /* the core may call from the job and executor threads */
	FILE *f;
	bool io_failed;
	bool dropped; /* a record named an id out of range */
};

static bool id_ok(uint64_t id)
{
	return id != 0 && id < DAO_TRACE_ID_LIMIT;
}

/* Write s as one word: no blanks, no control bytes, no leading '#' (it would
 * start a comment), never empty. */
static void put_word(FILE *f, const char *s, const char *fallback)
{
	char buf[WORD_MAX + 1];
	size_t n = 0;

	if (!s || !*s)
		s = fallback;
	for (; s[n] && n < WORD_MAX; n++) {
		unsigned char c = (unsigned char)s[n];

		buf[n] = (c <= 0x20 || c == 0x7f || (n == 0 && c == '#')) ? '_' : (char)c;
	}
	buf[n] = '\0';
	fputs(buf, f);
}

dao_status dao_trace_writer_open(const char *path, struct dao_trace_writer **out)
{
	struct dao_trace_writer *w;

	if (!path || !out)
		return DAO_ERR_NULL;
	w = fault_calloc(1, sizeof(*w));
	if (!w)
		return DAO_ERR_NOMEM;
	w->f = fopen(path, "w");
	if (!w->f) {
		free(w);
		return DAO_ERR_IO;
	}
	pthread_mutex_init(&w->lock, NULL);
	if (fputs("dao-trace 1\n", w->f) == EOF)
		w->io_failed = true;
	*out = w;
	return DAO_OK;
}

void dao_trace_writer_buffer(struct dao_trace_writer *w, uint64_t id, uint64_t bytes,
			     const char *kind, const char *label)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	if (!id_ok(id) || bytes >= DAO_TRACE_ID_LIMIT) {
		w->dropped = true;
	} else {
		fprintf(w->f, "b %llu %llu", (unsigned long long)id, (unsigned long long)bytes);
		if ((kind && *kind) || (label && *label)) {
			fputc(' ', w->f);
			put_word(w->f, kind, "-");
		}
		if (label && *label) {
			fputc(' ', w->f);
			put_word(w->f, label, "-");
		}
		if (fputc('\n', w->f) == EOF)
			w->io_failed = true;
	}
	pthread_mutex_unlock(&w->lock);
}

static void put_list(FILE *f, const char *prefix, const uint64_t *ids, size_t n)
{
	fputs(prefix, f);
	if (n == 0) {
		fputc('-', f);
		return;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(f, i ? ",%llu" : "%llu", (unsigned long long)ids[i]);
}

static bool list_ok(const uint64_t *ids, size_t n)
{
	if (n && !ids)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!id_ok(ids[i]))
			return false;
	return true;
}

/* A kernel's line after prefix ("" for a record, "# host " for a comment). */
static void kernel_line(struct dao_trace_writer *w, const char *prefix, const char *name,
			uint64_t flops, const uint64_t *r, size_t nr, const uint64_t *wr, size_t nw,
			const uint64_t *rw, size_t nrw)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	if (!list_ok(r, nr) || !list_ok(wr, nw) || !list_ok(rw, nrw)) {
		w->dropped = true;
	} else {
		fputs(prefix, w->f);
		fputs("k ", w->f);
		put_word(w->f, name, "kernel");
		fprintf(w->f, " %llu ", (unsigned long long)flops);
		put_list(w->f, "r=", r, nr);
		put_list(w->f, " w=", wr, nw);
		put_list(w->f, " rw=", rw, nrw);
		if (fputc('\n', w->f) == EOF)
			w->io_failed = true;
	}
	pthread_mutex_unlock(&w->lock);
}

void dao_trace_writer_kernel(struct dao_trace_writer *w, const char *name, uint64_t flops,
			     const uint64_t *r, size_t nr, const uint64_t *wr, size_t nw,
			     const uint64_t *rw, size_t nrw)
{
	kernel_line(w, "", name, flops, r, nr, wr, nw, rw, nrw);
}

void dao_trace_writer_host_kernel(struct dao_trace_writer *w, const char *name, uint64_t flops,
				  const uint64_t *r, size_t nr, const uint64_t *wr, size_t nw,
				  const uint64_t *rw, size_t nrw)
{
	kernel_line(w, "# host ", name, flops, r, nr, wr, nw, rw, nrw);
}

void dao_trace_writer_free(struct dao_trace_writer *w, uint64_t id)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	if (!id_ok(id))
		w->dropped = true;
	else if (fprintf(w->f, "f %llu\n", (unsigned long long)id) < 0)
		w->io_failed = true;
	pthread_mutex_unlock(&w->lock);
}

void dao_trace_writer_iteration(struct dao_trace_writer *w, uint64_t n)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	if (fprintf(w->f, "i %llu\n", (unsigned long long)n) < 0)
		w->io_failed = true;
	pthread_mutex_unlock(&w->lock);
}

dao_status dao_trace_writer_close(struct dao_trace_writer *w)
{
	dao_status st = DAO_OK;

	if (!w)
		return DAO_ERR_NULL;
	/* ferror catches a failed write whose return value was not checked
	 * (those inside fprintf sequences); fclose catches the final flush. */
	if (ferror(w->f))
		w->io_failed = true;
	if (fclose(w->f) != 0)
		w->io_failed = true;
	if (w->io_failed)
		st = DAO_ERR_IO;
	else if (w->dropped)
		st = DAO_ERR_INVALID;
	pthread_mutex_destroy(&w->lock);
	free(w);
	return st;
}
