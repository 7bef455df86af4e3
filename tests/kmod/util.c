// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "util.h"

int dev_open(void)
{
	return open(DAO_DEVICE_PATH, O_RDWR | O_CLOEXEC);
}

int dev_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

int dev_pin(int fd, void *addr, uint64_t len, uint32_t flags, uint64_t *handle)
{
	struct dao_ioc_pin p = {
		.argsz = sizeof(p),
		.flags = flags,
		.addr = (uintptr_t)addr,
		.length = len,
	};
	int ret = dev_ioctl(fd, DAO_IOC_PIN, &p);

	if (!ret && p.charged != len)
		return -EPROTO;
	if (handle)
		*handle = ret ? 0 : p.handle;
	return ret;
}

int dev_unpin(int fd, uint64_t handle)
{
	struct dao_ioc_unpin u = { .argsz = sizeof(u), .handle = handle };

	return dev_ioctl(fd, DAO_IOC_UNPIN, &u);
}

int dev_stats(int fd, struct dao_ioc_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->argsz = sizeof(*s);
	return dev_ioctl(fd, DAO_IOC_STATS, s);
}

size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

void *map_pages(size_t len, int prot)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0x5a, len);
	if (prot != (PROT_READ | PROT_WRITE) && mprotect(p, len, prot)) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

static long long read_key(const char *path, const char *key, char sep)
{
	char line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == sep) {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

long vmpin_kb(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return (long)read_key(path, "VmPin", ':');
}

long long vmstat_get(const char *name)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);

	/* The counters live per CPU until folded; without the fold they lag. */
	if (fd < 0)
		return -1;
	if (write(fd, "1", 1) != 1) {
		close(fd);
		return -1;
	}
	close(fd);
	return read_key("/proc/vmstat", name, ' ');
}

int file_write(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int cg_job_setup(char *dir, size_t cap, const char *name)
{
	char path[192];
	int ret;

	snprintf(dir, cap, "/tmp/%s-%d", name, getpid());
	if (mkdir(dir, 0700) || mount("none", dir, "cgroup2", 0, NULL))
		return -errno;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	ret = file_write(path, "+memory");
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/job", dir);
	return mkdir(path, 0700) ? -errno : 0;
}

void cg_job_teardown(const char *dir)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/job", dir);
	rmdir(path);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

int param_set(const char *name, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/dao/parameters/%s", name);
	return file_write(path, value);
}

long long param_get(const char *name)
{
	char path[128], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/module/dao/parameters/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (buf[0] == 'Y')
		return 1;
	if (buf[0] == 'N')
		return 0;
	return strtoll(buf, NULL, 10);
}

int limit_set_mb(unsigned long long mb)
{
	char v[32];

	snprintf(v, sizeof(v), "%llu", mb);
	return param_set("max_pinned_mb", v);
}

int become_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -errno;
	return 0;
}

/* ------------------------------------------------------------ netlink */

static int dao_family = -1;

struct nl_wait {
	int done;
	int error;
	void (*on_msg)(struct nlattr **tb, void *arg);
	void *arg;
	int cmd;
};

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nl_wait *w = arg;
	struct nlattr *tb[DAO_NL_A_MAX + 1];
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, DAO_NL_A_MAX, NULL))
		return NL_SKIP;
	w->cmd = gh->cmd;
	if (w->on_msg)
		w->on_msg(tb, w->arg);
	return NL_OK;
}

static int on_seq_any(struct nl_msg *msg, void *arg)
{
	return NL_OK;
}

static int on_finish(struct nl_msg *msg, void *arg)
{
	((struct nl_wait *)arg)->done = 1;
	return NL_STOP;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *err, void *arg)
{
	struct nl_wait *w = arg;

	w->error = err->error;
	w->done = 1;
	return NL_STOP;
}

/* Sends msg (consumed) and receives until the ack, the dump's end or an error. */
static int nl_transact(struct nl_sock *sk, struct nl_msg *msg, struct nl_wait *w)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, w);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, w);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_finish, w);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, w);
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	while (ret >= 0 && !w->done)
		ret = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	if (ret < 0 && !w->done)
		return -EIO;
	return w->error;
}

static struct nl_msg *nl_new(int cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, dao_family, 0,
				flags | NLM_F_ACK, cmd, DAO_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int dnl_open(struct nl_sock **out)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk)
		return -ENOMEM;
	if (genl_connect(sk)) {
		nl_socket_free(sk);
		return -EIO;
	}
	dao_family = genl_ctrl_resolve(sk, DAO_GENL_NAME);
	if (dao_family < 0) {
		nl_socket_free(sk);
		return -ENOENT;
	}
	*out = sk;
	return 0;
}

int dnl_family(void)
{
	return dao_family;
}

void dnl_close(struct nl_sock *sk)
{
	nl_socket_free(sk);
}

static uint64_t get64(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u64(tb[a]) : UINT64_MAX;
}

static uint32_t get32(struct nlattr **tb, int a)
{
	return tb[a] ? nla_get_u32(tb[a]) : UINT32_MAX;
}

static void node_from(struct nlattr **tb, void *arg)
{
	struct node_state *st = arg;

	st->limit = get64(tb, DAO_NL_A_NODE_LIMIT);
	st->pinned = get64(tb, DAO_NL_A_NODE_PINNED);
	st->peak = get64(tb, DAO_NL_A_NODE_PEAK);
	st->refused = get64(tb, DAO_NL_A_NODE_REFUSED);
	st->procs = get32(tb, DAO_NL_A_NODE_PROCS);
}

int dnl_get_node(struct nl_sock *sk, struct node_state *st)
{
	struct nl_wait w = { .on_msg = node_from, .arg = st };
	struct nl_msg *msg = nl_new(DAO_NL_CMD_GET_NODE, 0);

	return msg ? nl_transact(sk, msg, &w) : -ENOMEM;
}

struct dump_acc {
	struct proc_state *out;
	int max, n;
};

static void proc_from(struct nlattr **tb, void *arg)
{
	struct dump_acc *d = arg;
	struct proc_state *p;

	if (d->n++ >= d->max)
		return;
	p = &d->out[d->n - 1];
	memset(p, 0, sizeof(*p));
	p->pid = get32(tb, DAO_NL_A_PROC_PID);
	p->uid = get32(tb, DAO_NL_A_PROC_UID);
	if (tb[DAO_NL_A_PROC_COMM])
		snprintf(p->comm, sizeof(p->comm), "%s", nla_get_string(tb[DAO_NL_A_PROC_COMM]));
	p->pinned = get64(tb, DAO_NL_A_PROC_PINNED);
	p->regions = get64(tb, DAO_NL_A_PROC_REGIONS);
	p->peak = get64(tb, DAO_NL_A_PROC_PEAK);
	p->refused = get64(tb, DAO_NL_A_PROC_REFUSED);
	p->orphaned = tb[DAO_NL_A_PROC_ORPHANED] != NULL;
}

int dnl_dump_procs(struct nl_sock *sk, struct proc_state *out, int max, int *n)
{
	struct dump_acc d = { .out = out, .max = max };
	struct nl_wait w = { .on_msg = proc_from, .arg = &d };
	struct nl_msg *msg = nl_new(DAO_NL_CMD_GET_PROC, NLM_F_DUMP);
	int ret;

	if (!msg)
		return -ENOMEM;
	ret = nl_transact(sk, msg, &w);
	*n = d.n;
	return ret;
}

int dnl_set_limit(struct nl_sock *sk, uint64_t bytes)
{
	struct nl_wait w = { 0 };
	struct nl_msg *msg = nl_new(DAO_NL_CMD_SET_LIMIT, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u64(msg, DAO_NL_A_NODE_LIMIT, bytes)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return nl_transact(sk, msg, &w);
}

int dnl_send_raw(struct nl_sock *sk, int cmd, int attr, const void *data, int len)
{
	struct nl_wait w = { 0 };
	struct nl_msg *msg = nl_new(cmd, 0);

	if (!msg)
		return -ENOMEM;
	if (attr && nla_put(msg, attr, len, data)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return nl_transact(sk, msg, &w);
}

int dnl_events_open(struct nl_sock **out)
{
	struct nl_sock *sk;
	int grp, ret = dnl_open(&sk);

	if (ret)
		return ret;
	grp = genl_ctrl_resolve_grp(sk, DAO_GENL_NAME, DAO_GENL_MCGRP_EVENTS);
	if (grp < 0 || nl_socket_add_membership(sk, grp)) {
		nl_socket_free(sk);
		return -ENOENT;
	}
	nl_socket_disable_seq_check(sk);
	nl_socket_set_nonblocking(sk);
	*out = sk;
	return 0;
}

static void event_from(struct nlattr **tb, void *arg)
{
	struct dao_event *ev = arg;

	ev->pid = get32(tb, DAO_NL_A_PROC_PID);
	ev->bytes = get64(tb, DAO_NL_A_EVENT_BYTES);
	ev->regions = tb[DAO_NL_A_EVENT_REGIONS] ? nla_get_u64(tb[DAO_NL_A_EVENT_REGIONS]) : 0;
	ev->node_pinned = get64(tb, DAO_NL_A_NODE_PINNED);
	ev->node_limit = get64(tb, DAO_NL_A_NODE_LIMIT);
}

int dnl_event_next(struct nl_sock *sk, struct dao_event *ev)
{
	struct nl_wait w = { .on_msg = event_from, .arg = ev, .cmd = -1 };
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &w);
	/* Events carry no sequence number of ours. */
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, on_seq_any, NULL);
	ret = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	if (w.cmd < 0)
		return ret == -NLE_AGAIN || ret == 0 ? -EAGAIN : -EIO;
	ev->cmd = w.cmd;
	return 0;
}
