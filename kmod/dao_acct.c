// SPDX-License-Identifier: GPL-2.0
/*
 * dao_acct.c - the node's accountant: the node limit and the counters of
 * the node, of each process and of each file.
 *
 * One spinlock guards every counter, so a reader always sees the node total
 * equal to the sum over processes and each process total equal to the sum
 * over its files; pins reserve here before they touch a page.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "dao_priv.h"

/* Reserved by the node limit when the administrator gave none at load. */
#define DAO_LIMIT_UNSET ULONG_MAX
#define DAO_LIMIT_MB_MAX (U64_MAX >> 20)

static DEFINE_SPINLOCK(dao_lock);
static LIST_HEAD(dao_procs);
static unsigned int dao_nprocs;   /* under dao_lock */
static unsigned int dao_procs_gen = 1; /* under dao_lock: bumped on list change, never 0 */
static struct dao_count dao_node; /* under dao_lock */
static unsigned long dao_limit_mb = DAO_LIMIT_UNSET;

int dao_acct_init(void)
{
	/* Half of RAM: enough for staging, never the whole node. */
	if (READ_ONCE(dao_limit_mb) == DAO_LIMIT_UNSET)
		WRITE_ONCE(dao_limit_mb, (totalram_pages() >> (20 - PAGE_SHIFT)) / 2);
	return 0;
}

unsigned long dao_acct_limit_mb(void)
{
	return READ_ONCE(dao_limit_mb);
}

int dao_acct_set_limit_mb(unsigned long mb)
{
	if (mb > DAO_LIMIT_MB_MAX || mb == DAO_LIMIT_UNSET)
		return -ERANGE;
	/* Pins already made stay; later ones see the new limit. */
	WRITE_ONCE(dao_limit_mb, mb);
	return 0;
}

u64 dao_acct_limit_bytes(void)
{
	unsigned long mb = READ_ONCE(dao_limit_mb);

	return mb == DAO_LIMIT_UNSET ? 0 : (u64)mb << 20;
}

static void dao_count_add(struct dao_count *c, u64 bytes)
{
	c->pinned += bytes;
	c->regions++;
}

/* Peaks move here only: a pin that fails or is refused never got here. */
static void dao_count_commit(struct dao_count *c, u64 bytes)
{
	c->committed += bytes;
	if (c->committed > c->peak)
		c->peak = c->committed;
}

static void dao_count_sub(struct dao_count *c, u64 bytes, bool committed)
{
	WARN_ON_ONCE(c->pinned < bytes || !c->regions ||
		     (committed && c->committed < bytes));
	c->pinned -= bytes;
	c->regions--;
	if (committed)
		c->committed -= bytes;
}

static void dao_procs_changed(void)
{
	/* 0 would read as "no generation yet" to genl_dump_check_consistent(). */
	if (!++dao_procs_gen)
		dao_procs_gen = 1;
}

struct dao_proc *dao_proc_get(void)
{
	struct pid *tgid = task_tgid(current);
	struct dao_proc *fresh, *p;

	/* Allocate before locking; most opens are a process's first. */
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return NULL;

	spin_lock(&dao_lock);
	list_for_each_entry(p, &dao_procs, link) {
		if (p->tgid == tgid) {
			p->files++;
			spin_unlock(&dao_lock);
			kfree(fresh);
			return p;
		}
	}
	fresh->tgid = get_pid(tgid);
	fresh->uid = current_uid();
	get_task_comm(fresh->comm, current->group_leader);
	fresh->files = 1;
	list_add_tail(&fresh->link, &dao_procs);
	dao_nprocs++;
	dao_procs_changed();
	spin_unlock(&dao_lock);
	return fresh;
}

void dao_proc_put(struct dao_proc *proc, bool orphaned)
{
	spin_lock(&dao_lock);
	if (orphaned)
		proc->orphans--;
	if (--proc->files) {
		spin_unlock(&dao_lock);
		return;
	}
	list_del(&proc->link);
	dao_nprocs--;
	dao_procs_changed();
	spin_unlock(&dao_lock);

	WARN_ON_ONCE(proc->count.pinned || proc->count.regions || proc->orphans);
	put_pid(proc->tgid);
	kfree(proc);
}

/* The file's owner's mm is gone; it holds no pins any more. */
void dao_acct_orphan(struct dao_file *f)
{
	spin_lock(&dao_lock);
	f->orphaned = true;
	f->proc->orphans++;
	spin_unlock(&dao_lock);
}

/*
 * On refusal, *announce says whether this refusal is worth an event: the
 * process's 1st, 2nd, 4th, 8th... so a job retrying in a loop cannot flood
 * the listeners, and every process's first refusal is still seen.
 */
int dao_acct_reserve(struct dao_file *f, u64 bytes, bool *announce)
{
	u64 limit = dao_acct_limit_bytes();

	spin_lock(&dao_lock);
	if (bytes > limit || dao_node.pinned > limit - bytes) {
		dao_node.refused++;
		f->proc->count.refused++;
		f->count.refused++;
		*announce = is_power_of_2(f->proc->count.refused);
		spin_unlock(&dao_lock);
		return -EDQUOT;
	}
	dao_count_add(&dao_node, bytes);
	dao_count_add(&f->proc->count, bytes);
	dao_count_add(&f->count, bytes);
	spin_unlock(&dao_lock);
	return 0;
}

void dao_acct_commit(struct dao_file *f, u64 bytes)
{
	spin_lock(&dao_lock);
	dao_count_commit(&f->count, bytes);
	dao_count_commit(&f->proc->count, bytes);
	dao_count_commit(&dao_node, bytes);
	spin_unlock(&dao_lock);
}

void dao_acct_unreserve(struct dao_file *f, u64 bytes, bool committed)
{
	spin_lock(&dao_lock);
	dao_count_sub(&f->count, bytes, committed);
	dao_count_sub(&f->proc->count, bytes, committed);
	dao_count_sub(&dao_node, bytes, committed);
	spin_unlock(&dao_lock);
}

void dao_acct_refuse(struct dao_file *f)
{
	spin_lock(&dao_lock);
	dao_node.refused++;
	f->proc->count.refused++;
	f->count.refused++;
	spin_unlock(&dao_lock);
}

void dao_acct_file_stats(struct dao_file *f, struct dao_count *out)
{
	spin_lock(&dao_lock);
	*out = f->count;
	spin_unlock(&dao_lock);
}

void dao_acct_node(struct dao_count *out, u32 *procs)
{
	spin_lock(&dao_lock);
	*out = dao_node;
	*procs = dao_nprocs;
	spin_unlock(&dao_lock);
}

int dao_acct_walk_procs(unsigned long *pos, unsigned int *gen, dao_proc_fn fn, void *arg)
{
	unsigned long i = 0;
	struct dao_proc *p;
	int ret = 0;

	spin_lock(&dao_lock);
	*gen = dao_procs_gen;
	list_for_each_entry(p, &dao_procs, link) {
		if (i++ < *pos)
			continue;
		ret = fn(p, arg);
		if (ret)
			break;
		(*pos)++;
	}
	spin_unlock(&dao_lock);
	return ret;
}
