/* SPDX-License-Identifier: MIT */
/*
 * test_sim_backend_match.c - the simulated and the host backend, driven by
 * the same executor and policy with DAO_CONFIG_DETERMINISTIC, make the same
 * transfer decisions for the same trace and budget: the simulator models
 * the device libdao really drives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/daosim/replay.h"
#include "backend/backend.h"
#include "tap.h"

/* Buffer sizes are multiples of the host arena's granularity, so both
 * arenas see the same bytes (the simulator allocates at 1-byte grain). */
static char *random_trace(unsigned *seed, int nb, int nk, uint64_t gran)
{
	size_t cap = 64 + (size_t)nb * 40 + (size_t)nk * 96 + 32, n = 0;
	char *s = malloc(cap);

	n += (size_t)snprintf(s + n, cap - n, "dao-trace 1\ni 0\n");
	for (int b = 1; b <= nb; b++)
		n += (size_t)snprintf(s + n, cap - n, "b %d %llu\n", b,
				      (unsigned long long)(gran * (1 + (uint64_t)rand_r(seed) % 8)));
	for (int k = 0; k < nk; k++) {
		int a = 1 + rand_r(seed) % nb, b = 1 + rand_r(seed) % nb;
		static const char *const shapes[] = { "r=%d w=%d rw=-", "r=%d w=- rw=%d",
						      "r=- w=%d rw=%d", "r=%d,%d w=- rw=-" };
		char ops[64];

		if (b == a)
			b = a % nb + 1;
		snprintf(ops, sizeof(ops), shapes[rand_r(seed) % 4], a, b);
		n += (size_t)snprintf(s + n, cap - n, "k k%d 1000 %s\n", k, ops);
		if (k == nk / 2)
			n += (size_t)snprintf(s + n, cap - n, "i 1\n");
	}
	return s;
}

#define SAME(field) (a->field == b->field)

int main(void)
{
	static const dao_policy pols[] = { DAO_POLICY_DAO, DAO_POLICY_BELADY, DAO_POLICY_LRU,
					   DAO_POLICY_FIFO };
	unsigned seed = 4242;
	uint64_t gran;
	struct dao_backend *probe;
	struct dao_rates host_rates;
	int compared = 0, differ = 0;

	/* The host arena's granularity, whatever the core chose. */
	if (dao_backend_host_create("host", 1 << 20, &probe) != DAO_OK)
		tap_bail("host backend unavailable");
	gran = probe->align ? probe->align : 1;
	host_rates = probe->rates;
	probe->ops->destroy(probe);
	tap_diag("host arena granularity %llu bytes", (unsigned long long)gran);

	for (int i = 0; i < 12; i++) {
		char *text = random_trace(&seed, 4 + i % 6, 30 + 3 * i, gran);
		struct dao_trace *t = NULL;
		struct trace_profile p;
		struct dao_sim_model m;
		char err[256];

		if (dao_trace_read_mem(text, strlen(text), &t, err, sizeof(err)))
			tap_bail("random trace: %s", err);
		trace_profile_build(t, 1, &p);
		dao_sim_model_preset("h100", &m);
		m.contiguous = 1; /* place buffers as the host arena does */
		/* and time them as the host backend models itself: the
		 * prefetch horizon follows modeled time (core/horizon.c) */
		m.h2d_bytes_per_s = host_rates.h2d_bytes_per_s;
		m.d2h_bytes_per_s = host_rates.d2h_bytes_per_s;
		m.flops_per_s = host_rates.flops_per_s;
		m.mem_bytes_per_s = host_rates.mem_bytes_per_s;
		m.launch_ns = host_rates.launch_ns;
		for (size_t j = 0; j < 4; j++) {
			uint64_t budget = p.max_kernel_bytes +
					  (p.peak_live_bytes - p.max_kernel_bytes) * (j + 1) / 5 /
						  gran * gran; /* the host arena rounds down */
			struct replay_opts o = { .policy = pols[j], .budget = budget,
						 .lookahead = 1 + (uint32_t)(i % 4) * 3 };
			struct replay_result rs, rh;
			struct dao_backend *host;
			const dao_stats *a = &rs.stats, *b = &rh.stats;
			dao_status ss, sh;

			ss = replay_sim(t, &p, &o, &m, 0, &rs);
			if (dao_backend_host_create("host", budget, &host) != DAO_OK)
				tap_bail("host backend");
			sh = replay_on_backend(t, &p, &o, host, 0, &rh);
			compared++;
			if (ss != DAO_OK || sh != DAO_OK) {
				differ++;
				tap_diag("  trace %d %s: sim %s (%s), host %s (%s)", i,
					 dao_policy_name(pols[j]), dao_strerror(ss), rs.err,
					 dao_strerror(sh), rh.err);
			} else if (!(SAME(h2d_bytes) && SAME(d2h_bytes) && SAME(fetches) &&
				     SAME(prefetches) && SAME(writebacks) && SAME(evictions) &&
				     SAME(drops) && SAME(kernels) && SAME(peak_device_bytes))) {
				differ++;
				tap_diag("  trace %d %s budget %llu: sim h2d %llu d2h %llu ev %llu, host h2d %llu d2h %llu ev %llu",
					 i, dao_policy_name(pols[j]), (unsigned long long)budget,
					 (unsigned long long)a->h2d_bytes,
					 (unsigned long long)a->d2h_bytes,
					 (unsigned long long)a->evictions,
					 (unsigned long long)b->h2d_bytes,
					 (unsigned long long)b->d2h_bytes,
					 (unsigned long long)b->evictions);
			}
			replay_result_free(&rs);
			replay_result_free(&rh);
		}
		trace_profile_free(&p);
		dao_trace_free(t);
		free(text);
	}
	tap_ok(differ == 0, "sim and host backends agree on %d replays (%d differ)", compared,
	       differ);
	tap_plan_done();
	return tap_exit();
}
