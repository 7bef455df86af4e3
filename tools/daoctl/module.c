/* SPDX-License-Identifier: MIT */
/*
 * module.c - the kernel's side: the generic netlink family "dao"
 * (Documentation/netlink.md). Without the family every read command still
 * works from the segments; node_query then says why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dao.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "daoctl.h"

static struct nla_policy reply_policy[DAO_NL_A_MAX + 1] = {
	[DAO_NL_A_NODE_LIMIT] = { .type = NLA_U64 },
	[DAO_NL_A_NODE_PINNED] = { .type = NLA_U64 },
	[DAO_NL_A_NODE_PEAK] = { .type = NLA_U64 },
	[DAO_NL_A_NODE_PROCS] = { .type = NLA_U32 },
	[DAO_NL_A_NODE_REFUSED] = { .type = NLA_U64 },
	[DAO_NL_A_PROC_PID] = { .type = NLA_U32 },
	[DAO_NL_A_PROC_COMM] = { .type = NLA_STRING },
	[DAO_NL_A_PROC_UID] = { .type = NLA_U32 },
	[DAO_NL_A_PROC_PINNED] = { .type = NLA_U64 },
	[DAO_NL_A_PROC_REGIONS] = { .type = NLA_U64 },
	[DAO_NL_A_PROC_PEAK] = { .type = NLA_U64 },
	[DAO_NL_A_PROC_REFUSED] = { .type = NLA_U64 },
};

static uint64_t get_u64(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u64(tb[a]) : 0;
}

static uint32_t get_u32(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u32(tb[a]) : 0;
}

static int parse(struct nl_msg *msg, struct nlattr **tb)
{
	return genlmsg_parse(nlmsg_hdr(msg), 0, tb, DAO_NL_A_MAX, reply_policy);
}

static int on_node(struct nl_msg *msg, void *arg)
{
	struct node *n = arg;
	struct nlattr *tb[DAO_NL_A_MAX + 1];

	if (parse(msg, tb) < 0)
		return NL_SKIP;
	n->limit = get_u64(tb, DAO_NL_A_NODE_LIMIT);
	n->pinned = get_u64(tb, DAO_NL_A_NODE_PINNED);
	n->peak = get_u64(tb, DAO_NL_A_NODE_PEAK);
	n->procs = get_u32(tb, DAO_NL_A_NODE_PROCS);
	n->refused = get_u64(tb, DAO_NL_A_NODE_REFUSED);
	return NL_OK;
}

static int on_proc(struct nl_msg *msg, void *arg)
{
	struct node *n = arg;
	struct nlattr *tb[DAO_NL_A_MAX + 1];
	struct kproc *k;

	if (parse(msg, tb) < 0 || !tb[DAO_NL_A_PROC_PID])
		return NL_SKIP;
	k = realloc(n->k, (n->nk + 1) * sizeof(*k));
	if (!k)
		return NL_STOP;
	n->k = k;
	k = &k[n->nk++];
	memset(k, 0, sizeof(*k));
	k->pid = get_u32(tb, DAO_NL_A_PROC_PID);
	k->uid = get_u32(tb, DAO_NL_A_PROC_UID);
	if (tb[DAO_NL_A_PROC_COMM])
		snprintf(k->comm, sizeof(k->comm), "%s", nla_get_string(tb[DAO_NL_A_PROC_COMM]));
	k->pinned = get_u64(tb, DAO_NL_A_PROC_PINNED);
	k->regions = get_u64(tb, DAO_NL_A_PROC_REGIONS);
	k->peak = get_u64(tb, DAO_NL_A_PROC_PEAK);
	k->refused = get_u64(tb, DAO_NL_A_PROC_REFUSED);
	return NL_OK;
}

static struct nl_sock *connect_family(int *family, char *err, size_t errlen)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (genl_connect(sk) < 0) {
		snprintf(err, errlen, "cannot open a generic netlink socket");
		nl_socket_free(sk);
		return NULL;
	}
	*family = genl_ctrl_resolve(sk, DAO_GENL_NAME);
	if (*family < 0) {
		snprintf(err, errlen, "not loaded");
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

static int request(struct nl_sock *sk, int family, uint8_t cmd, int flags,
		   nl_recvmsg_msg_cb_t cb, void *arg)
{
	struct nl_msg *msg = nlmsg_alloc();
	int rc;

	if (!msg)
		return -NLE_NOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd,
			 DAO_GENL_VERSION)) {
		nlmsg_free(msg);
		return -NLE_NOMEM;
	}
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, cb, arg);
	rc = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (rc < 0)
		return rc;
	return nl_recvmsgs_default(sk);
}

static void read_version(struct node *n, struct nl_sock *sk)
{
	static const char *const files[] = { "/sys/module/dao/version",
					     "/sys/module/dao/srcversion" };
	struct nl_cache *cache;

	if (genl_ctrl_alloc_cache(sk, &cache) >= 0) {
		struct genl_family *f = genl_ctrl_search_by_name(cache, DAO_GENL_NAME);

		if (f) {
			n->family_version = (uint32_t)genl_family_get_version(f);
			genl_family_put(f);
		}
		nl_cache_free(cache);
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *fp = fopen(files[i], "r");

		if (!fp)
			continue;
		if (fgets(n->version, sizeof(n->version), fp))
			n->version[strcspn(n->version, "\n")] = 0;
		fclose(fp);
		if (n->version[0])
			break;
	}
}

void node_query(struct node *n)
{
	struct nl_sock *sk;
	int family, rc;

	memset(n, 0, sizeof(*n));
	sk = connect_family(&family, n->error, sizeof(n->error));
	if (!sk)
		return;
	/* Replies answer the gets; an ack would only be one more message. */
	nl_socket_disable_auto_ack(sk);
	rc = request(sk, family, DAO_NL_CMD_GET_NODE, 0, on_node, n);
	if (rc >= 0)
		rc = request(sk, family, DAO_NL_CMD_GET_PROC, NLM_F_DUMP, on_proc, n);
	if (rc < 0) {
		snprintf(n->error, sizeof(n->error), "loaded, but asking it failed: %s",
			 nl_geterror(rc));
	} else {
		n->loaded = true;
		read_version(n, sk);
	}
	nl_socket_free(sk);
}

void node_free(struct node *n)
{
	free(n->k);
	n->k = NULL;
	n->nk = 0;
}

const struct kproc *node_find(const struct node *n, uint32_t pid)
{
	for (uint32_t i = 0; i < n->nk; i++)
		if (n->k[i].pid == pid)
			return &n->k[i];
	return NULL;
}

int node_set_limit(uint64_t bytes, char *err, size_t errlen)
{
	struct nl_sock *sk;
	struct nl_msg *msg;
	int family, rc;

	sk = connect_family(&family, err, errlen);
	if (!sk) {
		if (!strcmp(err, "not loaded"))
			snprintf(err, errlen, "the dao module is not loaded");
		return -ENOENT;
	}
	msg = nlmsg_alloc();
	rc = -NLE_NOMEM;
	if (msg && genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
			       DAO_NL_CMD_SET_LIMIT, DAO_GENL_VERSION) &&
	    nla_put_u64(msg, DAO_NL_A_NODE_LIMIT, bytes) >= 0) {
		rc = nl_send_auto(sk, msg);
		if (rc >= 0)
			rc = nl_wait_for_ack(sk);
	}
	nlmsg_free(msg);
	nl_socket_free(sk);
	if (rc >= 0)
		return 0;
	switch (-rc) {
	case NLE_PERM:
		snprintf(err, errlen, "permission denied: setting the node limit needs CAP_SYS_ADMIN or CAP_SYS_RESOURCE");
		return -EPERM;
	case NLE_RANGE:
		snprintf(err, errlen, "the module refused the limit as out of range");
		return -ERANGE;
	case NLE_INVAL:
		snprintf(err, errlen, "the module refused the limit: it must be a whole number of MiB");
		return -EINVAL;
	default:
		snprintf(err, errlen, "setting the limit failed: %s", nl_geterror(rc));
		return -EIO;
	}
}
