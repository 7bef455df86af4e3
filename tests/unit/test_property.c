/* SPDX-License-Identifier: MIT */
/*
 * test_property.c - random programs give the same bytes under every budget,
 * policy and lookahead as a plain-memory interpreter of the same program.
 *
 * A program creates buffers (some of zero bytes) and views of them, writes
 * inputs, launches kernels that compute deterministic functions of what they
 * read, reads results and releases handles at random points. Each program is
 * run by the reference interpreter once and by libdao under every policy at
 * budgets from 5% to 100% of the program's peak live bytes (never below what
 * its largest kernel or buffer needs); every read must match the reference
 * byte for byte. Under DAO_CONFIG_DETERMINISTIC a repeated run must also move
 * exactly the same bytes. About a quarter of the kernels are host kernels
 * (DAO_LAUNCH_HOST): the same function on the operands' host copies.
 * The plan policy's order and prefetch settings are drawn at random too.
 *
 * Environment: DAO_TEST_SEED (replay), DAO_TEST_PROGRAMS (how many),
 * DAO_TEST_FIRST (index of the first program, to replay one), DAO_TEST_JOBS
 * (worker threads, default 4), DAO_TEST_DUMP (print each program).
 */
#include <pthread.h>

#include "random_program.h"

/* DEFAULT: none chosen, dao and then plan once the device has evicted
 * (core/ask.c). */
static const dao_policy policies[] = { DAO_POLICY_DAO,	DAO_POLICY_BELADY, DAO_POLICY_LRU,
				       DAO_POLICY_FIFO, DAO_POLICY_PLAN,   DAO_POLICY_DEFAULT };
/* Each program runs at 5%, at one of the middle fractions and at 100%. */
static const unsigned fractions[] = { 5, 12, 25, 50, 100 };
static const uint32_t lookaheads[] = { 1, 2, 4, 16, 64 };
/* The plan policy's settings (the other policies ignore them): its order
 * of eviction chosen or fixed, its prefetches waiting or eager. */
static const uint32_t plan_flags[] = { 0, DAO_CONFIG_PLAN_DAO_ORDER, DAO_CONFIG_PLAN_CLEAN_FIRST,
				       DAO_CONFIG_PLAN_EAGER,
				       DAO_CONFIG_PLAN_CLEAN_FIRST | DAO_CONFIG_PLAN_EAGER };

/* Empty when the two runs moved the same data, else what differs. */
static void diff_movement(const dao_stats *a, const dao_stats *b, char *out, size_t cap)
{
	const struct {
		const char *name;
		uint64_t x, y;
	} f[] = {
		{ "h2d_bytes", a->h2d_bytes, b->h2d_bytes },
		{ "d2h_bytes", a->d2h_bytes, b->d2h_bytes },
		{ "fetches", a->fetches, b->fetches },
		{ "prefetches", a->prefetches, b->prefetches },
		{ "writebacks", a->writebacks, b->writebacks },
		{ "evictions", a->evictions, b->evictions },
		{ "drops", a->drops, b->drops },
		{ "peak_device_bytes", a->peak_device_bytes, b->peak_device_bytes },
	};
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < TEST_ARRAY_SIZE(f); i++)
		if (f[i].x != f[i].y && n < cap)
			n += (size_t)snprintf(out + n, cap - n, " %s %" PRIu64 "/%" PRIu64, f[i].name,
					      f[i].x, f[i].y);
}

/* Runs program `index` every way; returns how many runs matched, or -1. */
static int check_program(size_t index, uint64_t pseed, struct program *p, char *failure,
			 size_t cap)
{
	unsigned char *want, *got;
	struct run_result r, again;
	char where[512];
	uint64_t rng = pseed ^ 0x5eedull;
	int runs = 0;

	generate(p, pseed, 1);
	want = malloc(p->read_bytes + 1);
	got = malloc(p->read_bytes + 1);
	if (!want || !got)
		tap_bail("out of memory");
	run_reference(p, want);
	size_t mid = 1 + index % 3;

	for (size_t pi = 0; pi < TEST_ARRAY_SIZE(policies); pi++) {
		for (size_t fi = 0; fi < TEST_ARRAY_SIZE(fractions); fi++) {
			if (fi != 0 && fi != mid && fi != TEST_ARRAY_SIZE(fractions) - 1)
				continue;
			struct run_cfg rc = {
				.policy = policies[pi],
				.budget = budget_for(p, fractions[fi]),
				.lookahead = lookaheads[test_rng_next(&rng) %
							TEST_ARRAY_SIZE(lookaheads)],
				.flags = DAO_CONFIG_PRIVATE |
					 (test_rng_chance(&rng, 1, 2) ? DAO_CONFIG_DETERMINISTIC : 0) |
					 plan_flags[test_rng_next(&rng) % TEST_ARRAY_SIZE(plan_flags)],
			};
			bool ok = run_dao(p, &rc, got, &r);

			if (ok && memcmp(want, got, p->read_bytes)) {
				describe_mismatch(p, want, got, r.why, sizeof(r.why));
				ok = false;
			}
			/* Deterministic mode: the same program moves the same
			 * bytes, under each policy in turn. */
			if (ok && (rc.flags & DAO_CONFIG_DETERMINISTIC) &&
			    pi == index % TEST_ARRAY_SIZE(policies)) {
				char diff[200];

				ok = run_dao(p, &rc, got, &again);
				if (ok)
					diff_movement(&r.stats, &again.stats, diff, sizeof(diff));
				if (ok && diff[0]) {
					snprintf(r.why, sizeof(r.why), "deterministic rerun differs:%s",
						 diff);
					ok = false;
				} else if (!ok) {
					snprintf(r.why, sizeof(r.why), "rerun: %.200s", again.why);
				}
			}
			if (!ok) {
				snprintf(where, sizeof(where),
					 "program %zu policy %s budget %" PRIu64 " (%u%% of peak %" PRIu64
					 ") lookahead %u flags %#x",
					 index, dao_policy_name(rc.policy), rc.budget, fractions[fi],
					 p->peak, rc.lookahead, rc.flags);
				snprintf(failure, cap,
					 "%s: %s\n# replay: DAO_TEST_SEED=<seed above> DAO_TEST_FIRST=%zu "
					 "DAO_TEST_PROGRAMS=1",
					 where, r.why, index);
				runs = -1;
				goto out;
			}
			runs++;
		}
	}
out:
	free(want);
	free(got);
	return runs;
}

/* The program as pseudo-code on stdout (DAO_TEST_DUMP), to turn a failure
 * into a hand-written reproduction. */
static void dump_program(const struct program *p)
{
	static const char *const modes[] = { "?", "r", "w", "rw" };

	for (size_t i = 0; i < p->nsteps; i++) {
		const struct prog_step *s = &p->steps[i];
		const struct prog_kernel *k;
		char line[512];
		size_t n;

		switch (s->kind) {
		case S_CREATE:
			tap_diag("%3zu h%u = create(%" PRIu64 ")", i, s->h, s->len);
			break;
		case S_VIEW:
			tap_diag("%3zu h%u = view(h%u, %" PRIu64 ", %" PRIu64 ")", i, s->h, s->parent,
				 s->off, s->len);
			break;
		case S_WRITE:
		case S_READ:
			tap_diag("%3zu %s(h%u, %" PRIu64 ", %" PRIu64 ")", i,
				 s->kind == S_WRITE ? "write" : "read", s->h, s->off, s->len);
			break;
		case S_KERNEL:
			k = &p->kernels[s->kernel];
			n = (size_t)snprintf(line, sizeof(line), "%3zu k%u%s(", i, s->kernel,
					     k->no_fn ? " fn=NULL" : "");
			for (uint32_t j = 0; j < k->count && n < sizeof(line); j++)
				n += (size_t)snprintf(line + n, sizeof(line) - n, "%sh%u:%s",
						      j ? ", " : "", k->handle[j], modes[k->mode[j]]);
			tap_diag("%s)", line);
			break;
		case S_RELEASE:
			tap_diag("%3zu release(h%u)", i, s->h);
			break;
		case S_SYNC:
			tap_diag("%3zu sync", i);
			break;
		case S_ITERATION:
			tap_diag("%3zu iteration", i);
			break;
		}
	}
}

/* Programs are independent: workers take them in turn, because a run spends
 * most of its time waiting on the executor, not computing. */
struct shared {
	pthread_mutex_t mu;
	uint64_t seed, first, count, next;
	uint64_t steps, kernels, host_kernels, bytes;
	int failures;
};

static void *worker(void *arg)
{
	struct shared *sh = arg;
	struct program *p = malloc(sizeof(*p));
	char failure[1024];

	if (!p)
		tap_bail("out of memory");
	for (;;) {
		uint64_t i;
		int runs;

		pthread_mutex_lock(&sh->mu);
		i = sh->next++;
		pthread_mutex_unlock(&sh->mu);
		if (i >= sh->first + sh->count)
			break;
		runs = check_program(i, mix64(sh->seed ^ mix64(i)), p, failure, sizeof(failure));
		pthread_mutex_lock(&sh->mu);
		sh->steps += p->nsteps;
		sh->kernels += p->nkernels;
		for (size_t k = 0; k < p->nkernels; k++)
			sh->host_kernels += p->kernels[k].on_host;
		sh->bytes += p->read_bytes;
		if (runs < 0)
			sh->failures++;
		tap_ok(runs > 0,
		       "program %" PRIu64 ": %zu steps, %zu kernels, peak %" PRIu64
		       " bytes: %d runs match the reference",
		       i, p->nsteps, p->nkernels, p->peak, runs);
		if (runs < 0)
			tap_diag("%s", failure);
		if (getenv("DAO_TEST_DUMP"))
			dump_program(p);
		pthread_mutex_unlock(&sh->mu);
	}
	free(p);
	return NULL;
}

int main(void)
{
	struct shared sh = { .mu = PTHREAD_MUTEX_INITIALIZER };
	pthread_t threads[16];
	uint64_t jobs;

	test_clear_env();
	sh.seed = test_seed();
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	sh.count = test_env_u64("DAO_TEST_PROGRAMS", 1000);
#else
	sh.count = test_env_u64("DAO_TEST_PROGRAMS", 2000);
#endif
	sh.first = test_env_u64("DAO_TEST_FIRST", 0);
	sh.next = sh.first;
	jobs = test_env_u64("DAO_TEST_JOBS", 4);
	if (jobs < 1 || jobs > TEST_ARRAY_SIZE(threads))
		tap_bail("DAO_TEST_JOBS must be 1 to %zu", TEST_ARRAY_SIZE(threads));
	tap_plan((int)sh.count);
	for (uint64_t t = 0; t < jobs; t++)
		if (pthread_create(&threads[t], NULL, worker, &sh))
			tap_bail("pthread_create failed");
	for (uint64_t t = 0; t < jobs; t++)
		pthread_join(threads[t], NULL);
	tap_diag("%" PRIu64 " programs, %" PRIu64 " steps, %" PRIu64 " kernels (%" PRIu64
		 " on the host), %" PRIu64 " bytes read per run; %d failed",
		 sh.count, sh.steps, sh.kernels, sh.host_kernels, sh.bytes, sh.failures);
	return tap_exit();
}
