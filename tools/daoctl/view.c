/* SPDX-License-Identifier: MIT */
/*
 * view.c - the read commands: status, ps and show, as text, JSON
 * (schema "daoctl/1", Documentation/daoctl.md) or Prometheus text.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daoctl.h"

#define SCHEMA "daoctl/1"

/* The summary counters as JSON members and Prometheus metrics, in one table
 * so both outputs always carry the same set. */
struct field {
	const char *json;
	const char *prom; /* NULL: not exported */
	const char *help;
	bool counter;
	size_t off;
};

#define F(j, p, h, c) { #j, p, h, c, offsetof(struct dao_pub_summary, j) }
static const struct field fields[] = {
	F(device_bytes, "dao_process_device_bytes", "Bytes resident on the device.", false),
	F(peak_device_bytes, "dao_process_device_peak_bytes", "Highest device bytes.", false),
	F(host_bytes, "dao_process_host_bytes", "Bytes of host copies allocated.", false),
	F(pinned_bytes, "dao_process_pinned_bytes", "Host bytes pinned, as libdao counts.", false),
	F(live_buffers, "dao_process_live_buffers", "Owning buffers not yet freed.", false),
	F(budget_bytes, "dao_process_budget_bytes", "Device budget in force.", false),
	F(host_budget_bytes, NULL, NULL, false),
	F(kernels, "dao_process_kernels_total", "Kernels run.", true),
	F(fetches, "dao_process_fetches_total", "Host-to-device copies.", true),
	F(prefetches, "dao_process_prefetches_total", "Fetches issued ahead of their kernel.", true),
	F(writebacks, "dao_process_writebacks_total", "Device-to-host copies.", true),
	F(evictions, "dao_process_evictions_total", "Buffers evicted to make room.", true),
	F(drops, "dao_process_drops_total", "Evictions that needed no copy.", true),
	F(h2d_bytes, "dao_process_h2d_bytes_total", "Bytes copied host to device.", true),
	F(d2h_bytes, "dao_process_d2h_bytes_total", "Bytes copied device to host.", true),
	F(stalls, "dao_process_stalls_total", "Kernels that waited for a copy.", true),
	F(stall_ns, NULL, NULL, true),
	F(ops, NULL, NULL, true),
};
#undef F

static uint64_t field_of(const struct dao_pub_summary *s, const struct field *f)
{
	return *(const uint64_t *)((const char *)s + f->off);
}

static int cmp_device_bytes(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;

	if (x->sum.device_bytes != y->sum.device_bytes)
		return x->sum.device_bytes > y->sum.device_bytes ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void sort_procs(struct scan *s)
{
	if (s->n)
		qsort(s->procs, s->n, sizeof(*s->procs), cmp_device_bytes);
}

static void summary_json(FILE *f, const struct dao_pub_summary *s)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		fprintf(f, ",\"%s\":%" PRIu64, fields[i].json, field_of(s, &fields[i]));
}

void proc_json(FILE *f, const struct proc *p, bool module)
{
	fprintf(f, "{\"pid\":%u,\"uid\":%u,\"job\":", p->pid, p->uid);
	json_string(f, p->job);
	fputs(",\"backend\":", f);
	json_string(f, p->backend);
	fputs(",\"policy\":", f);
	json_string(f, p->policy);
	if (p->slurm_job_id)
		fprintf(f, ",\"slurm_job_id\":%" PRIu64, p->slurm_job_id);
	else
		fputs(",\"slurm_job_id\":null", f);
	fprintf(f, ",\"devices\":%u", p->nseg);
	summary_json(f, &p->sum);
	if (!module)
		fputs(",\"kernel_pinned_bytes\":null", f);
	else
		fprintf(f, ",\"kernel_pinned_bytes\":%" PRIu64, p->k ? p->k->pinned : 0);
	fputc('}', f);
}

static void module_json(FILE *f, const struct node *n)
{
	if (!n->loaded) {
		fputs("{\"loaded\":false,\"reason\":", f);
		json_string(f, n->error);
		fputc('}', f);
		return;
	}
	fprintf(f,
		"{\"loaded\":true,\"family_version\":%u,\"version\":", n->family_version);
	json_string(f, n->version);
	fprintf(f,
		",\"limit_bytes\":%" PRIu64 ",\"pinned_bytes\":%" PRIu64
		",\"peak_bytes\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"processes\":%u}",
		n->limit, n->pinned, n->peak, n->refused, n->procs);
}

static const char *module_line(char *buf, size_t cap, const struct node *n)
{
	if (!n->loaded) {
		snprintf(buf, cap, "%s", n->error[0] ? n->error : "not loaded");
		return buf;
	}
	snprintf(buf, cap, "loaded (netlink family version %u%s%s)", n->family_version,
		 n->version[0] ? ", version " : "", n->version);
	return buf;
}

static uint64_t libdao_pinned(const struct scan *s)
{
	uint64_t t = 0;

	for (uint32_t i = 0; i < s->n; i++)
		t += s->procs[i].sum.pinned_bytes;
	return t;
}

/* ---------------------------------------------------------------- status */

static void prom_head(FILE *f, const char *name, const char *help, bool counter)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, counter ? "counter" : "gauge");
}

int cmd_status(const struct node *n, const struct scan *s, int format)
{
	char a[32], b[32], line[200];

	if (format == FMT_JSON) {
		printf("{\"schema\":\"" SCHEMA "\",\"module\":");
		module_json(stdout, n);
		printf(",\"processes\":%u,\"libdao_pinned_bytes\":%" PRIu64
		       ",\"stale_removed\":%u,\"unreadable\":%u}\n",
		       s->n, libdao_pinned(s), s->stale_removed, s->unreadable);
		return EXIT_OK;
	}
	if (format == FMT_PROM) {
		prom_head(stdout, "dao_module_loaded", "1 when the dao module answers.", false);
		printf("dao_module_loaded %d\n", n->loaded);
		prom_head(stdout, "dao_processes", "Processes publishing dao residency.", false);
		printf("dao_processes %u\n", s->n);
		prom_head(stdout, "dao_libdao_pinned_bytes", "Pinned bytes as libdao counts them.",
			  false);
		printf("dao_libdao_pinned_bytes %" PRIu64 "\n", libdao_pinned(s));
		if (n->loaded) {
			prom_head(stdout, "dao_node_limit_bytes", "Node limit on pinned bytes.",
				  false);
			printf("dao_node_limit_bytes %" PRIu64 "\n", n->limit);
			prom_head(stdout, "dao_node_pinned_bytes", "Bytes pinned on the node.", false);
			printf("dao_node_pinned_bytes %" PRIu64 "\n", n->pinned);
			prom_head(stdout, "dao_node_pinned_peak_bytes",
				  "Highest pinned bytes since the module loaded.", false);
			printf("dao_node_pinned_peak_bytes %" PRIu64 "\n", n->peak);
			prom_head(stdout, "dao_node_refused_pins_total", "Pins refused.", true);
			printf("dao_node_refused_pins_total %" PRIu64 "\n", n->refused);
			prom_head(stdout, "dao_node_module_processes",
				  "Processes with /dev/dao open.", false);
			printf("dao_node_module_processes %u\n", n->procs);
		}
		return EXIT_OK;
	}
	printf("module:          %s\n", module_line(line, sizeof(line), n));
	if (n->loaded) {
		printf("node limit:      %s\n", fmt_bytes(a, sizeof(a), n->limit));
		printf("pinned (kernel): %s, peak %s, by %u processes\n",
		       fmt_bytes(a, sizeof(a), n->pinned), fmt_bytes(b, sizeof(b), n->peak), n->procs);
		printf("refused pins:    %" PRIu64 "\n", n->refused);
	}
	printf("pinned (libdao): %s\n", fmt_bytes(a, sizeof(a), libdao_pinned(s)));
	printf("dao processes:   %u\n", s->n);
	if (s->stale_removed)
		printf("stale segments removed: %u\n", s->stale_removed);
	if (s->unreadable)
		printf("unreadable segments: %u\n", s->unreadable);
	return EXIT_OK;
}

/* -------------------------------------------------------------------- ps */

void ps_text(FILE *f, const struct node *n, const struct scan *s, uint32_t max_rows)
{
	char b[12][24], slurm[24];

	/* SLURM (the Slurm job id, "-" outside Slurm) comes second: the
	 * column an operator matches against squeue. */
	fprintf(f, "%7s %8s %-16s %-13s %7s %7s %7s %7s %7s %6s %7s %7s %7s %7s %7s %7s\n", "PID",
		"SLURM", "JOB", "BACKEND", "BUDGET", "DEVICE", "PEAK", "HOST",
		n->loaded ? "KPINNED" : "PINNED",
		"BUFS", "KERNELS", "FETCH", "EVICT", "H2D", "D2H", "STALL");
	for (uint32_t i = 0; i < s->n && (!max_rows || i < max_rows); i++) {
		const struct proc *p = &s->procs[i];
		uint64_t pinned = n->loaded ? (p->k ? p->k->pinned : 0) : p->sum.pinned_bytes;

		if (p->slurm_job_id)
			snprintf(slurm, sizeof(slurm), "%" PRIu64, p->slurm_job_id);
		else
			snprintf(slurm, sizeof(slurm), "-");
		fprintf(f,
			"%7u %8s %-16.16s %-13.13s %7s %7s %7s %7s %7s %6s %7s %7s %7s %7s %7s %6.2fs\n",
			p->pid, slurm, p->job, p->backend, fmt_bytes(b[0], 24, p->sum.budget_bytes),
			fmt_bytes(b[1], 24, p->sum.device_bytes),
			fmt_bytes(b[2], 24, p->sum.peak_device_bytes),
			fmt_bytes(b[3], 24, p->sum.host_bytes), fmt_bytes(b[4], 24, pinned),
			fmt_count(b[5], 24, p->sum.live_buffers), fmt_count(b[6], 24, p->sum.kernels),
			fmt_count(b[7], 24, p->sum.fetches), fmt_count(b[8], 24, p->sum.evictions),
			fmt_bytes(b[9], 24, p->sum.h2d_bytes), fmt_bytes(b[10], 24, p->sum.d2h_bytes),
			(double)p->sum.stall_ns / 1e9);
	}
}

static void ps_prom(const struct node *n, const struct scan *s)
{
	for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		const struct field *fl = &fields[k];

		if (!fl->prom)
			continue;
		prom_head(stdout, fl->prom, fl->help, fl->counter);
		for (uint32_t i = 0; i < s->n; i++) {
			const struct proc *p = &s->procs[i];

			printf("%s{pid=\"%u\",job=", fl->prom, p->pid);
			prom_label(stdout, p->job);
			printf(",backend=");
			prom_label(stdout, p->backend);
			printf("} %" PRIu64 "\n", field_of(&p->sum, fl));
		}
	}
	prom_head(stdout, "dao_process_stall_seconds_total", "Time kernels waited for copies.",
		  true);
	for (uint32_t i = 0; i < s->n; i++) {
		printf("dao_process_stall_seconds_total{pid=\"%u\",job=", s->procs[i].pid);
		prom_label(stdout, s->procs[i].job);
		printf(",backend=");
		prom_label(stdout, s->procs[i].backend);
		printf("} %.9f\n", (double)s->procs[i].sum.stall_ns / 1e9);
	}
	if (n->loaded) {
		prom_head(stdout, "dao_process_kernel_pinned_bytes",
			  "Bytes the process pins, as the module counts.", false);
		for (uint32_t i = 0; i < s->n; i++) {
			const struct proc *p = &s->procs[i];

			printf("dao_process_kernel_pinned_bytes{pid=\"%u\",job=", p->pid);
			prom_label(stdout, p->job);
			printf(",backend=");
			prom_label(stdout, p->backend);
			printf("} %" PRIu64 "\n", p->k ? p->k->pinned : 0);
		}
	}
	prom_head(stdout, "dao_module_loaded", "1 when the dao module answers.", false);
	printf("dao_module_loaded %d\n", n->loaded);
}

int cmd_ps(const struct node *n, const struct scan *s, int format)
{
	char line[200];

	if (format == FMT_JSON) {
		printf("{\"schema\":\"" SCHEMA "\",\"module\":");
		module_json(stdout, n);
		printf(",\"processes\":[");
		for (uint32_t i = 0; i < s->n; i++) {
			if (i)
				putchar(',');
			proc_json(stdout, &s->procs[i], n->loaded);
		}
		printf("]}\n");
		return EXIT_OK;
	}
	if (format == FMT_PROM) {
		ps_prom(n, s);
		return EXIT_OK;
	}
	printf("module: %s\n", module_line(line, sizeof(line), n));
	ps_text(stdout, n, s, 0);
	return EXIT_OK;
}

/* ------------------------------------------------------------------ show */

static int sort_key;

/* "none" sorts after every distance: DAO_PUB_NONE is the largest value. */
static int cmp_buf(const void *a, const void *b)
{
	const struct dao_pub_buf *x = a, *y = b;
	uint64_t kx, ky;

	switch (sort_key) {
	case SORT_NEXT:
		kx = x->next_use;
		ky = y->next_use;
		break;
	case SORT_LAST:
		kx = x->since_last;
		ky = y->since_last;
		break;
	default:
		kx = ~x->size;
		ky = ~y->size;
		break;
	}
	if (kx != ky)
		return kx < ky ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void dist_json(FILE *f, const char *name, uint64_t v)
{
	if (v == DAO_PUB_NONE)
		fprintf(f, ",\"%s\":null", name);
	else
		fprintf(f, ",\"%s\":%" PRIu64, name, v);
}

static void seg_json(FILE *f, const struct seg *g)
{
	fprintf(f, "{\"serial\":%u,\"backend\":", g->hdr.serial);
	json_string(f, g->hdr.backend);
	fputs(",\"policy\":", f);
	json_string(f, g->hdr.policy);
	fprintf(f, ",\"lookahead\":%u", g->hdr.lookahead);
	summary_json(f, &g->sum);
	fprintf(f, ",\"table_ops\":%" PRIu64 ",\"buffers_listed\":%" PRIu64 ",\"buffers\":[",
		g->tab.now_seq, g->tab.count);
	for (uint64_t i = 0; i < g->tab.count; i++) {
		const struct dao_pub_buf *b = &g->bufs[i];

		fprintf(f, "%s{\"id\":%" PRIu64 ",\"label\":", i ? "," : "", b->id);
		json_string(f, b->label);
		fprintf(f, ",\"size\":%" PRIu64 ",\"location\":\"%s\",\"dirty\":%s,\"released\":%s",
			b->size, location_name(b->flags),
			b->flags & DAO_PUB_BUF_DIRTY ? "true" : "false",
			b->flags & DAO_PUB_BUF_RELEASED ? "true" : "false");
		dist_json(f, "next_use", b->next_use);
		dist_json(f, "since_last", b->since_last);
		fputc('}', f);
	}
	fputs("]}", f);
}

static const char *dist_text(char *buf, size_t cap, uint64_t v)
{
	if (v == DAO_PUB_NONE)
		return "-";
	return fmt_count(buf, cap, v);
}

static void seg_text(const struct seg *g, bool several)
{
	char a[24], b[24], c[24], e[24];
	const struct dao_pub_summary *s = &g->sum;

	if (several)
		printf("\ndevice %u: backend %s, policy %s\n", g->hdr.serial, g->hdr.backend,
		       g->hdr.policy);
	printf("device:    %s of %s budget (peak %s)\n", fmt_bytes(a, 24, s->device_bytes),
	       fmt_bytes(b, 24, s->budget_bytes), fmt_bytes(c, 24, s->peak_device_bytes));
	printf("host:      %s, pinned %s\n", fmt_bytes(a, 24, s->host_bytes),
	       fmt_bytes(b, 24, s->pinned_bytes));
	printf("kernels:   %" PRIu64 "   fetches %" PRIu64 " (%" PRIu64 " prefetched)   evictions %" PRIu64
	       " (%" PRIu64 " without copy)   writebacks %" PRIu64 "\n",
	       s->kernels, s->fetches, s->prefetches, s->evictions, s->drops, s->writebacks);
	printf("moved:     %s to the device, %s back; %" PRIu64 " stalls, %.3f s\n",
	       fmt_bytes(a, 24, s->h2d_bytes), fmt_bytes(b, 24, s->d2h_bytes), s->stalls,
	       (double)s->stall_ns / 1e9);
	printf("buffers:   %" PRIu64 " live%s\n\n", g->tab.live,
	       g->tab.count < g->tab.live ? ", the largest listed" : "");
	printf("%8s  %-24s %8s  %-7s %-5s %7s %7s\n", "ID", "LABEL", "SIZE", "WHERE", "DIRTY",
	       "NEXT", "LAST");
	for (uint64_t i = 0; i < g->tab.count; i++) {
		const struct dao_pub_buf *x = &g->bufs[i];

		printf("%8" PRIu64 "  %-24.24s %8s  %-7s %-5s %7s %7s\n", x->id,
		       x->label[0] ? x->label : "-", fmt_bytes(a, 24, x->size),
		       location_name(x->flags), x->flags & DAO_PUB_BUF_DIRTY ? "yes" : "no",
		       dist_text(c, 24, x->next_use), dist_text(e, 24, x->since_last));
	}
}

int cmd_show(const struct node *n, struct scan *s, uint32_t pid, int sort, int format)
{
	struct proc *p = scan_find(s, pid);
	char a[24], line[200];

	if (!p) {
		fprintf(stderr, "daoctl: no dao process with pid %u%s\n", pid,
			geteuid() == 0 ? "" : " among yours");
		return EXIT_FAIL;
	}
	sort_key = sort;
	for (uint32_t i = 0; i < p->nseg; i++)
		qsort(p->segs[i].bufs, p->segs[i].tab.count, sizeof(*p->segs[i].bufs), cmp_buf);
	if (format == FMT_JSON) {
		printf("{\"schema\":\"" SCHEMA "\",\"module\":");
		module_json(stdout, n);
		printf(",\"process\":");
		proc_json(stdout, p, n->loaded);
		printf(",\"devices\":[");
		for (uint32_t i = 0; i < p->nseg; i++) {
			if (i)
				putchar(',');
			seg_json(stdout, &p->segs[i]);
		}
		printf("]}\n");
		return EXIT_OK;
	}
	printf("pid %u, job %s, backend %s, policy %s, uid %u", p->pid, p->job, p->backend,
	       p->policy, p->uid);
	if (p->slurm_job_id)
		printf(", slurm job %" PRIu64, p->slurm_job_id);
	putchar('\n');
	printf("module:    %s", module_line(line, sizeof(line), n));
	if (n->loaded)
		printf("; pins %s", fmt_bytes(a, 24, p->k ? p->k->pinned : 0));
	putchar('\n');
	for (uint32_t i = 0; i < p->nseg; i++)
		seg_text(&p->segs[i], p->nseg > 1);
	return EXIT_OK;
}
