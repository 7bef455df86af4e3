/* SPDX-License-Identifier: MIT */
/* host_faults.c - the host touching device and managed memory (host_faults.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/lock.h"
#include "base/report.h"
#include "base/site.h"
#include "check/races.h"
#include "records/um_records.h"
#include "state/allocs.h"
#include "state/card.h"
#include "state/host_faults.h"
#include "state/pages.h"
#include "state/poison.h"

static struct sigaction old_segv;

static void on_segv(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	char *addr = si->si_addr;
	struct cm_alloc *a;
	struct cm_site site = { { 0 }, 1 };
	bool write = false;

#if defined(__x86_64__)
	site.pc[0] = (void *)uc->uc_mcontext.gregs[REG_RIP];
	write = uc->uc_mcontext.gregs[REG_ERR] & 2;
#else
	(void)uc;
	site.n = 0;
#endif
	cm_lock();
	a = cm_find(addr);
	if (!a || (a->kind != CM_DEVICE && a->kind != CM_MANAGED)) {
		cm_unlock();
		/* Not ours: whoever handled it before us. */
		if (old_segv.sa_flags & SA_SIGINFO && old_segv.sa_sigaction) {
			old_segv.sa_sigaction(sig, si, uc_);
		} else if (old_segv.sa_handler != SIG_IGN && old_segv.sa_handler != SIG_DFL) {
			old_segv.sa_handler(sig);
		} else {
			signal(SIGSEGV, SIG_DFL);
		}
		return;
	}
	if (a->kind == CM_DEVICE) {
		fprintf(stderr,
			"cudamodel: ERROR: host %s of device memory at %p (cudaMalloc'd %p, %llu "
			"bytes): the host must not touch device memory\n",
			write ? "write" : "read", (void *)addr, (void *)a->base,
			(unsigned long long)a->size);
		cm_site_print("host access at", &site);
		cm_site_print("allocated at", &a->site);
		_exit(CM_EXIT);
	}
	{
		uint64_t off = (uint64_t)(addr - a->base);
		uint32_t pg = (uint32_t)(off / CM_PAGE);

		if ((a->page[pg] & PG_POISON) && !write)
			cm_poison_check(a, off, 1, &site, "host read");
		/* No clock given: the host's, checked but not recorded (no
		 * allocation in a signal handler). */
		cm_check(addr, 1, write, -1, NULL, &site, write ? "host write" : "host read");
		/* A CPU page fault on a real driver: a migration back, or the
		 * driver populating a page without one. (A page closed only to
		 * catch reads of discarded bytes has its page: no fault.) */
		if (a->page[pg] & (PG_DEVICE | PG_EMPTY))
			cm_um_record(CM_UM_CPU_FAULT, addr, (uint64_t)(uintptr_t)site.pc[0], 0);
		if ((a->page[pg] & (PG_DEVICE | PG_EMPTY)) == PG_EMPTY)
			cm_card.n.host_populations++;
		/* It conflicts with nothing pending: let it through. */
		if (a->pending[pg])
			a->page[pg] |= PG_OPEN;
		if (a->page[pg] & PG_POISON)
			cm_poison_drop_page(a, pg);
		a->page[pg] &= (uint8_t)~PG_EMPTY;
		if (a->page[pg] & PG_DEVICE) {
			cm_card.n.host_faults++;
			cm_card.n.fault_migrations++;
			cm_pages_move(a, pg, 1, false, CM_CAUSE_COHERENCE);
		} else {
			cm_protect(a, pg, 1);
		}
	}
	cm_unlock();
}

void cm_host_faults_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
}
