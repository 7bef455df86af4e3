// SPDX-License-Identifier: GPL-2.0
/*
 * dao_netlink.c - the generic netlink family "dao": who pins how much, the
 * node limit, and events when a pin is refused or a file's pins are
 * released. Documentation/netlink.md and Documentation/dao.yaml describe it.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <net/genetlink.h>

#include <linux/dao.h>

#include "dao_priv.h"

/* Index of "events" in dao_nl_mcgrps. */
#define DAO_NL_GRP_EVENTS 0

static struct genl_family dao_nl_family;

/*
 * Every attribute has a policy, so strict validation refuses a request that
 * carries one of the wrong type; only NODE_LIMIT is ever read from a request.
 */
static const struct nla_policy dao_nl_policy[DAO_NL_A_MAX + 1] = {
	[DAO_NL_A_PAD] = { .type = NLA_UNSPEC },
	[DAO_NL_A_NODE_LIMIT] = { .type = NLA_U64 },
	[DAO_NL_A_NODE_PINNED] = { .type = NLA_U64 },
	[DAO_NL_A_NODE_PEAK] = { .type = NLA_U64 },
	[DAO_NL_A_NODE_PROCS] = { .type = NLA_U32 },
	[DAO_NL_A_NODE_REFUSED] = { .type = NLA_U64 },
	[DAO_NL_A_PROC_PID] = { .type = NLA_U32 },
	[DAO_NL_A_PROC_COMM] = { .type = NLA_NUL_STRING, .len = TASK_COMM_LEN - 1 },
	[DAO_NL_A_PROC_UID] = { .type = NLA_U32 },
	[DAO_NL_A_PROC_PINNED] = { .type = NLA_U64 },
	[DAO_NL_A_PROC_REGIONS] = { .type = NLA_U64 },
	[DAO_NL_A_PROC_PEAK] = { .type = NLA_U64 },
	[DAO_NL_A_PROC_REFUSED] = { .type = NLA_U64 },
	[DAO_NL_A_EVENT_BYTES] = { .type = NLA_U64 },
	[DAO_NL_A_EVENT_REGIONS] = { .type = NLA_U64 },
	[DAO_NL_A_PROC_ORPHANED] = { .type = NLA_FLAG },
};


static int dao_nl_put_u64(struct sk_buff *skb, int attr, u64 value)
{
	return nla_put_u64_64bit(skb, attr, value, DAO_NL_A_PAD);
}

static int dao_nl_fill_node(struct sk_buff *skb)
{
	struct dao_count c;
	u32 procs;

	dao_acct_node(&c, &procs);
	if (dao_nl_put_u64(skb, DAO_NL_A_NODE_LIMIT, dao_acct_limit_bytes()) ||
	    dao_nl_put_u64(skb, DAO_NL_A_NODE_PINNED, c.pinned) ||
	    dao_nl_put_u64(skb, DAO_NL_A_NODE_PEAK, c.peak) ||
	    nla_put_u32(skb, DAO_NL_A_NODE_PROCS, procs) ||
	    dao_nl_put_u64(skb, DAO_NL_A_NODE_REFUSED, c.refused))
		return -EMSGSIZE;
	return 0;
}

static int dao_nl_get_node(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &dao_nl_family, 0, DAO_NL_CMD_GET_NODE);
	if (!hdr || dao_nl_fill_node(msg)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * The process as seen from the namespaces of the one who asks. A process
 * whose every file outlived its owner's mm is shown with pid 0 and the
 * ORPHANED flag: its pid may already belong to someone else.
 */
static int dao_nl_put_proc(struct sk_buff *skb, const struct dao_proc *p, pid_t pid,
			   struct user_namespace *ns)
{
	bool orphaned = p->files && p->orphans == p->files;

	if (orphaned && nla_put_flag(skb, DAO_NL_A_PROC_ORPHANED))
		return -EMSGSIZE;
	if (nla_put_u32(skb, DAO_NL_A_PROC_PID, orphaned ? 0 : pid) ||
	    nla_put_string(skb, DAO_NL_A_PROC_COMM, p->comm) ||
	    nla_put_u32(skb, DAO_NL_A_PROC_UID, from_kuid_munged(ns, p->uid)))
		return -EMSGSIZE;
	return 0;
}

struct dao_nl_dump {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	struct pid_namespace *pid_ns;
	struct user_namespace *user_ns;
	bool admin;     /* sees every process of its pid namespace */
	kuid_t uid;     /* else only the processes of this uid */
};

/* Who may watch all jobs of the node: CAP_SYS_ADMIN in the initial user namespace. */
static bool dao_nl_admin(const struct sk_buff *skb)
{
	return netlink_capable(skb, CAP_SYS_ADMIN);
}

static int dao_nl_dump_one(const struct dao_proc *p, void *arg)
{
	struct dao_nl_dump *d = arg;
	pid_t pid = pid_nr_ns(p->tgid, d->pid_ns);
	void *hdr;

	/* A process outside the asker's pid namespace is not the asker's business. */
	if (!pid)
		return 0;
	/* Nor, unless the asker is an administrator, is another user's. */
	if (!d->admin && !uid_eq(p->uid, d->uid))
		return 0;
	hdr = genlmsg_put(d->skb, NETLINK_CB(d->cb->skb).portid, d->cb->nlh->nlmsg_seq,
			  &dao_nl_family, NLM_F_MULTI, DAO_NL_CMD_GET_PROC);
	if (!hdr)
		return -EMSGSIZE;
	genl_dump_check_consistent(d->cb, hdr);
	if (dao_nl_put_proc(d->skb, p, pid, d->user_ns) ||
	    dao_nl_put_u64(d->skb, DAO_NL_A_PROC_PINNED, p->count.pinned) ||
	    dao_nl_put_u64(d->skb, DAO_NL_A_PROC_REGIONS, p->count.regions) ||
	    dao_nl_put_u64(d->skb, DAO_NL_A_PROC_PEAK, p->count.peak) ||
	    dao_nl_put_u64(d->skb, DAO_NL_A_PROC_REFUSED, p->count.refused)) {
		genlmsg_cancel(d->skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(d->skb, hdr);
	return 0;
}

static int dao_nl_get_proc(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dao_nl_dump d = {
		.skb = skb,
		.cb = cb,
		.pid_ns = task_active_pid_ns(current),
		.user_ns = current_user_ns(),
		.admin = dao_nl_admin(cb->skb),
		.uid = current_uid(),
	};

	/*
	 * cb->seq gets the list's generation before the first message of this
	 * part is checked, so the part that follows a change (and may have
	 * skipped a process) is the one flagged NLM_F_DUMP_INTR.
	 */
	dao_acct_walk_procs(&cb->args[0], &cb->seq, dao_nl_dump_one, &d);
	return skb->len;
}

static int dao_nl_set_limit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[DAO_NL_A_NODE_LIMIT];
	u64 bytes;

	/*
	 * A node-wide memory limit: CAP_SYS_ADMIN or CAP_SYS_RESOURCE in the
	 * initial user namespace, not CAP_NET_ADMIN, which a container's root
	 * may hold over its own network namespace.
	 */
	if (!netlink_capable(skb, CAP_SYS_ADMIN) && !netlink_capable(skb, CAP_SYS_RESOURCE)) {
		NL_SET_ERR_MSG(info->extack, "needs CAP_SYS_ADMIN or CAP_SYS_RESOURCE");
		return -EPERM;
	}
	if (!attr) {
		NL_SET_ERR_MSG(info->extack, "DAO_NL_A_NODE_LIMIT is required");
		return -EINVAL;
	}
	bytes = nla_get_u64(attr);
	if (bytes & ((1ULL << 20) - 1)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "the limit is a whole number of MiB");
		return -EINVAL;
	}
	if (dao_acct_set_limit_mb(bytes >> 20)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "limit out of range");
		return -ERANGE;
	}
	return 0;
}

static const struct genl_small_ops dao_nl_ops[] = {
	{
		.cmd = DAO_NL_CMD_GET_NODE,
		.doit = dao_nl_get_node,
	},
	{
		.cmd = DAO_NL_CMD_GET_PROC,
		.dumpit = dao_nl_get_proc,
	},
	{
		.cmd = DAO_NL_CMD_SET_LIMIT,
		/* Checks its capabilities itself (dao_nl_set_limit). */
		.doit = dao_nl_set_limit,
	},
};

/*
 * Events name every job of the node: for administrators only, that is
 * CAP_SYS_ADMIN over the network namespace, and they go to the initial
 * one only, whose owner is the initial user namespace.
 */
static const struct genl_multicast_group dao_nl_mcgrps[] = {
#ifdef DAO_HAVE_GENL_MCAST_CAP_SYS_ADMIN
	[DAO_NL_GRP_EVENTS] = { .name = DAO_GENL_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_SYS_ADMIN },
#else
	[DAO_NL_GRP_EVENTS] = { .name = DAO_GENL_MCGRP_EVENTS },
#endif
};

static struct genl_family dao_nl_family __ro_after_init = {
	.name = DAO_GENL_NAME,
	.version = DAO_GENL_VERSION,
	.maxattr = DAO_NL_A_MAX,
	.policy = dao_nl_policy,
	.netnsok = true,
	.module = THIS_MODULE,
	.small_ops = dao_nl_ops,
	.n_small_ops = ARRAY_SIZE(dao_nl_ops),
#ifdef DAO_HAVE_GENL_RESV_START_OP
	.resv_start_op = DAO_NL_CMD_SET_LIMIT + 1,
#endif
	.mcgrps = dao_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(dao_nl_mcgrps),
};

/*
 * Events go to listeners in the initial network namespace with pids of the
 * initial pid namespace: they are for the node's administrator.
 */
static void dao_nl_event(u8 cmd, const struct dao_proc *p, u64 bytes, u64 regions)
{
	struct sk_buff *msg;
	void *hdr;

	/*
	 * A kernel that cannot keep the unprivileged out of the group gets
	 * no events at all rather than events for everyone.
	 */
	if (!IS_ENABLED(DAO_HAVE_GENL_MCAST_CAP_SYS_ADMIN))
		return;
	if (!genl_has_listeners(&dao_nl_family, &init_net, DAO_NL_GRP_EVENTS))
		return;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &dao_nl_family, 0, cmd);
	if (!hdr)
		goto fail;
	if (dao_nl_put_proc(msg, p, pid_nr(p->tgid), &init_user_ns) ||
	    dao_nl_put_u64(msg, DAO_NL_A_EVENT_BYTES, bytes) ||
	    (regions && dao_nl_put_u64(msg, DAO_NL_A_EVENT_REGIONS, regions)) ||
	    dao_nl_fill_node(msg))
		goto fail;
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&dao_nl_family, msg, 0, DAO_NL_GRP_EVENTS, GFP_KERNEL);
	return;
fail:
	nlmsg_free(msg);
}

/* Called for the refusals dao_acct_reserve() picked: a log2 back-off per process. */
void dao_nl_pin_refused(const struct dao_proc *proc, u64 bytes)
{
	dao_nl_event(DAO_NL_CMD_PIN_REFUSED, proc, bytes, 0);
}

void dao_nl_released(const struct dao_proc *proc, u64 bytes, u64 regions)
{
	dao_nl_event(DAO_NL_CMD_PROC_RELEASE, proc, bytes, regions);
}

int dao_nl_register(void)
{
	return genl_register_family(&dao_nl_family);
}

void dao_nl_unregister(void)
{
	genl_unregister_family(&dao_nl_family);
}
