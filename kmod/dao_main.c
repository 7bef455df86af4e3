// SPDX-License-Identifier: GPL-2.0
/*
 * dao.ko - the node's accountant for pinned host staging memory.
 *
 * Jobs pin their GPU staging buffers through /dev/dao; the module charges
 * each pin to a node-wide limit, to the process and to RLIMIT_MEMLOCK, and
 * tells administrators over generic netlink who pins how much.
 */
#include <linux/capability.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include <linux/mmu_notifier.h>

#include "dao_priv.h"

static int dao_param_set_limit(const char *val, const struct kernel_param *kp)
{
	unsigned long mb;
	int ret;

	/* As for DAO_NL_CMD_SET_LIMIT: a node setting, not root in a container's. */
	if (!capable(CAP_SYS_ADMIN) && !capable(CAP_SYS_RESOURCE))
		return -EPERM;
	ret = kstrtoul(val, 0, &mb);
	if (ret)
		return ret;
	return dao_acct_set_limit_mb(mb);
}

static int dao_param_get_limit(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lu\n", dao_acct_limit_mb());
}

static const struct kernel_param_ops dao_limit_ops = {
	.set = dao_param_set_limit,
	.get = dao_param_get_limit,
};

/* Readable by all, so users can see why a pin was refused. */
module_param_cb(max_pinned_mb, &dao_limit_ops, NULL, 0644);
MODULE_PARM_DESC(max_pinned_mb,
		 "Most MiB all processes together may pin through /dev/dao (default: half of RAM)");

static int __init dao_init(void)
{
	int ret;

	ret = dao_acct_init();
	if (ret)
		return ret;
	ret = dao_nl_register();
	if (ret)
		return ret;
	ret = dao_dev_register();
	if (ret)
		dao_nl_unregister();
	return ret;
}

static void __exit dao_exit(void)
{
	dao_dev_unregister();
	dao_nl_unregister();
	/* Files closed last may still wait for dao_mn_free(), our code. */
	mmu_notifier_synchronize();
}

module_init(dao_init);
module_exit(dao_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("dao developers");
MODULE_DESCRIPTION("Node-wide accounting of pinned GPU staging memory");
MODULE_VERSION("0.1.0");
