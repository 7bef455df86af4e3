/* SPDX-License-Identifier: MIT */
/*
 * trace_read.c - parse dao-trace v1 into struct dao_trace.
 *
 * The input is untrusted (files from other tools, the fuzzer): every length
 * is checked before use, numbers are parsed by hand with overflow checks,
 * and the work is linear in the input size so a hostile trace cannot make
 * the reader quadratic.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dao_trace.h"

static const char header[] = "dao-trace 1";

struct id_map {
	uint64_t *keys; /* 0 marks an empty slot: ids are never 0 */
	uint32_t *vals;
	size_t cap;     /* power of two */
	size_t used;
};

struct parser {
	struct dao_trace *t;
	size_t bufs_cap, events_cap, ops_cap;
	struct id_map ids;
	/* Per buffer: the line that freed it (0: live), and 1 + the index of
	 * the last kernel that named it (catches an id twice in one kernel). */
	struct buf_state {
		size_t freed_line;
		size_t stamp;
	} *state;
	size_t state_cap;
	size_t line;
	bool seen_record;
	size_t preamble_len, preamble_cap;
	char *err;
	size_t errlen;
};

struct token {
	const char *p;
	size_t n;
};

__attribute__((format(printf, 2, 3))) static dao_status fail(struct parser *ps, const char *fmt,
							      ...)
{
	va_list ap;
	int n;

	if (!ps->err || ps->errlen == 0)
		return DAO_ERR_FORMAT;
	n = snprintf(ps->err, ps->errlen, "line %zu: ", ps->line);
	if (n >= 0 && (size_t)n < ps->errlen) {
		va_start(ap, fmt);
		vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return DAO_ERR_FORMAT;
}

static dao_status oom(struct parser *ps)
{
	if (ps->err && ps->errlen)
		snprintf(ps->err, ps->errlen, "line %zu: out of memory", ps->line);
	return DAO_ERR_NOMEM;
}

/* Grow *arr (elements of size elem) so that it holds at least need. */
static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return false;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return false;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

static size_t hash_id(uint64_t id)
{
	/* splitmix64 finaliser: ids are often dense, spread them. */
	id ^= id >> 30;
	id *= UINT64_C(0xbf58476d1ce4e5b9);
	id ^= id >> 27;
	id *= UINT64_C(0x94d049bb133111eb);
	id ^= id >> 31;
	return (size_t)id;
}

static bool idmap_get(const struct id_map *m, uint64_t id, uint32_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	for (i = hash_id(id) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == id) {
			*val = m->vals[i];
			return true;
		}
	}
	return false;
}

static bool idmap_put(struct id_map *m, uint64_t id, uint32_t val)
{
	size_t i;

	if ((m->used + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		uint64_t *keys = calloc(ncap, sizeof(*keys));
		uint32_t *vals = calloc(ncap, sizeof(*vals));

		if (!keys || !vals) {
			free(keys);
			free(vals);
			return false;
		}
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->keys[j])
				continue;
			for (i = hash_id(m->keys[j]) & (ncap - 1); keys[i]; i = (i + 1) & (ncap - 1))
				;
			keys[i] = m->keys[j];
			vals[i] = m->vals[j];
		}
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = ncap;
	}
	for (i = hash_id(id) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = id;
	m->vals[i] = val;
	m->used++;
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Next whitespace-separated token of [*pos, end); a token starting with '#'
 * begins a comment that runs to the end of the line. */
static bool next_token(const char **pos, const char *end, struct token *tok)
{
	const char *p = *pos;

	while (p < end && is_blank(*p))
		p++;
	if (p == end || *p == '#') {
		*pos = end;
		return false;
	}
	tok->p = p;
	while (p < end && !is_blank(*p))
		p++;
	tok->n = (size_t)(p - tok->p);
	*pos = p;
	return true;
}

static bool tok_is(const struct token *tok, const char *s)
{
	size_t n = strlen(s);

	return tok->n == n && memcmp(tok->p, s, n) == 0;
}

/* Quote a token for an error message, shortened so messages stay readable. */
static const char *show(const struct token *tok, char *buf, size_t len)
{
	size_t n = tok->n < len - 4 ? tok->n : len - 4;

	memcpy(buf, tok->p, n);
	strcpy(buf + n, tok->n > n ? "..." : "");
	return buf;
}

static dao_status parse_u64(struct parser *ps, const char *p, size_t n, const char *what,
			    uint64_t *out)
{
	uint64_t v = 0;
	char shown[48];
	struct token tok = { p, n };

	if (n == 0)
		return fail(ps, "malformed %s: empty", what);
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)p[i] - '0';

		if (d > 9)
			return fail(ps, "malformed %s '%s': not a decimal integer", what,
				    show(&tok, shown, sizeof(shown)));
		if (v > (UINT64_MAX - d) / 10)
			return fail(ps, "%s '%s' out of range", what,
				    show(&tok, shown, sizeof(shown)));
		v = v * 10 + d;
	}
	*out = v;
	return DAO_OK;
}

static dao_status parse_id(struct parser *ps, const char *p, size_t n, uint64_t *id)
{
	dao_status st = parse_u64(ps, p, n, "id", id);

	if (st)
		return st;
	if (*id == 0 || *id >= DAO_TRACE_ID_LIMIT)
		return fail(ps, "id %llu out of range (1 <= id < 2^63)", (unsigned long long)*id);
	return DAO_OK;
}

/* Look up an id that a k or f record names: declared and not freed. */
static dao_status live_buffer(struct parser *ps, uint64_t id, uint32_t *idx)
{
	if (!idmap_get(&ps->ids, id, idx))
		return fail(ps, "buffer %llu was never declared", (unsigned long long)id);
	if (ps->state[*idx].freed_line)
		return fail(ps, "buffer %llu was freed on line %zu", (unsigned long long)id,
			    ps->state[*idx].freed_line);
	return DAO_OK;
}

static char *dup_token(const struct token *tok)
{
	char *s = malloc(tok->n + 1);

	if (s) {
		memcpy(s, tok->p, tok->n);
		s[tok->n] = '\0';
	}
	return s;
}

static dao_status no_more(struct parser *ps, const char **pos, const char *end)
{
	struct token extra;
	char shown[48];

	if (next_token(pos, end, &extra))
		return fail(ps, "unexpected field '%s'", show(&extra, shown, sizeof(shown)));
	return DAO_OK;
}

static dao_status parse_buffer(struct parser *ps, const char *pos, const char *end)
{
	struct dao_trace *t = ps->t;
	struct dao_trace_buffer *b;
	struct token tok, kind = { 0 }, label = { 0 };
	uint64_t id, bytes;
	uint32_t idx;
	dao_status st;

	if (!next_token(&pos, end, &tok))
		return fail(ps, "b: missing id");
	st = parse_id(ps, tok.p, tok.n, &id);
	if (st)
		return st;
	if (!next_token(&pos, end, &tok))
		return fail(ps, "b: missing size");
	st = parse_u64(ps, tok.p, tok.n, "size", &bytes);
	if (st)
		return st;
	if (bytes >= DAO_TRACE_ID_LIMIT)
		return fail(ps, "size %llu out of range (< 2^63)", (unsigned long long)bytes);
	if (next_token(&pos, end, &kind))
		next_token(&pos, end, &label);
	st = no_more(ps, &pos, end);
	if (st)
		return st;
	if (idmap_get(&ps->ids, id, &idx))
		return fail(ps, "buffer %llu declared twice (first on line %zu)",
			    (unsigned long long)id, t->bufs[idx].line);
	if (t->nbufs >= UINT32_MAX)
		return fail(ps, "too many buffers");
	if (!grow((void **)&t->bufs, &ps->bufs_cap, t->nbufs + 1, sizeof(*t->bufs)) ||
	    !grow((void **)&ps->state, &ps->state_cap, t->nbufs + 1, sizeof(*ps->state)))
		return oom(ps);
	b = &t->bufs[t->nbufs];
	memset(b, 0, sizeof(*b));
	b->id = id;
	b->bytes = bytes;
	b->line = ps->line;
	if ((kind.n && !(b->kind = dup_token(&kind))) ||
	    (label.n && !(b->label = dup_token(&label))))
		goto nomem;
	if (!idmap_put(&ps->ids, id, (uint32_t)t->nbufs))
		goto nomem;
	ps->state[t->nbufs].freed_line = 0;
	ps->state[t->nbufs].stamp = 0;
	t->nbufs++;
	return DAO_OK;
nomem:
	free(b->kind);
	free(b->label);
	return oom(ps);
}

static dao_status push_event(struct parser *ps, struct dao_trace_event *ev)
{
	struct dao_trace *t = ps->t;

	if (!grow((void **)&t->events, &ps->events_cap, t->nevents + 1, sizeof(*t->events)))
		return oom(ps);
	t->events[t->nevents++] = *ev;
	return DAO_OK;
}

/* One "r=..." field: the ids of list `mode`, appended to t->ops. */
static dao_status parse_list(struct parser *ps, const struct token *tok, const char *prefix,
			     uint32_t mode)
{
	struct dao_trace *t = ps->t;
	size_t plen = strlen(prefix);
	const char *p, *end = tok->p + tok->n;
	char shown[48];

	if (tok->n < plen || memcmp(tok->p, prefix, plen) != 0)
		return fail(ps, "k: expected '%s<ids>', got '%s'", prefix,
			    show(tok, shown, sizeof(shown)));
	p = tok->p + plen;
	if (end - p == 1 && *p == '-')
		return DAO_OK;
	if (p == end)
		return fail(ps, "k: empty list in '%s' (use '-' for none)",
			    show(tok, shown, sizeof(shown)));
	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;
		uint64_t id;
		uint32_t idx;
		dao_status st = parse_id(ps, p, (size_t)(stop - p), &id);

		if (st)
			return st;
		st = live_buffer(ps, id, &idx);
		if (st)
			return st;
		if (ps->state[idx].stamp == t->nkernels + 1)
			return fail(ps, "k: buffer %llu named twice in one kernel",
				    (unsigned long long)id);
		ps->state[idx].stamp = t->nkernels + 1;
		if (!grow((void **)&t->ops, &ps->ops_cap, t->nops + 1, sizeof(*t->ops)))
			return oom(ps);
		t->ops[t->nops].buf = idx;
		t->ops[t->nops].mode = mode;
		t->nops++;
		if (!comma)
			return DAO_OK;
		p = comma + 1;
	}
}

static dao_status parse_kernel(struct parser *ps, const char *pos, const char *end)
{
	struct dao_trace *t = ps->t;
	struct dao_trace_event ev = { .type = DAO_TRACE_KERNEL };
	struct token name, tok;
	size_t first = t->nops;
	dao_status st;
	static const char *const prefixes[] = { "r=", "w=", "rw=" };
	static const uint32_t modes[] = { DAO_R, DAO_W, DAO_RW };

	if (!next_token(&pos, end, &name))
		return fail(ps, "k: missing name");
	if (!next_token(&pos, end, &tok))
		return fail(ps, "k: missing flops");
	st = parse_u64(ps, tok.p, tok.n, "flops", &ev.u.kernel.flops);
	if (st)
		return st;
	for (int i = 0; i < 3; i++) {
		if (!next_token(&pos, end, &tok))
			return fail(ps, "k: missing field '%s<ids>'", prefixes[i]);
		st = parse_list(ps, &tok, prefixes[i], modes[i]);
		if (st)
			goto undo;
	}
	st = no_more(ps, &pos, end);
	if (st)
		goto undo;
	if (t->nops - first > UINT32_MAX) {
		st = fail(ps, "k: too many operands");
		goto undo;
	}
	ev.u.kernel.first_op = first;
	ev.u.kernel.nops = (uint32_t)(t->nops - first);
	ev.u.kernel.name = dup_token(&name);
	if (!ev.u.kernel.name) {
		st = oom(ps);
		goto undo;
	}
	st = push_event(ps, &ev);
	if (st) {
		free(ev.u.kernel.name);
		goto undo;
	}
	t->nkernels++;
	return DAO_OK;
undo:
	t->nops = first;
	return st;
}

static dao_status parse_free(struct parser *ps, const char *pos, const char *end)
{
	struct dao_trace_event ev = { .type = DAO_TRACE_FREE };
	struct token tok;
	uint64_t id;
	uint32_t idx;
	dao_status st;

	if (!next_token(&pos, end, &tok))
		return fail(ps, "f: missing id");
	st = parse_id(ps, tok.p, tok.n, &id);
	if (st)
		return st;
	st = no_more(ps, &pos, end);
	if (st)
		return st;
	st = live_buffer(ps, id, &idx);
	if (st)
		return st;
	ev.u.free_buf = idx;
	st = push_event(ps, &ev);
	if (st)
		return st;
	ps->state[idx].freed_line = ps->line;
	return DAO_OK;
}

static dao_status parse_iteration(struct parser *ps, const char *pos, const char *end)
{
	struct dao_trace_event ev = { .type = DAO_TRACE_ITERATION };
	struct token tok;
	dao_status st;

	if (!next_token(&pos, end, &tok))
		return fail(ps, "i: missing iteration number");
	st = parse_u64(ps, tok.p, tok.n, "iteration number", &ev.u.iteration);
	if (st)
		return st;
	st = no_more(ps, &pos, end);
	if (st)
		return st;
	return push_event(ps, &ev);
}

/* Keep the text of the comments before the first record: producers put
 * what the trace is there (model, dtype), which a device model may need. */
static dao_status keep_preamble(struct parser *ps, const char *p, const char *end)
{
	size_t n;

	while (p < end && is_blank(*p))
		p++;
	if (p == end || *p != '#')
		return DAO_OK;
	p++;
	while (p < end && is_blank(*p))
		p++;
	n = (size_t)(end - p);
	if (ps->preamble_len + n + 2 > (size_t)4 * DAO_TRACE_MAX_LINE)
		return DAO_OK; /* informational only: keep a bounded amount */
	if (!grow((void **)&ps->t->preamble, &ps->preamble_cap, ps->preamble_len + n + 2, 1))
		return oom(ps);
	if (ps->preamble_len)
		ps->t->preamble[ps->preamble_len++] = '\n';
	memcpy(ps->t->preamble + ps->preamble_len, p, n);
	ps->preamble_len += n;
	ps->t->preamble[ps->preamble_len] = '\0';
	return DAO_OK;
}

static dao_status parse_line(struct parser *ps, const char *p, const char *end)
{
	struct token type;
	char shown[48];

	for (const char *c = p; c < end; c++) {
		unsigned char u = (unsigned char)*c;

		if ((u < 0x20 && u != '\t') || u == 0x7f)
			return fail(ps, "control character 0x%02x at column %zu", u,
				    (size_t)(c - p) + 1);
	}
	if (!ps->seen_record) {
		dao_status st = keep_preamble(ps, p, end);

		if (st)
			return st;
	}
	if (!next_token(&p, end, &type))
		return DAO_OK; /* blank line or comment */
	ps->seen_record = true;
	if (tok_is(&type, "k"))
		return parse_kernel(ps, p, end);
	if (tok_is(&type, "b"))
		return parse_buffer(ps, p, end);
	if (tok_is(&type, "f"))
		return parse_free(ps, p, end);
	if (tok_is(&type, "i"))
		return parse_iteration(ps, p, end);
	return fail(ps, "unknown record type '%s'", show(&type, shown, sizeof(shown)));
}

void dao_trace_free(struct dao_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nbufs; i++) {
		free(t->bufs[i].kind);
		free(t->bufs[i].label);
	}
	for (size_t i = 0; i < t->nevents; i++)
		if (t->events[i].type == DAO_TRACE_KERNEL)
			free(t->events[i].u.kernel.name);
	free(t->bufs);
	free(t->events);
	free(t->ops);
	free(t->preamble);
	free(t);
}

dao_status dao_trace_read_mem(const char *data, size_t len, struct dao_trace **out, char *err,
			      size_t errlen)
{
	struct parser ps = { .err = err, .errlen = errlen, .line = 1 };
	const char *p = data, *end = data + len;
	dao_status st = DAO_OK;

	if (err && errlen)
		err[0] = '\0';
	if (!out || (!data && len))
		return DAO_ERR_NULL;
	ps.t = calloc(1, sizeof(*ps.t));
	if (!ps.t)
		return oom(&ps);
	ps.t->preamble = calloc(1, 1);
	if (!ps.t->preamble) {
		st = oom(&ps);
		goto out;
	}
	ps.preamble_cap = 1;
	for (; p < end || ps.line == 1; ps.line++) {
		const char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		const char *eol = nl ? nl : end;

		/* Tolerate CRLF line ends: the \r belongs to the break. */
		const char *stop = (eol > p && eol[-1] == '\r') ? eol - 1 : eol;

		if ((size_t)(stop - p) > DAO_TRACE_MAX_LINE) {
			st = fail(&ps, "line longer than 1 MiB");
			goto out;
		}
		if (ps.line == 1) {
			if ((size_t)(stop - p) != sizeof(header) - 1 ||
			    memcmp(p, header, sizeof(header) - 1) != 0) {
				st = fail(&ps, p == end ? "empty input: missing header '%s'"
							: "missing or wrong header (expected '%s')",
					  header);
				goto out;
			}
		} else {
			st = parse_line(&ps, p, stop);
			if (st)
				goto out;
		}
		p = nl ? nl + 1 : end;
	}
out:
	free(ps.ids.keys);
	free(ps.ids.vals);
	free(ps.state);
	if (st) {
		dao_trace_free(ps.t);
		return st;
	}
	*out = ps.t;
	return DAO_OK;
}

dao_status dao_trace_read_file(const char *path, struct dao_trace **out, char *err,
			       size_t errlen)
{
	FILE *f;
	char *data = NULL;
	size_t len = 0, cap = 0;
	dao_status st;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !out)
		return DAO_ERR_NULL;
	f = fopen(path, "rb");
	if (!f) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return DAO_ERR_IO;
	}
	for (;;) {
		size_t n;

		if (!grow((void **)&data, &cap, len + 65536, 1)) {
			fclose(f);
			free(data);
			if (err && errlen)
				snprintf(err, errlen, "%s: out of memory", path);
			return DAO_ERR_NOMEM;
		}
		n = fread(data + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		if (err && errlen)
			snprintf(err, errlen, "%s: read error", path);
		fclose(f);
		free(data);
		return DAO_ERR_IO;
	}
	fclose(f);
	st = dao_trace_read_mem(data, len, out, err, errlen);
	free(data);
	return st;
}
