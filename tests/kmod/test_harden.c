// SPDX-License-Identifier: GPL-2.0
/*
 * test_harden.c - the defects of issue 10, one case each: what a hostile
 * local user, a container or a dying owner could do to the module.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "kselftest_harness.h"
#include "child.h"
#include "util.h"

/*
 * The VM is emulated (TCG) on a shared host: touching and pinning 256 MiB
 * or forking a hundred processes may take longer than the harness's 30 s.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

/* ------------------------------------------------ defect 1: copy-out race */

struct race {
	int dev;
	int uffd;
	void *argpage;
	int unpin_ret;
};

/*
 * The PIN's copy_to_user() of its result blocks on the write-protected
 * argument page; meanwhile this thread unpins the handle the PIN will get
 * (handles are predictable: the first is 1), then unmaps the page so the
 * copy fails.
 */
static void *race_handler(void *arg)
{
	struct race *r = arg;
	struct pollfd pfd = { .fd = r->uffd, .events = POLLIN };
	struct uffd_msg msg;
	struct uffdio_range range = { .start = (uintptr_t)r->argpage, .len = page_size() };

	if (poll(&pfd, 1, -1) != 1 || read(r->uffd, &msg, sizeof(msg)) != sizeof(msg))
		return NULL;
	r->unpin_ret = dev_unpin(r->dev, 1);
	munmap(r->argpage, page_size());
	ioctl(r->uffd, UFFDIO_WAKE, &range);
	return NULL;
}

TEST(pin_copyout_race_changes_nothing)
{
	size_t pg = page_size();
	char *buf = map_pages(16 * pg, PROT_READ | PROT_WRITE);
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
	struct uffdio_register reg = { 0 };
	struct uffdio_writeprotect wp = { 0 };
	struct race r = { .unpin_ret = 1 };
	struct dao_ioc_stats s;
	struct dao_ioc_pin *p;
	long vmpin0 = vmpin_kb(getpid());
	pthread_t th;
	int ret;

	ASSERT_NE(NULL, buf);
	r.uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (r.uffd < 0)
		SKIP(return, "no userfaultfd (%s)", strerror(errno));
	ASSERT_EQ(0, ioctl(r.uffd, UFFDIO_API, &api));
	r.dev = dev_open();
	ASSERT_LE(0, r.dev);
	r.argpage = map_pages(pg, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, r.argpage);
	p = r.argpage;
	*p = (struct dao_ioc_pin){ .argsz = sizeof(*p), .flags = DAO_PIN_WRITE,
				   .addr = (uintptr_t)buf, .length = 16 * pg };
	reg.range.start = (uintptr_t)r.argpage;
	reg.range.len = pg;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	ASSERT_EQ(0, ioctl(r.uffd, UFFDIO_REGISTER, &reg));
	wp.range = reg.range;
	wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
	ASSERT_EQ(0, ioctl(r.uffd, UFFDIO_WRITEPROTECT, &wp));

	ASSERT_EQ(0, pthread_create(&th, NULL, race_handler, &r));
	ret = dev_ioctl(r.dev, DAO_IOC_PIN, p);
	pthread_join(th, NULL);
	/* The PIN failed, so its handle never existed for anyone. */
	EXPECT_EQ(-EFAULT, ret);
	EXPECT_EQ(-ENOENT, r.unpin_ret);
	ASSERT_EQ(0, dev_stats(r.dev, &s));
	EXPECT_EQ(0, s.pinned_bytes);
	EXPECT_EQ(0, s.regions);
	EXPECT_EQ(0, s.peak_bytes);
	EXPECT_EQ(vmpin0, vmpin_kb(getpid()));
	close(r.dev);
	close(r.uffd);
	munmap(buf, 16 * pg);
}

/* ------------------------------------------- defect 2: read-only coherence */

/* The page frame behind addr, 0 when not present (root reads PFNs). */
static uint64_t pfn_of(const void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (uintptr_t)addr / page_size() * sizeof(e)) != sizeof(e))
		e = 0;
	close(fd);
	return (e >> 63) & 1 ? e & ((1ULL << 55) - 1) : 0;
}

/*
 * After a read-only pin, the process's writes must land in the pinned
 * pages: the page mapped right after the pin stays mapped after a write.
 */
static void check_ro_pin_coherent(struct __test_metadata *_metadata, char *mem, size_t n)
{
	size_t pg = page_size();
	uint64_t pfn[16], h;
	long long held0 = vmstat_get("nr_foll_pin_acquired") - vmstat_get("nr_foll_pin_released");
	int fd = dev_open();

	ASSERT_LE(0, fd);
	ASSERT_GE(16, n);
	ASSERT_EQ(0, dev_pin(fd, mem, n * pg, 0, &h));
	/*
	 * Each page is really held by a pin (the shared zero page is not
	 * counted); GUP may pin, unpin and retry on the way, so compare
	 * what is held, not what was acquired.
	 */
	EXPECT_EQ(held0 + (long long)n,
		  vmstat_get("nr_foll_pin_acquired") - vmstat_get("nr_foll_pin_released"));
	for (size_t i = 0; i < n; i++)
		pfn[i] = pfn_of(mem + i * pg);
	for (size_t i = 0; i < n; i++)
		mem[i * pg] = (char)(i + 1);
	for (size_t i = 0; i < n; i++) {
		EXPECT_NE(0, pfn[i]);
		EXPECT_EQ(pfn[i], pfn_of(mem + i * pg));
	}
	EXPECT_EQ(0, dev_unpin(fd, h));
	close(fd);
}

TEST(readonly_pin_fresh_anonymous_is_coherent)
{
	size_t pg = page_size();
	/* Never touched: reads would map the shared zero page. */
	char *mem = mmap(NULL, 16 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, mem);
	for (size_t i = 0; i < 16; i++)
		(void)*(volatile char *)(mem + i * pg);
	check_ro_pin_coherent(_metadata, mem, 16);
	munmap(mem, 16 * pg);
}

TEST(readonly_pin_private_file_is_coherent)
{
	size_t pg = page_size();
	char path[64], *mem;
	int fd;

	snprintf(path, sizeof(path), "/tmp/harden-%d", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 8 * pg));
	mem = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, mem);
	/* Read faults map the page cache's pages into the private mapping. */
	for (size_t i = 0; i < 8; i++)
		(void)*(volatile char *)(mem + i * pg);
	check_ro_pin_coherent(_metadata, mem, 8);
	munmap(mem, 8 * pg);
	close(fd);
	unlink(path);
}

/* --------------------------------------------- defect 3: peaks on refusal */

TEST(refused_pin_moves_no_peak)
{
	struct node_state st0, st1;
	struct dao_ioc_stats s;
	struct nl_sock *sk;
	unsigned long long size;
	long long limit0 = param_get("max_pinned_mb");
	void *none;
	int fd;

	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_get_node(sk, &st0));
	/* Above every peak so far, and allowed by the limit. */
	size = (st0.peak / MiB + 32) * MiB;
	ASSERT_EQ(0, limit_set_mb((size + st0.pinned) / MiB + 1));
	none = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, none);
	fd = dev_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EFAULT, dev_pin(fd, none, size, 0, NULL));
	ASSERT_EQ(0, dev_stats(fd, &s));
	EXPECT_EQ(0, s.pinned_bytes);
	EXPECT_EQ(0, s.peak_bytes);
	ASSERT_EQ(0, dnl_get_node(sk, &st1));
	EXPECT_EQ(st0.peak, st1.peak);
	EXPECT_EQ(0, st1.pinned);
	close(fd);
	munmap(none, size);
	ASSERT_EQ(0, limit_set_mb(limit0));
	dnl_close(sk);
}

/* --------------------------------------------- defect 4: NLM_F_DUMP_INTR */

#define DUMP_KIDS 100

static int nl_raw_dump(int *sock)
{
	struct {
		struct nlmsghdr nh;
		struct genlmsghdr gh;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = dnl_family(),
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		.gh = { .cmd = DAO_NL_CMD_GET_PROC, .version = DAO_GENL_VERSION },
	};
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	if (s < 0)
		return -errno;
	if (send(s, &req, sizeof(req), 0) != sizeof(req)) {
		close(s);
		return -errno;
	}
	*sock = s;
	return 0;
}

/* One part of the dump: how many messages, how many flagged, any pid in it. */
static int nl_read_part(int s, int *msgs, int *intr, int *done)
{
	char buf[4096];
	ssize_t len = recv(s, buf, sizeof(buf), 0);
	struct nlmsghdr *nh;

	*msgs = *intr = *done = 0;
	if (len < 0)
		return -errno;
	for (nh = (void *)buf; NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len)) {
		if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR) {
			*done = 1;
			continue;
		}
		(*msgs)++;
		if (nh->nlmsg_flags & NLM_F_DUMP_INTR)
			(*intr)++;
	}
	return 0;
}

TEST(dump_part_after_change_is_flagged)
{
	pid_t kids[DUMP_KIDS];
	int ready[2], hold[2], s = -1, msgs, intr, done;
	struct nl_sock *sk;
	char c;

	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(hold));
	for (int i = 0; i < DUMP_KIDS; i++) {
		kids[i] = fork();
		ASSERT_LE(0, kids[i]);
		if (!kids[i]) {
			int fd = dev_open();

			close(hold[1]);
			c = fd >= 0 ? 'y' : 'n';
			if (write(ready[1], &c, 1) != 1)
				_exit(1);
			/* Holds /dev/dao open until the parent closes hold. */
			if (read(hold[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		ASSERT_EQ(1, read(ready[0], &c, 1));
		ASSERT_EQ('y', c);
	}
	close(hold[0]);

	/* The first part is filled at the request; then the list changes. */
	ASSERT_EQ(0, nl_raw_dump(&s));
	kill(kids[0], SIGKILL);
	ASSERT_EQ(kids[0], waitpid(kids[0], NULL, 0));
	ASSERT_EQ(0, nl_read_part(s, &msgs, &intr, &done));
	EXPECT_LT(0, msgs);
	EXPECT_EQ(0, done);
	/*
	 * The part filled after the change skipped a process: it says so
	 * (genl_dump_check_consistent() flags the first message that sees
	 * the new generation).
	 */
	ASSERT_EQ(0, nl_read_part(s, &msgs, &intr, &done));
	EXPECT_LT(0, msgs);
	EXPECT_EQ(1, intr);
	while (!done)
		ASSERT_EQ(0, nl_read_part(s, &msgs, &intr, &done));
	close(s);
	close(hold[1]);
	for (int i = 1; i < DUMP_KIDS; i++)
		waitpid(kids[i], NULL, 0);
	dnl_close(sk);
}

/* ------------------------------------------------ defects 5 and 6: who */

static int keep_caps(uint64_t caps)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };

	d[0].effective = d[0].permitted = (uint32_t)caps;
	d[1].effective = d[1].permitted = (uint32_t)(caps >> 32);
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

static int container_set_limit(void *arg)
{
	struct nl_sock *sk;
	int fd;

	/* uid 0 in its own network namespace with CAP_NET_ADMIN alone. */
	CHILD_CHECK(unshare(CLONE_NEWNET) == 0);
	CHILD_CHECK(keep_caps(1ULL << CAP_NET_ADMIN) == 0);
	CHILD_CHECK(dnl_open(&sk) == 0);
	CHILD_CHECK(dnl_set_limit(sk, 7 * MiB) == -EPERM);
	dnl_close(sk);
	fd = open("/sys/module/dao/parameters/max_pinned_mb", O_WRONLY);
	CHILD_CHECK(fd < 0 || write(fd, "7", 1) < 0);
	return 0;
}

static int resource_admin_set_limit(void *arg)
{
	struct nl_sock *sk;

	CHILD_CHECK(keep_caps(1ULL << CAP_SYS_RESOURCE) == 0);
	CHILD_CHECK(dnl_open(&sk) == 0);
	CHILD_CHECK(dnl_set_limit(sk, 9 * MiB) == 0);
	dnl_close(sk);
	return 0;
}

TEST(set_limit_needs_init_ns_admin)
{
	long long limit0 = param_get("max_pinned_mb");

	ASSERT_EQ(0, run_child(container_set_limit, NULL));
	EXPECT_EQ(limit0, param_get("max_pinned_mb"));
	ASSERT_EQ(0, run_child(resource_admin_set_limit, NULL));
	EXPECT_EQ(9, param_get("max_pinned_mb"));
	ASSERT_EQ(0, limit_set_mb(limit0));
}

static int nobody_watches(void *arg)
{
	struct proc_state ps[8];
	struct nl_sock *sk, *ev;
	int n;

	CHILD_CHECK(become_nobody() == 0);
	CHILD_CHECK(dnl_open(&sk) == 0);
	/* root's process is not nobody's business... */
	CHILD_CHECK(dnl_dump_procs(sk, ps, 8, &n) == 0);
	CHILD_CHECK(n == 0);
	/* ...nor are root's events. */
	CHILD_CHECK(dnl_events_open(&ev) != 0);
	dnl_close(sk);
	return 0;
}

static int pidns_sees_itself(void *arg)
{
	struct proc_state ps[8];
	struct nl_sock *sk;
	pid_t pid;
	int n, status;

	CHILD_CHECK(unshare(CLONE_NEWPID) == 0);
	pid = fork();
	CHILD_CHECK(pid >= 0);
	if (!pid) {
		int fd = dev_open();

		CHILD_CHECK(fd >= 0);
		CHILD_CHECK(dnl_open(&sk) == 0);
		CHILD_CHECK(dnl_dump_procs(sk, ps, 8, &n) == 0);
		/* Only itself, by its pid in its own namespace. */
		CHILD_CHECK(n == 1);
		CHILD_CHECK(ps[0].pid == 1);
		_exit(0);
	}
	CHILD_CHECK(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

TEST(unprivileged_see_only_their_own)
{
	struct proc_state ps[8];
	struct nl_sock *sk;
	int fd = dev_open(), n;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, run_child(nobody_watches, NULL));
	ASSERT_EQ(0, run_child(pidns_sees_itself, NULL));
	/* The administrator sees everyone. */
	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_dump_procs(sk, ps, 8, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ((uint32_t)getpid(), ps[0].pid);
	dnl_close(sk);
	close(fd);
}

/* ------------------------------------------ defect 7: pins outlive owner */

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char c = 'f';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &mh, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

TEST(owner_exit_releases_pins)
{
	size_t pg = page_size();
	struct proc_state ps[8];
	struct node_state st;
	struct dao_ioc_stats s;
	struct nl_sock *sk;
	long long acq, rel;
	int sv[2], fd, n;
	pid_t kid;

	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid) {
		char *mem = map_pages(64 * pg, PROT_READ | PROT_WRITE);
		int dev = dev_open();

		CHILD_CHECK(mem && dev >= 0);
		CHILD_CHECK(dev_pin(dev, mem, 64 * pg, DAO_PIN_WRITE, NULL) == 0);
		CHILD_CHECK(dev_pin(dev, mem, 16 * pg, 0, NULL) == 0);
		CHILD_CHECK(send_fd(sv[1], dev) == 0);
		_exit(0);
	}
	fd = recv_fd(sv[0]);
	ASSERT_LE(0, fd);
	ASSERT_EQ(kid, waitpid(kid, NULL, 0));

	/* The owner's address space is gone, and with it every pin. */
	ASSERT_EQ(0, dnl_dump_procs(sk, ps, 8, &n));
	ASSERT_EQ(1, n);
	EXPECT_EQ(0, ps[0].pid);
	EXPECT_EQ(1, ps[0].orphaned);
	EXPECT_EQ(0, ps[0].pinned);
	EXPECT_EQ(0, ps[0].regions);
	ASSERT_EQ(0, dnl_get_node(sk, &st));
	EXPECT_EQ(0, st.pinned);
	acq = vmstat_get("nr_foll_pin_acquired");
	rel = vmstat_get("nr_foll_pin_released");
	EXPECT_EQ(acq, rel);
	/* The holder of the fd can do nothing with it but close it. */
	EXPECT_EQ(-EACCES, dev_stats(fd, &s));
	close(fd);
	ASSERT_EQ(0, dnl_dump_procs(sk, ps, 8, &n));
	EXPECT_EQ(0, n);
	close(sv[0]);
	close(sv[1]);
	dnl_close(sk);
}

/* ------------------------------------------------------ defect 8: smaller */

static char cg_dir[64];


static long long cg_read(const char *file)
{
	char path[128], buf[64] = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/job/%s", cg_dir, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) <= 0)
		buf[0] = 0;
	close(fd);
	return buf[0] ? atoll(buf) : -1;
}

static int charged_job(void *arg)
{
	size_t len = 256 * MiB, array = len / page_size() * sizeof(void *);
	char path[128], pid[16];
	long long before, after;
	char *mem;
	int fd, dev;

	snprintf(path, sizeof(path), "%s/job/cgroup.procs", cg_dir);
	fd = open(path, O_WRONLY);
	snprintf(pid, sizeof(pid), "%d", getpid());
	CHILD_CHECK(fd >= 0 && write(fd, pid, strlen(pid)) > 0);
	close(fd);
	mem = map_pages(len, PROT_READ | PROT_WRITE);
	dev = dev_open();
	CHILD_CHECK(mem && dev >= 0);
	before = cg_read("memory.current");
	CHILD_CHECK(dev_pin(dev, mem, len, DAO_PIN_WRITE, NULL) == 0);
	after = cg_read("memory.current");
	/* The page array is the job's memory (per-cpu batching aside). */
	fprintf(stderr, "# memory.current %lld -> %lld, page array %zu\n", before, after, array);
	CHILD_CHECK(after - before >= (long long)(array * 3 / 4));
	return 0;
}

TEST(page_arrays_charged_to_the_job)
{
	long long limit0 = param_get("max_pinned_mb");
	int ret = cg_job_setup(cg_dir, sizeof(cg_dir), "harden-cg");

	if (ret) {
		cg_job_teardown(cg_dir);
		SKIP(return, "no memory cgroup (%s)", strerror(-ret));
	}
	ASSERT_EQ(0, limit_set_mb(512));
	EXPECT_EQ(0, run_child(charged_job, NULL));
	cg_job_teardown(cg_dir);
	ASSERT_EQ(0, limit_set_mb(limit0));
}

TEST(refused_events_rate_limited)
{
	long long limit0 = param_get("max_pinned_mb");
	char *buf = map_pages(page_size(), PROT_READ | PROT_WRITE);
	struct dao_event ev;
	struct node_state st0, st1;
	struct nl_sock *sk, *evs;
	int fd = dev_open(), events = 0, ret;
	const int tries = 500;

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, dnl_open(&sk));
	ASSERT_EQ(0, dnl_events_open(&evs));
	ASSERT_EQ(0, nl_socket_set_buffer_size(evs, 4 << 20, 0));
	ASSERT_EQ(0, dnl_get_node(sk, &st0));
	ASSERT_EQ(0, limit_set_mb(0));
	for (int i = 0; i < tries; i++)
		EXPECT_EQ(-EDQUOT, dev_pin(fd, buf, page_size(), 0, NULL));
	ASSERT_EQ(0, limit_set_mb(limit0));
	while ((ret = dnl_event_next(evs, &ev)) == 0)
		events += ev.cmd == DAO_NL_CMD_PIN_REFUSED;
	/* Nothing was lost to a full socket buffer either. */
	EXPECT_EQ(-EAGAIN, ret);
	/* Every refusal is counted... */
	ASSERT_EQ(0, dnl_get_node(sk, &st1));
	EXPECT_EQ(st0.refused + tries, st1.refused);
	/* ...but announced only the 1st, 2nd, 4th, ... 256th time. */
	EXPECT_EQ(9, events);
	dnl_close(evs);
	dnl_close(sk);
	close(fd);
}

TEST(writable_pin_of_shared_file_refused)
{
	size_t pg = page_size();
	char dir[64], path[96], *mem, *shm;
	struct dao_ioc_stats s;
	int fd, dev = dev_open(), mfd, ret;
	uint64_t h;

	ASSERT_LE(0, dev);
	snprintf(dir, sizeof(dir), "/tmp/harden-ramfs-%d", getpid());
	ASSERT_EQ(0, mkdir(dir, 0700));
	ASSERT_EQ(0, mount("none", dir, "ramfs", 0, NULL));
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 8 * pg));
	mem = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, mem);
	memset(mem, 1, 8 * pg);
	/* Since 6.5 GUP itself refuses some of these, with EFAULT. */
	ret = dev_pin(dev, mem, 8 * pg, DAO_PIN_WRITE, NULL);
	EXPECT_TRUE(ret == -EOPNOTSUPP || ret == -EFAULT) TH_LOG("pin returned %d", ret);
	ASSERT_EQ(0, dev_stats(dev, &s));
	EXPECT_EQ(0, s.pinned_bytes);
	EXPECT_EQ(0, s.peak_bytes);
	EXPECT_EQ(0, vmpin_kb(getpid()));

	/* shmem (memfd) is what staging buffers shared with a device use. */
	mfd = memfd_create("harden", MFD_CLOEXEC);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, ftruncate(mfd, 8 * pg));
	shm = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, shm);
	memset(shm, 1, 8 * pg);
	EXPECT_EQ(0, dev_pin(dev, shm, 8 * pg, DAO_PIN_WRITE, &h));
	EXPECT_EQ(0, dev_unpin(dev, h));

	close(dev);
	munmap(shm, 8 * pg);
	close(mfd);
	munmap(mem, 8 * pg);
	close(fd);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

TEST_HARNESS_MAIN
