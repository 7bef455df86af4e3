/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

uint64_t model_copy_ns(double bytes_per_s, uint64_t bytes)
{
	double ns = ceil((double)bytes * 1e9 / bytes_per_s);

	return ns >= 1.8e19 ? UINT64_MAX / 4 : (uint64_t)ns;
}

uint64_t model_kernel_ns(const struct dao_sim_model *m, uint64_t flops, uint64_t bytes)
{
	uint64_t tf = model_copy_ns(m->flops_per_s, flops);
	uint64_t tm = model_copy_ns(m->mem_bytes_per_s, bytes);

	return (tf > tm ? tf : tm) + m->launch_ns;
}

uint64_t profile_compute_ns(const struct trace_profile *p, const struct dao_sim_model *m)
{
	uint64_t sum = 0;

	for (size_t k = 0; k < p->nkernels; k++)
		sum += model_kernel_ns(m, p->kernel_flops[k], p->kernel_bytes[k]);
	return sum;
}

unsigned trace_flops_scale(const struct dao_trace *t)
{
	const char *s = t->preamble;
	const char *key = "dtype=float64";
	size_t n = strlen(key);

	for (const char *hit = strstr(s, key); hit; hit = strstr(hit + 1, key)) {
		int starts = hit == s || hit[-1] == ' ' || hit[-1] == '\t' || hit[-1] == '\n';
		int ends = hit[n] == '\0' || hit[n] == ' ' || hit[n] == '\t' || hit[n] == '\n';

		if (starts && ends)
			return 2;
	}
	return 1;
}

void trace_profile_free(struct trace_profile *p)
{
	free(p->kernel_bytes);
	free(p->kernel_flops);
	free(p->first_read_bytes);
	free(p->last_access);
	free(p->intervals);
	memset(p, 0, sizeof(*p));
}

dao_status trace_profile_build(const struct dao_trace *t, unsigned flops_scale,
			       struct trace_profile *p)
{
	size_t *first = NULL, *prev = NULL, *last_write = NULL, *version = NULL;
	uint32_t *prev_mode = NULL;
	uint64_t *delta = NULL; /* unsigned: wraps cleanly, sums fit */
	size_t k = 0, cap = 0;
	uint64_t live = 0;

	memset(p, 0, sizeof(*p));
	p->nkernels = t->nkernels;
	p->flops_scale = flops_scale ? flops_scale : 1;
	p->kernel_bytes = calloc(t->nkernels + 1, sizeof(*p->kernel_bytes));
	p->kernel_flops = calloc(t->nkernels + 1, sizeof(*p->kernel_flops));
	p->first_read_bytes = calloc(t->nkernels + 1, sizeof(*p->first_read_bytes));
	p->last_access = malloc((t->nbufs + 1) * sizeof(*p->last_access));
	first = malloc((t->nbufs + 1) * sizeof(*first));
	prev = malloc((t->nbufs + 1) * sizeof(*prev));
	prev_mode = calloc(t->nbufs + 1, sizeof(*prev_mode));
	delta = calloc(t->nkernels + 2, sizeof(*delta));
	last_write = malloc((t->nbufs + 1) * sizeof(*last_write));
	version = malloc((t->nbufs + 1) * sizeof(*version));
	if (!p->kernel_bytes || !p->kernel_flops || !p->first_read_bytes || !p->last_access || !first || !prev ||
	    !prev_mode || !delta || !last_write || !version)
		goto nomem;
	for (size_t b = 0; b < t->nbufs; b++)
		first[b] = prev[b] = p->last_access[b] = last_write[b] = version[b] = SIZE_MAX;

	for (size_t e = 0; e < t->nevents; e++) {
		const struct dao_trace_event *ev = &t->events[e];
		const struct dao_trace_operand *ops;

		if (ev->type != DAO_TRACE_KERNEL)
			continue;
		ops = dao_trace_kernel_ops(t, ev);
		p->kernel_flops[k] = ev->u.kernel.flops * p->flops_scale;
		p->total_flops += p->kernel_flops[k];
		for (uint32_t i = 0; i < ev->u.kernel.nops; i++) {
			uint32_t b = ops[i].buf;
			uint64_t bytes = t->bufs[b].bytes;

			p->kernel_bytes[k] += bytes;
			if (first[b] == SIZE_MAX) {
				first[b] = k;
				if (ops[i].mode != DAO_W) {
					p->compulsory_bytes += bytes;
					p->first_read_bytes[k] += bytes;
				}
			} else if (ops[i].mode != DAO_W && bytes && k > prev[b] + 1) {
				if (p->nintervals == cap) {
					size_t ncap = cap ? cap * 2 : 1024;
					struct reuse_interval *ni =
						realloc(p->intervals, ncap * sizeof(*ni));

					if (!ni)
						goto nomem;
					p->intervals = ni;
					cap = ncap;
				}
				/* number a write's data when an interval first holds it */
				if (last_write[b] != SIZE_MAX && version[b] == SIZE_MAX)
					version[b] = p->nversions++;
				p->intervals[p->nintervals++] = (struct reuse_interval){
					.start = prev[b],
					.end = k,
					.bytes = bytes,
					.dirty = prev_mode[b] != DAO_R,
					.written_at = last_write[b],
					.version = version[b],
				};
			}
			prev[b] = k;
			prev_mode[b] = ops[i].mode;
			if (ops[i].mode != DAO_R) {
				last_write[b] = k;
				version[b] = SIZE_MAX;
			}
		}
		if (p->kernel_bytes[k] > p->max_kernel_bytes)
			p->max_kernel_bytes = p->kernel_bytes[k];
		k++;
	}
	for (size_t b = 0; b < t->nbufs; b++) {
		p->last_access[b] = prev[b];
		if (first[b] == SIZE_MAX)
			continue;
		delta[first[b]] += t->bufs[b].bytes;
		delta[prev[b] + 1] -= t->bufs[b].bytes;
	}
	for (k = 0; k < t->nkernels; k++) {
		live += delta[k];
		if (live > p->peak_live_bytes)
			p->peak_live_bytes = live;
	}
	free(first);
	free(prev);
	free(prev_mode);
	free(delta);
	free(last_write);
	free(version);
	return DAO_OK;
nomem:
	free(last_write);
	free(version);
	free(first);
	free(prev);
	free(prev_mode);
	free(delta);
	trace_profile_free(p);
	return DAO_ERR_NOMEM;
}
