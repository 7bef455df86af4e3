/* SPDX-License-Identifier: GPL-2.0 */
/*
 * util.h - what the dao.ko tests share: ioctl wrappers that return -errno,
 * readers of the kernel's own counters (VmPin, /proc/vmstat, module
 * parameters) and a small client of the "dao" netlink family.
 */
#ifndef DAO_KTEST_UTIL_H
#define DAO_KTEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/dao.h>

#define MiB (1024ULL * 1024ULL)

int dev_open(void);
/* ioctl(fd, cmd, arg), 0 or -errno. */
int dev_ioctl(int fd, unsigned long cmd, void *arg);
int dev_pin(int fd, void *addr, uint64_t len, uint32_t flags, uint64_t *handle);
int dev_unpin(int fd, uint64_t handle);
int dev_stats(int fd, struct dao_ioc_stats *s);

/* Anonymous private mapping, touched so every page exists; NULL on failure. */
void *map_pages(size_t len, int prot);
size_t page_size(void);

/* VmPin of a process in KiB, -1 when unreadable. */
long vmpin_kb(pid_t pid);
/* A counter of /proc/vmstat, -1 when absent. */
long long vmstat_get(const char *name);

/* /sys/module/dao/parameters/NAME */
/* Writes value to the file at path (sysfs, debugfs, cgroupfs): 0 or -errno. */
int file_write(const char *path, const char *value);
/* A cgroup2 hierarchy of the test's own, mounted at /tmp/NAME-PID (its path
 * into dir), with the memory controller on and one child, "job": 0 or
 * -errno. cg_job_teardown removes what setup made, also after a failure. */
int cg_job_setup(char *dir, size_t cap, const char *name);
void cg_job_teardown(const char *dir);
int param_set(const char *name, const char *value);
long long param_get(const char *name);
int limit_set_mb(unsigned long long mb);

/* Drops to uid/gid 65534 with no capabilities; 0 or -errno. */
int become_nobody(void);

/* The netlink family. Every function returns 0 or -errno. */
struct nl_sock;
struct node_state {
	uint64_t limit, pinned, peak, refused;
	uint32_t procs;
};
struct proc_state {
	uint32_t pid, uid;
	char comm[16];
	uint64_t pinned, regions, peak, refused;
	int orphaned; /* DAO_NL_A_PROC_ORPHANED present */
};
struct dao_event {
	int cmd;
	uint32_t pid;
	uint64_t bytes, regions, node_pinned, node_limit;
};

int dnl_open(struct nl_sock **sk);
/* The family's id, after a successful dnl_open. */
int dnl_family(void);
void dnl_close(struct nl_sock *sk);
int dnl_get_node(struct nl_sock *sk, struct node_state *st);
/* Fills up to max entries, *n gets how many processes there were. */
int dnl_dump_procs(struct nl_sock *sk, struct proc_state *out, int max, int *n);
int dnl_set_limit(struct nl_sock *sk, uint64_t bytes);
/* Sends cmd with one attribute of the given type and payload; for bad input. */
int dnl_send_raw(struct nl_sock *sk, int cmd, int attr, const void *data, int len);
/* A socket that listens to the "events" group, not blocking. */
int dnl_events_open(struct nl_sock **sk);
/* The next queued event, -EAGAIN when there is none. */
int dnl_event_next(struct nl_sock *sk, struct dao_event *ev);

#endif
