/* SPDX-License-Identifier: MIT */
/*
 * sim.c - a modeled device on a virtual clock (dao_sim.h).
 *
 * Nothing runs and nothing is stored: each submission is given a start and
 * an end time at once, from its engine's free time and the end times of the
 * operations its fence names. The executor and policy above are the real
 * ones, so what daosim reports is what libdao decides.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "dao_sim.h"

_Static_assert((int)DAO_SIM_ENGINE_COMPUTE == (int)DAO_ENGINE_COMPUTE &&
		       (int)DAO_SIM_ENGINE_H2D == (int)DAO_ENGINE_H2D &&
		       (int)DAO_SIM_ENGINE_D2H == (int)DAO_ENGINE_D2H,
	       "dao_sim.h numbers spans' engines as backend.h does");

struct engine_log {
	uint64_t *end_ns; /* end_ns[s - 1]: end time of submission s */
	size_t n, cap;
	uint64_t free_ns; /* when the last submission ends */
	uint64_t busy_ns;
};

struct sim_backend {
	struct dao_backend be; /* first: the executor sees only this */
	struct dao_sim_model m;
	struct engine_log eng[DAO_ENGINES];
	uint64_t last_stall_ns;
	uint64_t stall_ns;
	bool record;
	bool nomem; /* a log could not grow: times after it are unreliable */
	struct dao_sim_span *spans;
	size_t nspans, spans_cap;
};

static struct sim_backend *to_sim(struct dao_backend *be)
{
	return (struct sim_backend *)be;
}

static const struct dao_sim_model presets[] = {
	/* H100 PCIe: Gen5 x16 at ~50 GB/s usable each way; 100 Tflop/s is a
	 * sustained mixed-precision rate (the reference table's model). */
	{ .name = "h100",
	  .h2d_bytes_per_s = 50e9,
	  .d2h_bytes_per_s = 50e9,
	  .flops_per_s = 100e12,
	  .mem_bytes_per_s = 3000e9,
	  .launch_ns = 0,
	  .memory_bytes = UINT64_C(80) << 30 },
	/* A100 40 GB PCIe: Gen4 x16 at ~25 GB/s usable each way; 40 Tflop/s
	 * sustained, the same fraction (~26%) of its TF32 tensor peak (156)
	 * as the h100 preset's 100 is of H100 PCIe's (378). */
	{ .name = "a100",
	  .h2d_bytes_per_s = 25e9,
	  .d2h_bytes_per_s = 25e9,
	  .flops_per_s = 40e12,
	  .mem_bytes_per_s = 1555e9,
	  .launch_ns = 0,
	  .memory_bytes = UINT64_C(40) << 30 },
};

dao_status dao_sim_model_preset(const char *name, struct dao_sim_model *out)
{
	if (!name || !out)
		return DAO_ERR_NULL;
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		if (strcmp(name, presets[i].name) == 0) {
			*out = presets[i];
			return DAO_OK;
		}
	}
	return DAO_ERR_INVALID;
}

static bool model_valid(const struct dao_sim_model *m)
{
	return m->h2d_bytes_per_s > 0 && m->d2h_bytes_per_s > 0 && m->flops_per_s > 0 &&
	       m->mem_bytes_per_s > 0 && isfinite(m->h2d_bytes_per_s) &&
	       isfinite(m->d2h_bytes_per_s) && isfinite(m->flops_per_s) &&
	       isfinite(m->mem_bytes_per_s) && m->memory_bytes > 0;
}

/* A positive finite decimal number; the whole token must parse. */
static bool parse_positive(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v <= 0)
		return false;
	*out = v;
	return true;
}

static dao_status model_line(char *line, struct dao_sim_model *m, unsigned *seen, char *why,
			     size_t whylen)
{
	static const char *const keys[] = { "name",     "h2d_gbps",  "d2h_gbps",  "tflops",
					    "mem_gbps", "launch_ns", "memory_gib", "contiguous" };
	char *save, *key, *val, *extra;
	double v = 0;
	unsigned k;

	key = strtok_r(line, " \t", &save);
	if (!key)
		return DAO_OK;
	val = strtok_r(NULL, " \t", &save);
	extra = val ? strtok_r(NULL, " \t", &save) : NULL;
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (strcmp(key, keys[k]) == 0)
			break;
	if (k == sizeof(keys) / sizeof(keys[0])) {
		snprintf(why, whylen, "unknown key '%.40s'", key);
		return DAO_ERR_FORMAT;
	}
	if (!val || extra) {
		snprintf(why, whylen, "'%s' needs exactly one value", key);
		return DAO_ERR_FORMAT;
	}
	if (*seen & (1u << k)) {
		snprintf(why, whylen, "'%s' given twice", key);
		return DAO_ERR_FORMAT;
	}
	*seen |= 1u << k;
	if (k == 0) {
		if (strlen(val) >= sizeof(m->name)) {
			snprintf(why, whylen, "name longer than %zu bytes", sizeof(m->name) - 1);
			return DAO_ERR_FORMAT;
		}
		strcpy(m->name, val);
		return DAO_OK;
	}
	if (k == 7) {
		if (strcmp(val, "0") && strcmp(val, "1")) {
			snprintf(why, whylen, "contiguous must be 0 or 1, not '%.40s'", val);
			return DAO_ERR_FORMAT;
		}
		m->contiguous = val[0] == '1';
		return DAO_OK;
	}
	if (k == 5) {
		/* launch cost may be zero; others must be positive */
		if (strcmp(val, "0") == 0) {
			m->launch_ns = 0;
			return DAO_OK;
		}
	}
	if (!parse_positive(val, &v)) {
		snprintf(why, whylen, "'%s': '%.40s' is not a positive number", key, val);
		return DAO_ERR_FORMAT;
	}
	switch (k) {
	case 1: m->h2d_bytes_per_s = v * 1e9; break;
	case 2: m->d2h_bytes_per_s = v * 1e9; break;
	case 3: m->flops_per_s = v * 1e12; break;
	case 4: m->mem_bytes_per_s = v * 1e9; break;
	case 5:
		if (v > 1e15) {
			snprintf(why, whylen, "launch_ns %.40s out of range", val);
			return DAO_ERR_FORMAT;
		}
		m->launch_ns = (uint64_t)llround(v);
		break;
	default:
		if (v * 1073741824.0 >= 1.8e19) {
			snprintf(why, whylen, "memory_gib %.40s out of range", val);
			return DAO_ERR_FORMAT;
		}
		m->memory_bytes = (uint64_t)llround(v * 1073741824.0);
		break;
	}
	return DAO_OK;
}

dao_status dao_sim_model_load(const char *path, struct dao_sim_model *out, char *err,
			      size_t errlen)
{
	/* Required keys: all but launch_ns and contiguous (0 when absent). */
	const unsigned required = 0x7f & ~(1u << 5);
	struct dao_sim_model m = { 0 };
	char line[512], why[160];
	unsigned seen = 0;
	size_t lineno = 0;
	FILE *f;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !out)
		return DAO_ERR_NULL;
	f = fopen(path, "r");
	if (!f) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return DAO_ERR_IO;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		char *hash;

		lineno++;
		if (n == sizeof(line) - 1 && line[n - 1] != '\n' && !feof(f)) {
			snprintf(why, sizeof(why), "line too long");
			goto bad;
		}
		line[strcspn(line, "\r\n")] = '\0';
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		if (model_line(line, &m, &seen, why, sizeof(why)))
			goto bad;
	}
	fclose(f);
	if ((seen & required) != required) {
		if (err && errlen)
			snprintf(err, errlen,
				 "%s: missing keys (need name, h2d_gbps, d2h_gbps, tflops, mem_gbps, memory_gib)",
				 path);
		return DAO_ERR_FORMAT;
	}
	if (!model_valid(&m)) {
		if (err && errlen)
			snprintf(err, errlen, "%s: invalid model", path);
		return DAO_ERR_FORMAT;
	}
	*out = m;
	return DAO_OK;
bad:
	fclose(f);
	if (err && errlen)
		snprintf(err, errlen, "%s: line %zu: %s", path, lineno, why);
	return DAO_ERR_FORMAT;
}

/* End time of what fence f names; 0 when it names nothing. */
static uint64_t fence_end(const struct sim_backend *s, const dao_fence *f, int only_engine)
{
	uint64_t t = 0;

	if (!f)
		return 0;
	for (int e = 0; e < DAO_ENGINES; e++) {
		uint64_t seq = f->seq[e];

		if (only_engine >= 0 && e != only_engine)
			continue;
		if (seq == 0)
			continue;
		/* A fence past the last submission is an executor bug; treat it
		 * as the engine's end rather than read out of bounds. */
		if (seq > s->eng[e].n)
			seq = s->eng[e].n;
		if (seq && s->eng[e].end_ns[seq - 1] > t)
			t = s->eng[e].end_ns[seq - 1];
	}
	return t;
}

static uint64_t duration_ns(double amount, double per_s)
{
	double ns = ceil(amount * 1e9 / per_s);

	return ns >= 1.8e19 ? UINT64_MAX / 4 : (uint64_t)ns;
}

/* Place one operation on engine e; returns its sequence number. */
static uint64_t schedule(struct sim_backend *s, enum dao_engine e, uint64_t start, uint64_t dur,
			 uint64_t bytes, uint64_t resident)
{
	struct engine_log *l = &s->eng[e];

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 1024;
		uint64_t *p = realloc(l->end_ns, ncap * sizeof(*p));

		if (!p) {
			/* Keep the sequence valid by reusing the last slot. */
			s->nomem = true;
			if (l->n)
				l->end_ns[l->n - 1] = start + dur;
			l->free_ns = start + dur;
			return l->n;
		}
		l->end_ns = p;
		l->cap = ncap;
	}
	l->end_ns[l->n++] = start + dur;
	l->free_ns = start + dur;
	l->busy_ns += dur;
	if (s->record) {
		if (s->nspans == s->spans_cap) {
			size_t ncap = s->spans_cap ? s->spans_cap * 2 : 1024;
			struct dao_sim_span *p = realloc(s->spans, ncap * sizeof(*p));

			if (!p) {
				s->record = false;
				s->nomem = true;
				return l->n;
			}
			s->spans = p;
			s->spans_cap = ncap;
		}
		s->spans[s->nspans++] = (struct dao_sim_span){
			.start_ns = start,
			.end_ns = start + dur,
			.bytes = bytes,
			.resident_bytes = resident,
			.engine = (uint8_t)e,
		};
	}
	return l->n;
}

static void *sim_kernel_ptr(struct dao_backend *be, void *host, uint64_t dev_off,
			    uint64_t view_off)
{
	return NULL;
}

static dao_status sim_host_alloc(struct dao_backend *be, uint64_t bytes, void **ptr,
				 uint64_t *pinned)
{
	*pinned = 0;
	*ptr = NULL;
	return DAO_OK;
}

static void sim_host_free(struct dao_backend *be, void *ptr, uint64_t bytes, uint64_t pinned)
{
}

static uint64_t sim_copy(struct dao_backend *be, enum dao_engine e, uint64_t dev_off, void *host,
			 uint64_t len, const dao_fence *after, enum dao_move_why why)
{
	struct sim_backend *s = to_sim(be);
	uint64_t start, ready;
	double bw;

	if (e != DAO_ENGINE_H2D && e != DAO_ENGINE_D2H)
		e = DAO_ENGINE_H2D; /* an executor bug; keep the timeline sane */
	bw = e == DAO_ENGINE_D2H ? s->m.d2h_bytes_per_s : s->m.h2d_bytes_per_s;
	start = s->eng[e].free_ns;
	ready = fence_end(s, after, -1);
	if (ready > start)
		start = ready;
	return schedule(s, e, start, duration_ns((double)len, bw), len, 0);
}

static dao_status sim_kernel(struct dao_backend *be, const struct dao_kernel_run *k,
			     const dao_fence *after, uint64_t *seq)
{
	struct sim_backend *s = to_sim(be);
	uint64_t compute_ready, start, dur, t_flops, t_mem;

	/* What the compute engine would start at without copies to wait for. */
	compute_ready = s->eng[DAO_ENGINE_COMPUTE].free_ns;
	if (fence_end(s, after, DAO_ENGINE_COMPUTE) > compute_ready)
		compute_ready = fence_end(s, after, DAO_ENGINE_COMPUTE);
	start = compute_ready;
	if (fence_end(s, after, -1) > start)
		start = fence_end(s, after, -1);
	s->last_stall_ns = start - compute_ready;
	s->stall_ns += s->last_stall_ns;
	t_flops = duration_ns((double)k->flops, s->m.flops_per_s);
	t_mem = duration_ns((double)k->operand_bytes, s->m.mem_bytes_per_s);
	dur = (t_flops > t_mem ? t_flops : t_mem) + s->m.launch_ns;
	*seq = schedule(s, DAO_ENGINE_COMPUTE, start, dur, k->operand_bytes, k->resident_bytes);
	return DAO_OK;
}

static dao_status sim_wait(struct dao_backend *be, const dao_fence *f)
{
	return DAO_OK;
}

static uint64_t sim_last_stall_ns(struct dao_backend *be)
{
	return to_sim(be)->last_stall_ns;
}

static void sim_destroy(struct dao_backend *be)
{
	struct sim_backend *s = to_sim(be);

	if (!s)
		return;
	for (int e = 0; e < DAO_ENGINES; e++)
		free(s->eng[e].end_ns);
	free(s->spans);
	free(s);
}

static const struct dao_backend_ops sim_ops = {
	.name = "sim",
	.kernel_ptr = sim_kernel_ptr,
	.host_alloc = sim_host_alloc,
	.host_free = sim_host_free,
	.copy = sim_copy,
	.kernel = sim_kernel,
	.wait = sim_wait,
	.last_stall_ns = sim_last_stall_ns,
	.destroy = sim_destroy,
	DAO_SEPARATE_MEMORY_OPS,
};

dao_status dao_backend_sim_create(const struct dao_sim_model *m, uint64_t budget,
				  int record_spans, struct dao_backend **out)
{
	struct sim_backend *s;

	if (!m || !out)
		return DAO_ERR_NULL;
	if (!model_valid(m) || budget == 0)
		return DAO_ERR_INVALID;
	s = calloc(1, sizeof(*s));
	if (!s)
		return DAO_ERR_NOMEM;
	s->m = *m;
	s->record = record_spans != 0;
	s->be.ops = &sim_ops;
	/* No enum value names the simulator; it stands in for a device the
	 * way the host backend does. */
	s->be.kind = DAO_BACKEND_HOST;
	s->be.holds_data = false;
	s->be.rates = (struct dao_rates){
		.h2d_bytes_per_s = m->h2d_bytes_per_s,
		.d2h_bytes_per_s = m->d2h_bytes_per_s,
		.flops_per_s = m->flops_per_s,
		.mem_bytes_per_s = m->mem_bytes_per_s,
		.launch_ns = m->launch_ns,
	};
	s->be.device_memory = m->memory_bytes;
	s->be.arena_bytes = budget;
	s->be.align = 1;
	s->be.contiguous = m->contiguous != 0;
	*out = &s->be;
	return DAO_OK;
}

void dao_backend_sim_result(struct dao_backend *be, struct dao_sim_result *out)
{
	struct sim_backend *s = to_sim(be);
	uint64_t end = 0;

	if (!s || !out)
		return;
	memset(out, 0, sizeof(*out));
	for (int e = 0; e < DAO_ENGINES; e++)
		if (s->eng[e].free_ns > end)
			end = s->eng[e].free_ns;
	out->end_ns = end;
	out->compute_ns = s->eng[DAO_ENGINE_COMPUTE].busy_ns;
	out->stall_ns = s->stall_ns;
	out->h2d_busy_ns = s->eng[DAO_ENGINE_H2D].busy_ns;
	out->d2h_busy_ns = s->eng[DAO_ENGINE_D2H].busy_ns;
	out->spans = s->spans;
	out->nspans = s->nspans;
}

void dao_backend_destroy(struct dao_backend *be)
{
	if (be)
		be->ops->destroy(be);
}
