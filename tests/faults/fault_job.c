/* SPDX-License-Identifier: MIT */
/*
 * fault_job.c - one job for the fault sweep (faults.t): a random program
 * (tests/gpu/program.h) on one backend, run under whatever DAO_FAULT or
 * DAO_CUDAMODEL_FAIL fails, then held to what dao.h promises a job whose
 * world failed under it:
 *  - every call ends with DAO_OK or a clear status of the world's failure
 *    (out of memory, backend, kernel, failed, lost, I/O), never another;
 *  - after the first failure, dao_read of every buffer returns exactly the
 *    contents the program's last completed kernel or write gave it (a
 *    replay of the program on plain memory, through the kernels the device
 *    ran, says which), or DAO_ERR_LOST where dao.h allows it: the kernel
 *    that failed wrote the buffer, or the device failed;
 *  - a mid-program read that returned DAO_OK returned those contents too;
 *  - dao_close frees every handle (none leaked);
 *  - a second context of the process, opened first and used before and
 *    after, carries on unharmed (unless the failure fell in its own calls).
 * Exit 0: the job ran to the end and every byte is right; 10: it stopped
 * on a clear failure and all of the above held; 1: a defect (said on
 * stderr as "fault_job: DEFECT: ...").
 *
 * Usage: fault_job host|cuda-explicit|cuda-managed SEED
 */
#include "gpu_common.h"

#define EXIT_STOPPED 10
/* A step the job never came to. */
#define NOT_RUN ((dao_status)-1)

static int defects;

#define DEFECT(...)                                                        \
	do {                                                               \
		fprintf(stderr, "fault_job: DEFECT: " __VA_ARGS__);        \
		fprintf(stderr, "\n");                                     \
		defects++;                                                 \
	} while (0)

/* The statuses a failure of the world beneath may give. */
static bool clear_failure(dao_status st)
{
	switch (st) {
	case DAO_ERR_NOMEM:
	case DAO_ERR_BACKEND:
	case DAO_ERR_KERNEL:
	case DAO_ERR_FAILED:
	case DAO_ERR_LOST:
	case DAO_ERR_IO:
		return true;
	default:
		return false;
	}
}

/* What the job did, step by step, for the replay. */
struct record {
	dao_status create[PROG_MAX_BUFS], init[PROG_MAX_BUFS];
	dao_status launch[PROG_MAX_KERNELS], write[PROG_MAX_KERNELS], read[PROG_MAX_KERNELS];
	uint64_t read_hash[PROG_MAX_KERNELS];
	uint32_t made;     /* buffers created */
	uint32_t launched; /* kernels accepted */
	dao_status first;  /* the first failure, DAO_OK if none */
};

/* ---------------------------------------------------- the second context */

struct bystander {
	dao_ctx ctx;
	dao_buf buf;
	uint8_t want[4096];
	bool up;
};

static int xor_kernel(const dao_kernel_args *a)
{
	uint8_t *p = a->ptrs[0];

	for (uint64_t i = 0; i < a->sizes[0]; i++)
		p[i] ^= (uint8_t)(0x5a + i);
	return 0;
}

static void xor_ref(uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] ^= (uint8_t)(0x5a + i);
}

/* Opened before the job and given work; false when the failure fell here. */
static bool bystander_start(struct bystander *b, dao_backend_kind kind)
{
	dao_config cfg = gpu_config(kind, 1u << 20, DAO_POLICY_DAO, DAO_CONFIG_PRIVATE);
	dao_operand op;
	dao_status st;

	cfg.log_level = DAO_LOG_ERROR;
	test_fill(b->want, sizeof(b->want), 77);
	st = dao_open(&cfg, &b->ctx);
	if (st != DAO_OK) {
		if (!clear_failure(st))
			DEFECT("second context: dao_open: %s", dao_strerror(st));
		return false;
	}
	b->up = true;
	st = dao_buffer_create(b->ctx, sizeof(b->want), &b->buf);
	if (st == DAO_OK)
		st = dao_write(b->ctx, b->buf, 0, b->want, sizeof(b->want));
	op = (dao_operand){ b->buf, DAO_RW };
	if (st == DAO_OK)
		st = dao_launch_flags(b->ctx, "bystander", 0, DAO_LAUNCH_HOST, xor_kernel, NULL, &op, 1);
	if (st == DAO_OK) {
		xor_ref(b->want, sizeof(b->want));
		return true;
	}
	if (!clear_failure(st))
		DEFECT("second context: %s", dao_strerror(st));
	return false;
}

/* After the job: one more kernel, everything read back. */
static dao_status bystander_finish(struct bystander *b)
{
	uint8_t got[sizeof(b->want)];
	dao_operand op = { b->buf, DAO_RW };
	dao_status st = dao_launch_flags(b->ctx, "bystander", 0, DAO_LAUNCH_HOST, xor_kernel, NULL,
					 &op, 1);

	/* A failed context still reads (dao.h): the sync says whether the
	 * kernel ran. */
	if (st == DAO_OK)
		st = dao_sync(b->ctx);
	if (st == DAO_OK)
		st = dao_read(b->ctx, b->buf, 0, got, sizeof(got));
	if (st == DAO_OK) {
		xor_ref(b->want, sizeof(b->want));
		if (memcmp(got, b->want, sizeof(got)))
			DEFECT("second context: wrong bytes read back");
	}
	return st;
}

static void bystander_close(struct bystander *b)
{
	uint64_t leaked = 0;

	if (!b->up)
		return;
	(void)dao_release(b->ctx, b->buf);
	(void)dao_close(b->ctx, &leaked);
	if (leaked)
		DEFECT("second context: dao_close leaked %llu handles", (unsigned long long)leaked);
}

/* ------------------------------------------------------------- the job */

static void run(const struct program *p, dao_ctx ctx, const struct prog_exec *x, dao_buf *bufs,
		struct record *rec, uint8_t *tmp)
{
	struct prog_launch *l = calloc(p->nkernels, sizeof(*l));
	dao_status st = DAO_OK;

	if (!l)
		tap_bail("out of memory");
	for (uint32_t i = 0; i < PROG_MAX_KERNELS; i++)
		rec->launch[i] = rec->write[i] = rec->read[i] = NOT_RUN;
	for (uint32_t b = 0; b < p->nbufs && st == DAO_OK; b++) {
		st = rec->create[b] = dao_buffer_create(ctx, p->size[b], &bufs[b]);
		if (st != DAO_OK)
			break;
		rec->made++;
		test_fill(tmp, p->size[b], p->seed[b]);
		st = rec->init[b] = dao_write(ctx, bufs[b], 0, tmp, p->size[b]);
	}
	for (uint32_t i = 0; i < p->nkernels && st == DAO_OK; i++) {
		const struct prog_kernel *k = &p->k[i];

		st = rec->launch[i] = prog_launch_one(p, i, ctx, bufs, x, &l[i]);
		if (st != DAO_OK)
			break;
		rec->launched++;
		if (k->iteration_after)
			st = dao_iteration(ctx);
		if (st == DAO_OK && k->read_after >= 0) {
			st = rec->read[i] = dao_read(ctx, bufs[k->read_after], 0, tmp,
						     p->size[k->read_after]);
			rec->read_hash[i] = prog_hash(tmp, p->size[k->read_after]);
			/* A failed context still reads: go on until a
			 * call that changes something is refused. */
			if (st == DAO_ERR_LOST)
				st = DAO_OK;
		}
		if (st == DAO_OK && k->write_after >= 0) {
			prog_write_bytes(k, tmp);
			st = rec->write[i] = dao_write(ctx, bufs[k->write_after], k->write_off, tmp,
						       k->write_len);
		}
	}
	rec->first = st;
	if (st != DAO_OK && !clear_failure(st))
		DEFECT("the job stopped on %s, not a failure of the world", dao_strerror(st));
	/* The kernel functions use l until the queue is done. */
	st = dao_sync(ctx);
	if (st != DAO_OK && !clear_failure(st))
		DEFECT("dao_sync after the job: %s", dao_strerror(st));
	if (rec->first == DAO_OK)
		rec->first = st;
	else if (st != DAO_OK)
		rec->first = st; /* the asynchronous cause, where there is one */
	free(l);
}

/*
 * The program replayed on plain memory as far as the device went: every
 * buffer created and written, the first `ran` kernels, the writes that
 * returned DAO_OK. lost[b]: the buffer may read DAO_ERR_LOST.
 */
static void check(const struct program *p, dao_ctx ctx, const dao_buf *bufs,
		  const struct record *rec, uint64_t ran, dao_status cause, uint8_t *tmp)
{
	uint8_t **mem = prog_out_alloc(p);
	bool lost[PROG_MAX_BUFS] = { false }, defined[PROG_MAX_BUFS] = { false };
	bool device_failed = cause == DAO_ERR_BACKEND;

	for (uint32_t b = 0; b < rec->made; b++) {
		test_fill(mem[b], p->size[b], p->seed[b]);
		defined[b] = rec->init[b] == DAO_OK;
	}
	for (uint32_t i = 0; i < rec->launched; i++) {
		const struct prog_kernel *k = &p->k[i];
		void *ptrs[PROG_MAX_OPS];

		/* A skipped kernel that overwrites a buffer whole may have
		 * had its old contents given up ahead (dao.h). */
		for (uint32_t o = 0; i >= ran && o < k->nops; o++)
			if (k->mode[o] == DAO_W)
				lost[k->buf[o]] = true;
		if (i < ran) {
			for (uint32_t o = 0; o < k->nops; o++)
				ptrs[o] = mem[k->buf[o]];
			prog_apply(k, ptrs, &prog_host_exec, NULL);
			/* The last kernel the device ran is the one that
			 * failed, when one did. */
			if (i + 1 == ran && cause == DAO_ERR_KERNEL)
				for (uint32_t o = 0; o < k->nops; o++)
					if (k->mode[o] != DAO_R)
						lost[k->buf[o]] = true;
		}
		if (k->read_after >= 0 && rec->read[i] == DAO_OK && defined[k->read_after] &&
		    !lost[k->read_after] &&
		    rec->read_hash[i] != prog_hash(mem[k->read_after], p->size[k->read_after]))
			DEFECT("kernel %u's read of buffer %d returned contents it never had", i,
			       k->read_after);
		if (k->read_after >= 0 && rec->read[i] == DAO_ERR_LOST && !lost[k->read_after] &&
		    !device_failed)
			DEFECT("kernel %u's read of buffer %d: LOST, yet nothing lost it", i,
			       k->read_after);
		if (k->write_after >= 0 && rec->write[i] == DAO_OK)
			prog_write_bytes(k, mem[k->write_after] + k->write_off);
	}
	for (uint32_t b = 0; b < rec->made; b++) {
		dao_status st = dao_read(ctx, bufs[b], 0, tmp, p->size[b]);

		if (st == DAO_OK) {
			if (defined[b] && !lost[b] && memcmp(tmp, mem[b], p->size[b]))
				DEFECT("buffer %u reads back contents other than its last ones "
				       "(failure %s, %llu kernels ran)",
				       b, dao_strerror(cause), (unsigned long long)ran);
		} else if (st == DAO_ERR_LOST) {
			if (!lost[b] && !device_failed)
				DEFECT("buffer %u: LOST, yet neither its kernel nor the device "
				       "failed (failure %s)",
				       b, dao_strerror(cause));
		} else if (cause == DAO_OK && clear_failure(st)) {
			/* The first failure falls in this read. */
			cause = st;
			device_failed = cause == DAO_ERR_BACKEND;
		} else {
			DEFECT("dao_read of buffer %u after the job: %s (failure %s)", b,
			       dao_strerror(st), dao_strerror(cause));
		}
	}
	prog_out_free(p, mem);
}

int main(int argc, char **argv)
{
	static struct program p;
	static struct record rec;
	dao_backend_kind kind;
	const struct prog_exec *x;
	struct bystander by = { 0 };
	dao_buf bufs[PROG_MAX_BUFS];
	uint64_t rng, g, all, leaked = 0;
	dao_config cfg;
	dao_stats stats = { 0 };
	dao_status st;
	dao_ctx ctx;
	uint8_t *tmp;
	bool by_ok;

	if (argc != 3) {
		fprintf(stderr, "usage: %s host|cuda-explicit|cuda-managed SEED\n", argv[0]);
		return 2;
	}
	test_clear_env();
	kind = !strcmp(argv[1], "host")		? DAO_BACKEND_HOST
	       : !strcmp(argv[1], "cuda-explicit") ? DAO_BACKEND_CUDA_EXPLICIT
	       : !strcmp(argv[1], "cuda-managed")  ? DAO_BACKEND_CUDA_MANAGED
						     : DAO_BACKEND_DEFAULT;
	if (kind == DAO_BACKEND_DEFAULT)
		return 2;
	x = kind == DAO_BACKEND_HOST ? &prog_host_exec : &gpu_exec;
	g = kind == DAO_BACKEND_HOST ? 256 : gpu_granule(kind);
	rng = strtoull(argv[2], NULL, 0);
	/* Small enough that a sweep of every point stays short, large
	 * enough that the budget evicts. */
	prog_generate(&p, &rng, (uint32_t)test_rng_range(&rng, 3, 6),
		      (uint32_t)test_rng_range(&rng, 8, 16), 1, 4 * g, g);
	tmp = malloc(4 * g);
	if (!tmp)
		tap_bail("out of memory");

	by_ok = bystander_start(&by, kind);
	/* A third of the way from the tightest budget to one that holds
	 * everything (as test_gpu_property's middle one). */
	all = prog_round(p.total, g) + g * p.nbufs;
	if (all < p.min_budget)
		all = p.min_budget;
	cfg = gpu_config(kind, p.min_budget + (all - p.min_budget) / 3, DAO_POLICY_DAO,
			 DAO_CONFIG_PRIVATE);
	cfg.log_level = DAO_LOG_ERROR;
	st = dao_open(&cfg, &ctx);
	if (st != DAO_OK) {
		if (!clear_failure(st))
			DEFECT("dao_open: %s", dao_strerror(st));
		rec.first = st;
	} else {
		run(&p, ctx, x, bufs, &rec, tmp);
		st = dao_stats_get(ctx, &stats);
		if (st != DAO_OK)
			DEFECT("dao_stats_get after the job: %s", dao_strerror(st));
		check(&p, ctx, bufs, &rec, stats.kernels, rec.first, tmp);
		for (uint32_t b = 0; b < rec.made; b++)
			if ((st = dao_release(ctx, bufs[b])) != DAO_OK)
				DEFECT("dao_release of buffer %u: %s", b, dao_strerror(st));
		st = dao_close(ctx, &leaked);
		if (st != DAO_OK && !clear_failure(st))
			DEFECT("dao_close: %s", dao_strerror(st));
		if (leaked)
			DEFECT("dao_close leaked %llu handles", (unsigned long long)leaked);
	}
	if (by_ok) {
		st = bystander_finish(&by);
		/* Harmed only if the failure was the job's: a single one
		 * cannot fall in both. */
		if (st != DAO_OK && (rec.first != DAO_OK || !clear_failure(st)))
			DEFECT("second context harmed: %s (the job's failure: %s)", dao_strerror(st),
			       dao_strerror(rec.first));
		if (st != DAO_OK)
			rec.first = st;
	} else {
		rec.first = rec.first ? rec.first : DAO_ERR_FAILED;
	}
	bystander_close(&by);
	free(tmp);
	if (defects)
		return 1;
	fprintf(stderr, "fault_job: %s\n", rec.first == DAO_OK ? "completed" : dao_strerror(rec.first));
	return rec.first == DAO_OK ? 0 : EXIT_STOPPED;
}
