/* SPDX-License-Identifier: MIT */
/*
 * daoctl.h - what daoctl's pieces share: the processes read from the
 * published segments, the module's view, the output helpers.
 */
#ifndef DAOCTL_H
#define DAOCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "dao_publish.h"
#include "json_string.h" /* json_string, for the views */

/* Exit statuses. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* One device of a process: a whole segment, copied out consistently. */
struct seg {
	struct dao_pub_header hdr; /* text fields NUL-terminated and printable */
	struct dao_pub_summary sum;
	struct dao_pub_table tab;
	struct dao_pub_buf *bufs; /* tab.count entries, largest first */
};

/* The module's accounting of one process (when the module is loaded). */
struct kproc {
	uint32_t pid;
	uint32_t uid;
	char comm[32];
	uint64_t pinned;
	uint64_t regions;
	uint64_t peak;
	uint64_t refused;
};

/* One dao process: its devices summed. */
struct proc {
	uint32_t pid;
	uint32_t uid;
	char job[DAO_PUB_TEXT];
	char backend[DAO_PUB_SHORT];
	char policy[DAO_PUB_SHORT];
	uint64_t slurm_job_id; /* 0: not a Slurm job, or a layout-1 segment */
	uint32_t nseg;
	struct seg *segs;
	struct dao_pub_summary sum; /* summed over the devices */
	uint64_t budget;
	const struct kproc *k; /* NULL without the module or without pins */
};

struct node {
	bool loaded;
	char error[128]; /* why the module could not be asked, when not loaded */
	uint32_t family_version;
	char version[64]; /* /sys/module/dao/version or srcversion */
	uint64_t limit;
	uint64_t pinned;
	uint64_t peak;
	uint64_t refused;
	uint32_t procs;
	uint32_t nk;
	struct kproc *k;
};

struct scan {
	struct proc *procs;
	uint32_t n;
	uint32_t stale_removed;
	uint32_t unreadable; /* segments skipped: busy, malformed */
};

/* segment.c */
int scan_segments(struct scan *s);
void scan_free(struct scan *s);
/* The process with this pid, or NULL. */
struct proc *scan_find(struct scan *s, uint32_t pid);

/* module.c */
void node_query(struct node *n);
void node_free(struct node *n);
const struct kproc *node_find(const struct node *n, uint32_t pid);
/* 0, or a negative errno with a message in err. */
int node_set_limit(uint64_t bytes, char *err, size_t errlen);

/* format.c */
const char *fmt_bytes(char *buf, size_t cap, uint64_t bytes);
const char *fmt_count(char *buf, size_t cap, uint64_t n);
void prom_label(FILE *f, const char *s);
const char *location_name(uint64_t flags);

/* views */
void proc_json(FILE *f, const struct proc *p, bool module);
int cmd_status(const struct node *n, const struct scan *s, int format);
int cmd_ps(const struct node *n, const struct scan *s, int format);
int cmd_show(const struct node *n, struct scan *s, uint32_t pid, int sort, int format);
int cmd_top(void);

enum { FMT_TEXT, FMT_JSON, FMT_PROM };
enum { SORT_SIZE, SORT_NEXT, SORT_LAST };

/* Sorts processes by device bytes, largest first. */
void sort_procs(struct scan *s);
/* ps as text into f, at most max_rows processes (0: all). */
void ps_text(FILE *f, const struct node *n, const struct scan *s, uint32_t max_rows);

#endif /* DAOCTL_H */
