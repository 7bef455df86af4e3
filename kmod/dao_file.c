// SPDX-License-Identifier: GPL-2.0
/*
 * dao_file.c - /dev/dao: open, the ioctls, and the single teardown in
 * release.
 *
 * Every ioctl argument is size-prefixed: argsz below the first version of
 * the struct is -EINVAL, above a page -E2BIG, and bytes past what this module
 * knows must be zero (-E2BIG otherwise), as copy_struct_from_user() checks.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <linux/dao.h>

#include "dao_priv.h"

static const struct mmu_notifier_ops dao_mn_ops;

static int dao_open(struct inode *inode, struct file *file)
{
	struct dao_file *f;
	int ret;

	/* Pins belong to a user address space; kernel threads have none. */
	if (!current->mm)
		return -EINVAL;

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return -ENOMEM;
	f->proc = dao_proc_get();
	if (!f->proc) {
		kfree(f);
		return -ENOMEM;
	}
	mutex_init(&f->teardown);
	xa_init_flags(&f->regions, XA_FLAGS_ALLOC1);
	f->mn.ops = &dao_mn_ops;
	ret = mmu_notifier_register(&f->mn, current->mm);
	if (ret) {
		dao_proc_put(f->proc, false);
		kfree(f);
		return ret;
	}
	f->owner = get_pid(task_tgid(current));
	mmgrab(current->mm);
	f->mm = current->mm;
	file->private_data = f;
	return stream_open(inode, file);
}

/*
 * Gives back every pin of f, once: at the owner's mm teardown or at close,
 * whichever comes first; the other finds nothing left.
 */
static void dao_file_unpin_all(struct dao_file *f)
{
	u64 bytes, regions;

	dao_unpin_all(f, &bytes, &regions);
	if (regions)
		dao_nl_released(f->proc, bytes, regions);
}

/*
 * The owner's address space is going away (exit, exec): its pins can
 * never be used again, and its RLIMIT_MEMLOCK charge must go with it, so
 * release them now, as in-tree users of long-term pins do. Whoever holds
 * the fd still sees it, orphaned, until it is closed.
 */
static void dao_mn_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct dao_file *f = container_of(mn, struct dao_file, mn);

	mutex_lock(&f->teardown);
	if (!f->closed && !f->orphaned) {
		dao_file_unpin_all(f);
		dao_acct_orphan(f);
	}
	mutex_unlock(&f->teardown);
}

/* After close, once no release callback can still be running. */
static void dao_mn_free(struct mmu_notifier *mn)
{
	struct dao_file *f = container_of(mn, struct dao_file, mn);

	xa_destroy(&f->regions);
	mutex_destroy(&f->teardown);
	mmdrop(f->mm);
	put_pid(f->owner);
	kfree(f);
}

static const struct mmu_notifier_ops dao_mn_ops = {
	.release = dao_mn_release,
	.free_notifier = dao_mn_free,
};

/*
 * Runs when the last reference goes, possibly in another process (one that
 * received the fd) or in the exit path after the opener's mm is gone:
 * everything it needs hangs off f.
 */
static int dao_release(struct inode *inode, struct file *file)
{
	struct dao_file *f = file->private_data;
	bool orphaned;

	/*
	 * A release callback that runs from here on finds f closed and does
	 * nothing; one already running is waited for by the lock.
	 */
	mutex_lock(&f->teardown);
	f->closed = true;
	orphaned = f->orphaned;
	dao_file_unpin_all(f);
	mutex_unlock(&f->teardown);
	dao_proc_put(f->proc, orphaned);
	/*
	 * The last touch of f: dao_mn_free() frees it (and drops f->mm) one
	 * SRCU grace period later, which nothing here would wait for, so the
	 * put must come after the teardown, never before it.
	 */
	mmu_notifier_put(&f->mn);
	return 0;
}

/*
 * Copies the caller's struct into k (ksize bytes, zeroed past what the
 * caller sent). Returns the caller's argsz or a negative errno.
 */
static long dao_copy_in(void *k, size_t ksize, size_t minsize, void __user *uarg)
{
	u32 argsz;
	int ret;

	if (get_user(argsz, (u32 __user *)uarg))
		return -EFAULT;
	if (argsz < minsize)
		return -EINVAL;
	if (argsz > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(k, ksize, uarg, argsz);
	if (ret)
		return ret;
	return argsz;
}

static long dao_copy_out(void __user *uarg, const void *k, size_t ksize, u32 argsz)
{
	return copy_to_user(uarg, k, min_t(size_t, ksize, argsz)) ? -EFAULT : 0;
}

static long dao_ioc_version(void __user *uarg)
{
	struct dao_ioc_version v;
	long argsz;

	argsz = dao_copy_in(&v, sizeof(v), DAO_IOC_VERSION_SIZE_V1, uarg);
	if (argsz < 0)
		return argsz;
	if (v.flags || v.reserved)
		return -EINVAL;
	v.abi_version = DAO_IOC_ABI_VERSION;
	v.page_size = PAGE_SIZE;
	v.features = DAO_FEAT_ALL;
	return dao_copy_out(uarg, &v, sizeof(v), argsz);
}

static long dao_ioc_pin(struct dao_file *f, void __user *uarg)
{
	struct dao_region *r;
	struct dao_ioc_pin p;
	long argsz, ret;

	argsz = dao_copy_in(&p, sizeof(p), DAO_IOC_PIN_SIZE_V1, uarg);
	if (argsz < 0)
		return argsz;
	if (p.flags & ~DAO_PIN_FLAGS_ALL)
		return -EINVAL;
	ret = dao_pin(f, p.addr, p.length, p.flags & DAO_PIN_WRITE, &p.handle, &r);
	if (ret)
		return ret;
	p.charged = p.length;
	/*
	 * A caller that cannot learn its handle could never unpin: the pin
	 * commits only once the result is out, and until then no UNPIN (a
	 * sibling thread guessing the handle) can see it.
	 */
	ret = dao_copy_out(uarg, &p, sizeof(p), argsz);
	if (ret)
		dao_pin_abort(f, p.handle, r);
	else
		dao_pin_commit(f, p.handle, r);
	return ret;
}

static long dao_ioc_unpin(struct dao_file *f, void __user *uarg)
{
	struct dao_ioc_unpin u;
	long argsz;

	argsz = dao_copy_in(&u, sizeof(u), DAO_IOC_UNPIN_SIZE_V1, uarg);
	if (argsz < 0)
		return argsz;
	if (u.flags)
		return -EINVAL;
	return dao_unpin(f, u.handle);
}

static long dao_ioc_stats(struct dao_file *f, void __user *uarg)
{
	struct dao_ioc_stats s;
	struct dao_count c;
	long argsz;

	argsz = dao_copy_in(&s, sizeof(s), DAO_IOC_STATS_SIZE_V1, uarg);
	if (argsz < 0)
		return argsz;
	if (s.flags)
		return -EINVAL;
	dao_acct_file_stats(f, &c);
	s.pinned_bytes = c.pinned;
	s.regions = c.regions;
	s.peak_bytes = c.peak;
	s.refused = c.refused;
	return dao_copy_out(uarg, &s, sizeof(s), argsz);
}

static long dao_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct dao_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;

	/*
	 * A forked child, an exec'd image or a receiver of the fd would pin
	 * memory charged to someone else's address space.
	 */
	if (task_tgid(current) != f->owner || current->mm != f->mm)
		return -EACCES;

	switch (cmd) {
	case DAO_IOC_VERSION:
		return dao_ioc_version(uarg);
	case DAO_IOC_PIN:
		return dao_ioc_pin(f, uarg);
	case DAO_IOC_UNPIN:
		return dao_ioc_unpin(f, uarg);
	case DAO_IOC_STATS:
		return dao_ioc_stats(f, uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations dao_fops = {
	.owner = THIS_MODULE,
	.open = dao_open,
	.release = dao_release,
	.unlocked_ioctl = dao_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	/*
	 * No .llseek: stream_open() clears FMODE_LSEEK, so lseek() fails with
	 * ESPIPE on every kernel (6.12 removed no_llseek, which did the same).
	 */
};

static struct miscdevice dao_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = DAO_DEVICE_NAME,
	.fops = &dao_fops,
	/* udev gives the node to group dao; root alone until it does. */
	.mode = 0600,
};

int dao_dev_register(void)
{
	return misc_register(&dao_misc);
}

void dao_dev_unregister(void)
{
	misc_deregister(&dao_misc);
}
