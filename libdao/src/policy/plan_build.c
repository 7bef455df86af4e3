/* SPDX-License-Identifier: MIT */
/*
 * plan_build.c - the recorder of one iteration's accesses and the plan
 * built from them (plan_build.h). The build is linear in the iteration's
 * uses (a map from ids to buffers, then each buffer's uses in order).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy/plan_build.h"

static bool grow(void **p, size_t *cap, size_t want, size_t size)
{
	size_t ncap = *cap ? *cap : 256;
	void *q;

	if (want <= *cap)
		return true;
	while (ncap < want)
		ncap *= 2;
	q = realloc(*p, ncap * size);
	if (!q)
		return false;
	*p = q;
	*cap = ncap;
	return true;
}

dao_status plan_record_add(struct plan_record *r, const struct policy_op *op, size_t max_uses)
{
	if (r->nuses + op->nuses > max_uses)
		return DAO_ERR_LIMIT;
	if (!grow((void **)&r->ops, &r->capops, r->nops + 1, sizeof(*r->ops)) ||
	    !grow((void **)&r->uses, &r->capuses, r->nuses + op->nuses, sizeof(*r->uses)))
		return DAO_ERR_NOMEM;
	r->ops[r->nops++] = (struct plan_op){ .seq = op->seq,
					      .first = (uint32_t)r->nuses,
					      .n = op->nuses,
					      .kind = op->kind };
	if (op->nuses) /* an op without uses may pass NULL */
		memcpy(r->uses + r->nuses, op->uses, op->nuses * sizeof(*op->uses));
	r->nuses += op->nuses;
	return DAO_OK;
}

void plan_record_drop_front(struct plan_record *r, size_t from)
{
	size_t ufrom = from < r->nops ? r->ops[from].first : r->nuses;

	if (from >= r->nops) {
		r->nops = r->nuses = 0;
		return;
	}
	memmove(r->ops, r->ops + from, (r->nops - from) * sizeof(*r->ops));
	r->nops -= from;
	if (r->nuses > ufrom)
		memmove(r->uses, r->uses + ufrom, (r->nuses - ufrom) * sizeof(*r->uses));
	r->nuses -= ufrom;
	for (size_t i = 0; i < r->nops; i++)
		r->ops[i].first -= (uint32_t)ufrom;
}

void plan_record_free(struct plan_record *r)
{
	free(r->ops);
	free(r->uses);
	memset(r, 0, sizeof(*r));
}

dao_status plan_map_init(struct plan_map *m, size_t entries)
{
	size_t cap = 16;

	while (cap < 2 * entries)
		cap *= 2;
	m->cap = cap;
	m->ids = malloc(cap * sizeof(*m->ids));
	m->vals = malloc(cap * sizeof(*m->vals));
	m->used = calloc(cap, 1);
	if (!m->ids || !m->vals || !m->used) {
		plan_map_free(m);
		return DAO_ERR_NOMEM;
	}
	return DAO_OK;
}

void plan_map_clear(struct plan_map *m)
{
	if (m->used)
		memset(m->used, 0, m->cap);
}

void plan_map_free(struct plan_map *m)
{
	free(m->ids);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static size_t slot_of(const struct plan_map *m, uint64_t id)
{
	uint64_t h = id * UINT64_C(0x9E3779B97F4A7C15);

	return (size_t)(h >> 17) & (m->cap - 1);
}

bool plan_map_put(struct plan_map *m, uint64_t id, uint32_t val_if_new, uint32_t *val)
{
	size_t i = slot_of(m, id);

	while (m->used[i] && m->ids[i] != id)
		i = (i + 1) & (m->cap - 1);
	if (!m->used[i]) {
		m->used[i] = 1;
		m->ids[i] = id;
		m->vals[i] = val_if_new;
		*val = val_if_new;
		return true;
	}
	*val = m->vals[i];
	return false;
}

bool plan_map_get(const struct plan_map *m, uint64_t id, uint32_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	i = slot_of(m, id);
	while (m->used[i]) {
		if (m->ids[i] == id) {
			*val = m->vals[i];
			return true;
		}
		i = (i + 1) & (m->cap - 1);
	}
	return false;
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	free(p->ops);
	free(p->canon);
	free(p->bytes);
	free(p->mode);
	free(p->buf_id);
	free(p->persistent);
	free(p->use_start);
	free(p->use_off);
	free(p->evicted);
	plan_map_free(&p->persistent_ids);
	free(p);
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

dao_status plan_build(const struct plan_record *r, size_t nops, uint64_t start, uint64_t len,
		      uint64_t max_id_before, double cpu_limit_s, struct plan **out)
{
	double t0 = thread_cpu_s();
	size_t nuses = nops ? r->ops[nops - 1].first + r->ops[nops - 1].n : 0;
	struct plan *p = calloc(1, sizeof(*p));
	struct plan_map ids = { 0 };
	uint32_t *fill = NULL;

	if (!p)
		return DAO_ERR_NOMEM;
	p->len = len;
	p->nops = nops;
	p->nuses = nuses;
	p->ops = malloc((nops ? nops : 1) * sizeof(*p->ops));
	p->canon = malloc((nuses ? nuses : 1) * sizeof(*p->canon));
	p->bytes = malloc((nuses ? nuses : 1) * sizeof(*p->bytes));
	p->mode = malloc(nuses ? nuses : 1);
	p->buf_id = malloc((nuses ? nuses : 1) * sizeof(*p->buf_id));
	p->persistent = malloc(nuses ? nuses : 1);
	p->use_off = malloc((nuses ? nuses : 1) * sizeof(*p->use_off));
	if (!p->ops || !p->canon || !p->bytes || !p->mode || !p->buf_id || !p->persistent ||
	    !p->use_off || plan_map_init(&ids, nuses))
		goto nomem;

	/* Buffers in the order the iteration first names them. */
	for (size_t i = 0; i < nops; i++) {
		const struct plan_op *o = &r->ops[i];

		p->ops[i] = *o;
		p->ops[i].seq = o->seq - start;
		for (uint32_t j = o->first; j < o->first + o->n; j++) {
			const struct policy_use *u = &r->uses[j];
			uint32_t b;

			if (plan_map_put(&ids, u->id, (uint32_t)p->nbufs, &b)) {
				p->buf_id[b] = u->id;
				p->persistent[b] = u->id <= max_id_before;
				p->nbufs++;
			}
			p->canon[j] = b;
			p->bytes[j] = u->bytes;
			p->mode[j] = (uint8_t)u->mode;
		}
	}
	if (cpu_limit_s > 0 && thread_cpu_s() - t0 > cpu_limit_s)
		goto late;

	/* Each buffer's uses, ascending: counted, then placed in op order. */
	p->use_start = calloc(p->nbufs + 1, sizeof(*p->use_start));
	fill = calloc(p->nbufs + 1, sizeof(*fill));
	if (!p->use_start || !fill || plan_map_init(&p->persistent_ids, p->nbufs))
		goto nomem;
	for (size_t j = 0; j < nuses; j++)
		p->use_start[p->canon[j] + 1]++;
	for (size_t b = 0; b < p->nbufs; b++)
		p->use_start[b + 1] += p->use_start[b];
	memcpy(fill, p->use_start, (p->nbufs + 1) * sizeof(*fill));
	for (size_t i = 0; i < nops; i++)
		for (uint32_t j = p->ops[i].first; j < p->ops[i].first + p->ops[i].n; j++)
			p->use_off[fill[p->canon[j]]++] = p->ops[i].seq;
	for (size_t b = 0; b < p->nbufs; b++) {
		uint32_t v;

		if (p->persistent[b])
			plan_map_put(&p->persistent_ids, p->buf_id[b], (uint32_t)b, &v);
	}
	if (cpu_limit_s > 0 && thread_cpu_s() - t0 > cpu_limit_s)
		goto late;
	free(fill);
	plan_map_free(&ids);
	*out = p;
	return DAO_OK;
late:
	free(fill);
	plan_map_free(&ids);
	plan_free(p);
	return DAO_ERR_RANGE;
nomem:
	free(fill);
	plan_map_free(&ids);
	plan_free(p);
	return DAO_ERR_NOMEM;
}

uint32_t plan_use_after(const struct plan *p, uint32_t b, uint64_t after)
{
	uint32_t lo = p->use_start[b], hi = p->use_start[b + 1];

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->use_off[mid] <= after)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t plan_next_use(const struct plan *p, uint32_t b, uint64_t after)
{
	uint32_t k = plan_use_after(p, b, after);

	return k < p->use_start[b + 1] ? p->use_off[k] : UINT64_MAX;
}
