// SPDX-License-Identifier: GPL-2.0
/*
 * dao_pin.c - pinning ranges of the opener's memory: reserve every charge
 * first, pin in bounded chunks, and on any failure give back exactly what
 * was taken.
 */
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "dao_priv.h"

/* Pages pinned between two chances to reschedule or die. */
#define DAO_PIN_CHUNK 512UL

/* Off for sites that bound pinning by the node limit alone. */
static bool check_memlock = true;
module_param(check_memlock, bool, 0644);
MODULE_PARM_DESC(check_memlock,
		 "Charge pins against RLIMIT_MEMLOCK unless CAP_IPC_LOCK (default: on)");

struct dao_region {
	unsigned long addr;
	unsigned long npages;
	bool writable;  /* the device may write: dirty the pages at unpin */
	bool committed; /* visible to UNPIN, counted in the peaks */
	struct page **pages;
};

/*
 * Long-term read-only pins of a COW mapping are coherent only since the
 * kernel breaks COW before pinning (FAULT_FLAG_UNSHARE for every page,
 * v6.2). Nothing in a header names that behaviour; FOLL_PCI_P2PDMA is the
 * GUP flag of the same release, so its presence stands for it. Without it
 * a read-only request pins the way in-tree users did before 6.2: with
 * FOLL_WRITE | FOLL_FORCE, which breaks COW (shared zero page, page cache
 * of a MAP_PRIVATE file) before the pin, so the process's later writes
 * land in the pinned pages. Documentation/kmod.md has the details.
 */
#ifdef DAO_HAVE_FOLL_PCI_P2PDMA
#define DAO_RO_PIN_GUP 0
#else
#define DAO_RO_PIN_GUP (FOLL_WRITE | FOLL_FORCE)
#endif

static u64 dao_region_bytes(const struct dao_region *r)
{
	return (u64)r->npages << PAGE_SHIFT;
}

/*
 * The mm's pinned pages show as VmPin; every pin adds to them, but only the
 * unprivileged are held to RLIMIT_MEMLOCK, as RDMA and VFIO do.
 */
static int dao_charge_mm(struct dao_file *f, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 now = atomic64_add_return(npages, &f->mm->pinned_vm);

	if (!READ_ONCE(check_memlock) || now <= limit || capable(CAP_IPC_LOCK))
		return 0;
	atomic64_sub(npages, &f->mm->pinned_vm);
	return -ENOMEM;
}

static void dao_uncharge(struct dao_file *f, const struct dao_region *r)
{
	atomic64_sub(r->npages, &f->mm->pinned_vm);
	dao_acct_unreserve(f, dao_region_bytes(r), r->committed);
}

/*
 * A writable long-term pin of file pages with writeback would let the
 * device dirty pages behind the file system's back; like upstream GUP
 * (since 6.5) and io_uring, accept only memory without writeback:
 * anonymous and shmem pages (swap-backed) and hugetlb.
 */
static bool dao_page_pinnable_for_write(struct page *page)
{
	struct folio *folio = page_folio(page);

	return folio_test_anon(folio) || folio_test_swapbacked(folio) ||
	       folio_test_hugetlb(folio);
}

#ifndef DAO_HAVE_FOLL_PCI_P2PDMA
/*
 * FOLL_FORCE also lets GUP read what the process may not (PROT_NONE),
 * as ptrace may; a pin must not. Checked after pinning: a range that was
 * not readable at any time during the call is refused.
 */
static bool dao_range_readable(unsigned long start, unsigned long end)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool ok = true;

	mmap_read_lock(mm);
	while (start < end) {
		vma = find_vma(mm, start);
		if (!vma || vma->vm_start > start || !(vma->vm_flags & VM_READ)) {
			ok = false;
			break;
		}
		start = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ok;
}
#else
static bool dao_range_readable(unsigned long start, unsigned long end)
{
	return true;
}
#endif

static int dao_pin_pages(struct dao_region *r)
{
	unsigned int gup = FOLL_LONGTERM | (r->writable ? FOLL_WRITE : DAO_RO_PIN_GUP);
	unsigned long done = 0, i;
	int ret = 0;

	while (done < r->npages) {
		unsigned long n = min(r->npages - done, DAO_PIN_CHUNK);
		int got = pin_user_pages_fast(r->addr + (done << PAGE_SHIFT), n, gup,
					      r->pages + done);

		if (got <= 0) {
			ret = got ? got : -EFAULT;
			break;
		}
		if (gup & FOLL_WRITE) {
			for (i = done; i < done + got; i++)
				if (!dao_page_pinnable_for_write(r->pages[i]))
					ret = -EOPNOTSUPP;
		}
		done += got;
		if (ret)
			break;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	if (!ret && (gup & FOLL_FORCE) &&
	    !dao_range_readable(r->addr, r->addr + (r->npages << PAGE_SHIFT)))
		ret = -EFAULT;
	if (ret)
		unpin_user_pages(r->pages, done);
	return ret;
}

static int dao_check_range(u64 addr, u64 length)
{
	if (!length || !PAGE_ALIGNED(addr) || !PAGE_ALIGNED(length))
		return -EINVAL;
	if (addr + length < addr)
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(addr), length))
		return -EFAULT;
	/* More than the node has can never be pinned; say so before any work. */
	if ((length >> PAGE_SHIFT) > totalram_pages())
		return -ENOMEM;
	return 0;
}

int dao_pin(struct dao_file *f, u64 addr, u64 length, bool writable, u64 *handle,
	    struct dao_region **region)
{
	struct dao_region *r;
	bool announce;
	u32 id;
	int ret;

	ret = dao_check_range(addr, length);
	if (ret)
		return ret;

	/* The job's memory: charged to its memory cgroup, as RDMA and io_uring do. */
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	r->addr = addr;
	r->npages = length >> PAGE_SHIFT;
	r->writable = writable;

	ret = dao_acct_reserve(f, length, &announce);
	if (ret) {
		if (announce)
			dao_nl_pin_refused(f->proc, length);
		goto free_region;
	}
	ret = dao_charge_mm(f, r->npages);
	if (ret) {
		dao_acct_unreserve(f, length, false);
		dao_acct_refuse(f);
		goto free_region;
	}

	r->pages = kvmalloc_array(r->npages, sizeof(*r->pages), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!r->pages) {
		ret = -ENOMEM;
		goto uncharge;
	}
	ret = dao_pin_pages(r);
	if (ret)
		goto free_pages;

	/*
	 * Reserve the handle only: UNPIN finds nothing under it until the
	 * caller has learnt it and published the region (dao_pin_commit).
	 */
	ret = xa_alloc_cyclic(&f->regions, &id, NULL, XA_LIMIT(1, U32_MAX), &f->next_handle,
			      GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto unpin;
	*handle = id;
	*region = r;
	return 0;

unpin:
	unpin_user_pages_dirty_lock(r->pages, r->npages, r->writable);
free_pages:
	kvfree(r->pages);
uncharge:
	dao_uncharge(f, r);
free_region:
	kfree(r);
	return ret;
}

void dao_pin_commit(struct dao_file *f, u64 handle, struct dao_region *r)
{
	r->committed = true;
	dao_acct_commit(f, dao_region_bytes(r));
	/* Replaces the reservation: no allocation, cannot fail. */
	xa_store(&f->regions, handle, r, GFP_KERNEL);
}

static void dao_region_release(struct dao_file *f, struct dao_region *r);

void dao_pin_abort(struct dao_file *f, u64 handle, struct dao_region *r)
{
	xa_release(&f->regions, handle);
	dao_region_release(f, r);
}

static void dao_region_release(struct dao_file *f, struct dao_region *r)
{
	/* The device may have written any page of a writable range. */
	unpin_user_pages_dirty_lock(r->pages, r->npages, r->writable);
	kvfree(r->pages);
	dao_uncharge(f, r);
	kfree(r);
}

int dao_unpin(struct dao_file *f, u64 handle)
{
	struct dao_region *r;

	if (!handle || handle > U32_MAX)
		return -ENOENT;
	/* A reserved handle reads as NULL and stays reserved. */
	xa_lock(&f->regions);
	r = xa_load(&f->regions, handle);
	if (r)
		__xa_erase(&f->regions, handle);
	xa_unlock(&f->regions);
	if (!r)
		return -ENOENT;
	dao_region_release(f, r);
	return 0;
}

/*
 * The teardown at close or when the owner's mm goes: uses f->mm only, never
 * current->mm. Skips reserved handles, which no PIN can hold at that time.
 */
void dao_unpin_all(struct dao_file *f, u64 *bytes, u64 *regions)
{
	struct dao_region *r;
	unsigned long id;

	*bytes = 0;
	*regions = 0;
	xa_for_each(&f->regions, id, r) {
		if (xa_erase(&f->regions, id) != r)
			continue;
		*bytes += dao_region_bytes(r);
		(*regions)++;
		dao_region_release(f, r);
		cond_resched();
	}
}
