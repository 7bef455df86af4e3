/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dao_priv.h - what the parts of dao.ko share: the accounting of pinned
 * staging memory per node, per process and per open file.
 */
#ifndef DAO_PRIV_H
#define DAO_PRIV_H

#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

#include "dao_compat.h"

/* What one holder of pins (the node, a process, a file) has. */
struct dao_count {
	u64 pinned;    /* bytes reserved or pinned now */
	u64 regions;   /* ranges reserved or pinned now */
	u64 committed; /* bytes of pins that succeeded, still pinned */
	u64 peak;      /* highest committed: refused or failed pins never move it */
	u64 refused;   /* pins refused by the node limit or RLIMIT_MEMLOCK */
};

/*
 * A thread group with /dev/dao open; shared by its files so that the node
 * sees processes, not descriptors. Lives while a file refers to it.
 */
struct dao_proc {
	struct list_head link; /* dao_procs, under dao_lock */
	struct pid *tgid;
	kuid_t uid;
	char comm[TASK_COMM_LEN];
	unsigned int files;    /* under dao_lock */
	unsigned int orphans;  /* files whose owner's mm is gone, under dao_lock */
	struct dao_count count; /* under dao_lock */
};

/*
 * One open of /dev/dao. Freed by the mmu notifier's free_notifier, after
 * close and after any release callback still running has returned.
 */
struct dao_file {
	struct pid *owner;      /* tgid of the opener, the only user */
	struct mm_struct *mm;   /* opener's mm (mmgrab): VmPin is charged here */
	struct dao_proc *proc;
	struct xarray regions;  /* handle -> struct dao_region */
	u32 next_handle;        /* for xa_alloc_cyclic */
	struct dao_count count; /* under dao_lock */
	/* Tells us when the owner's mm goes away (exit or exec). */
	struct mmu_notifier mn;
	struct mutex teardown;  /* orders the mm release against close */
	bool orphaned;          /* owner's mm is gone, under teardown and dao_lock */
	bool closed;            /* under teardown */
};

/* dao_acct.c: node limit and counters, all under one lock. */
int dao_acct_init(void);
unsigned long dao_acct_limit_mb(void);
int dao_acct_set_limit_mb(unsigned long mb);
u64 dao_acct_limit_bytes(void);
struct dao_proc *dao_proc_get(void);
void dao_proc_put(struct dao_proc *proc, bool orphaned);
void dao_acct_orphan(struct dao_file *f);
int dao_acct_reserve(struct dao_file *f, u64 bytes, bool *announce);
void dao_acct_commit(struct dao_file *f, u64 bytes);
void dao_acct_unreserve(struct dao_file *f, u64 bytes, bool committed);
void dao_acct_refuse(struct dao_file *f);
void dao_acct_file_stats(struct dao_file *f, struct dao_count *out);
void dao_acct_node(struct dao_count *out, u32 *procs);
/*
 * Calls fn for the procs from index *pos on, under the lock; stops when fn
 * returns non-zero and leaves *pos at the proc it stopped on. *gen gets the
 * list's generation (never 0) before fn sees the first proc.
 */
typedef int (*dao_proc_fn)(const struct dao_proc *p, void *arg);
int dao_acct_walk_procs(unsigned long *pos, unsigned int *gen, dao_proc_fn fn, void *arg);

/* dao_pin.c: pinning ranges of the owner's memory. */
struct dao_region;
/*
 * Pins and charges; the region is not yet visible to UNPIN. The caller
 * publishes it with dao_pin_commit() under the handle dao_pin() reserved,
 * or takes it all back with dao_pin_abort().
 */
int dao_pin(struct dao_file *f, u64 addr, u64 length, bool writable, u64 *handle,
	    struct dao_region **region);
void dao_pin_commit(struct dao_file *f, u64 handle, struct dao_region *r);
void dao_pin_abort(struct dao_file *f, u64 handle, struct dao_region *r);
int dao_unpin(struct dao_file *f, u64 handle);
void dao_unpin_all(struct dao_file *f, u64 *bytes, u64 *regions);

/* dao_file.c: the misc device. */
int dao_dev_register(void);
void dao_dev_unregister(void);

/* dao_netlink.c: the generic netlink family. */
int dao_nl_register(void);
void dao_nl_unregister(void);
void dao_nl_pin_refused(const struct dao_proc *proc, u64 bytes);
void dao_nl_released(const struct dao_proc *proc, u64 bytes, u64 regions);

#endif /* DAO_PRIV_H */
