/* SPDX-License-Identifier: MIT */
/*
 * test_sim_backend.c - the simulated backend alone: device models (presets
 * and files, with their refusals) and the virtual timeline (engines in
 * submission order, fences, full duplex, stall accounting).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "dao_sim.h"
#include "tap.h"

static void test_presets(void)
{
	struct dao_sim_model m;

	TAP_IS_STATUS(dao_sim_model_preset("h100", &m), DAO_OK, "h100 preset");
	tap_ok(m.h2d_bytes_per_s == 50e9 && m.d2h_bytes_per_s == 50e9 &&
		       m.flops_per_s == 100e12 && m.mem_bytes_per_s == 3000e9 &&
		       m.memory_bytes == (80ull << 30) && strcmp(m.name, "h100") == 0,
	       "h100: PCIe Gen5 50 GB/s each way, 100 Tflop/s, 3000 GB/s, 80 GiB");
	TAP_IS_STATUS(dao_sim_model_preset("a100", &m), DAO_OK, "a100 preset");
	tap_ok(m.h2d_bytes_per_s == 25e9 && m.mem_bytes_per_s == 1555e9 &&
		       m.memory_bytes == (40ull << 30),
	       "a100: PCIe Gen4 25 GB/s each way, 1555 GB/s, 40 GiB");
	memset(&m, 0x5a, sizeof(m));
	TAP_IS_STATUS(dao_sim_model_preset("v100", &m), DAO_ERR_INVALID, "unknown preset");
	tap_ok(((unsigned char *)&m)[0] == 0x5a, "unknown preset leaves the model untouched");
	TAP_IS_STATUS(dao_sim_model_preset(NULL, &m), DAO_ERR_NULL, "NULL name");
	TAP_IS_STATUS(dao_sim_model_preset("h100", NULL), DAO_ERR_NULL, "NULL out");
}

static char path[] = "/tmp/dao-test-device-XXXXXX";

static dao_status load_text(const char *text, struct dao_sim_model *m, char *err, size_t n)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
	return dao_sim_model_load(path, m, err, n);
}

#define GOOD "name test\nh2d_gbps 10\nd2h_gbps 5\ntflops 2.5\nmem_gbps 100\nmemory_gib 16\n"

static void test_file(void)
{
	static const struct {
		const char *text;
		const char *reason;
	} bad[] = {
		{ GOOD "speed 3\n", "line 7: unknown key 'speed'" },
		{ GOOD "launch_ns\n", "line 7: 'launch_ns' needs exactly one value" },
		{ GOOD "launch_ns 1 2\n", "line 7: 'launch_ns' needs exactly one value" },
		{ GOOD "h2d_gbps 3\n", "line 7: 'h2d_gbps' given twice" },
		{ "name x\nh2d_gbps fast\n", "line 2: 'h2d_gbps': 'fast' is not a positive number" },
		{ "name x\nh2d_gbps -3\n", "line 2: 'h2d_gbps': '-3' is not a positive number" },
		{ "name x\ntflops 0\n", "line 2: 'tflops': '0' is not a positive number" },
		{ "name x\ntflops nan\n", "is not a positive number" },
		{ "name x\ntflops 1e999\n", "is not a positive number" },
		{ "name abcdefghijabcdefghijabcdefghijabcdefghij\n", "line 1: name longer than 31" },
		{ "name x\nh2d_gbps 1\n", "missing keys" },
		{ GOOD "contiguous 2\n", "line 7: contiguous must be 0 or 1, not '2'" },
	};
	struct dao_sim_model m;
	char err[256];

	int fd = mkstemp(path);

	if (fd < 0)
		tap_bail("mkstemp");
	close(fd);
	TAP_IS_STATUS(load_text("# my card\n" GOOD "launch_ns 2000 # per kernel\n\n", &m, err,
				sizeof(err)),
		      DAO_OK, "a device file loads");
	tap_ok(strcmp(m.name, "test") == 0 && m.h2d_bytes_per_s == 10e9 &&
		       m.d2h_bytes_per_s == 5e9 && m.flops_per_s == 2.5e12 &&
		       m.mem_bytes_per_s == 100e9 && m.launch_ns == 2000 &&
		       m.memory_bytes == (16ull << 30),
	       "with every value in its unit");
	TAP_IS_STATUS(load_text(GOOD, &m, err, sizeof(err)), DAO_OK, "launch_ns is optional");
	TAP_IS_U64(m.launch_ns, 0, "and defaults to 0");
	TAP_IS_U64(m.contiguous, 0, "a device is paged unless it says otherwise");
	TAP_IS_STATUS(load_text(GOOD "contiguous 1\n", &m, err, sizeof(err)), DAO_OK,
		      "contiguous 1 loads");
	TAP_IS_U64(m.contiguous, 1, "and models a contiguous pool");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dao_status st;

		memset(&m, 0x5a, sizeof(m));
		st = load_text(bad[i].text, &m, err, sizeof(err));
		if (!tap_ok(st == DAO_ERR_FORMAT && strstr(err, bad[i].reason) &&
				    strstr(err, path) && ((unsigned char *)&m)[0] == 0x5a,
			    "refused: %s", bad[i].reason))
			tap_diag("  status %d, '%s'", (int)st, err);
	}
	unlink(path);
	TAP_IS_STATUS(dao_sim_model_load(path, &m, err, sizeof(err)), DAO_ERR_IO,
		      "a missing file is an I/O error");
	tap_ok(strstr(err, "No such file") != NULL, "naming the cause: %s", err);
}

static void test_create(void)
{
	struct dao_sim_model m;
	struct dao_backend *be = NULL;
	void *p = &m;
	uint64_t pin = 1;

	dao_sim_model_preset("h100", &m);
	TAP_IS_STATUS(dao_backend_sim_create(&m, 0, 0, &be), DAO_ERR_INVALID, "zero budget");
	m.h2d_bytes_per_s = 0;
	TAP_IS_STATUS(dao_backend_sim_create(&m, 100, 0, &be), DAO_ERR_INVALID,
		      "a model with zero bandwidth");
	tap_ok(be == NULL, "failed creations leave out untouched");
	TAP_IS_STATUS(dao_backend_sim_create(NULL, 100, 0, &be), DAO_ERR_NULL, "NULL model");
	dao_sim_model_preset("h100", &m);
	TAP_IS_STATUS(dao_backend_sim_create(&m, 1000, 0, &be), DAO_OK, "create");
	tap_ok(!be->holds_data && be->arena_bytes == 1000 && be->align == 1 &&
		       be->device_memory == m.memory_bytes && strcmp(be->ops->name, "sim") == 0,
	       "no data, arena = budget, align 1, device memory from the model");
	tap_ok(be->ops->kernel_ptr(be, NULL, 0, 0) == NULL, "kernel_ptr is NULL");
	tap_ok(be->ops->host_alloc(be, 100, &p, &pin) == DAO_OK && p == NULL && !pin,
	       "host_alloc succeeds with no memory");
	be->ops->host_free(be, NULL, 100, 0);
	be->ops->destroy(be);
}

static void test_timeline(void)
{
	/* 1 byte/ns up, 0.5 byte/ns down, 1 flop/ns, 1 byte/ns memory, 10 ns launch */
	struct dao_sim_model m = { .name = "unit",
				   .h2d_bytes_per_s = 1e9,
				   .d2h_bytes_per_s = 0.5e9,
				   .flops_per_s = 1e9,
				   .mem_bytes_per_s = 1e9,
				   .launch_ns = 10,
				   .memory_bytes = 1 << 20 };
	struct dao_backend *be;
	struct dao_sim_result r;
	dao_fence f;
	uint64_t s1, s2, s3, s4, s5, k1, k2, k3;
	struct dao_kernel_run k = { .flops = 50, .operand_bytes = 20, .resident_bytes = 120 };

	if (dao_backend_sim_create(&m, 1 << 20, 1, &be))
		tap_bail("create");
	memset(&f, 0, sizeof(f));
	s1 = be->ops->copy(be, DAO_ENGINE_H2D, 0, NULL, 100, &f, DAO_WHY_FETCH); /* [0, 100] */
	TAP_IS_U64(s1, 1, "first h2d copy is number 1");
	dao_fence_add(&f, DAO_ENGINE_H2D, s1);
	TAP_IS_STATUS(be->ops->kernel(be, &k, &f, &k1), DAO_OK, "kernel");
	/* waits for the copy: starts at 100, takes max(50, 20) + 10 */
	TAP_IS_U64(be->ops->last_stall_ns(be), 100, "kernel stalled for the whole copy");
	memset(&f, 0, sizeof(f));
	dao_fence_add(&f, DAO_ENGINE_COMPUTE, k1);
	s2 = be->ops->copy(be, DAO_ENGINE_D2H, 0, NULL, 100, &f, DAO_WHY_EVICT); /* [160, 360] */
	memset(&f, 0, sizeof(f));
	s3 = be->ops->copy(be, DAO_ENGINE_H2D, 0, NULL, 30, &f, DAO_WHY_FETCH); /* [100, 130]: full duplex */
	dao_fence_add(&f, DAO_ENGINE_H2D, s3);
	k.flops = 0;
	k.operand_bytes = 0;
	be->ops->kernel(be, &k, &f, &k2); /* ready at 130, engine free at 160: [160, 170] */
	TAP_IS_U64(be->ops->last_stall_ns(be), 0, "a copy done before the engine frees is no stall");
	memset(&f, 0, sizeof(f));
	dao_fence_add(&f, DAO_ENGINE_D2H, s2);
	dao_fence_add(&f, DAO_ENGINE_COMPUTE, k2);
	k.flops = 1000;
	be->ops->kernel(be, &k, &f, &k3); /* waits for the d2h at 360: [360, 1370] */
	TAP_IS_U64(be->ops->last_stall_ns(be), 360 - 170, "stall counts only the wait for copies");
	tap_ok(k1 == 1 && k2 == 2 && k3 == 3 && s2 == 1 && s3 == 2,
	       "each engine numbers its own submissions");
	memset(&f, 0, sizeof(f));
	s4 = be->ops->copy(be, DAO_ENGINE_D2H, 0, NULL, 1, &f, DAO_WHY_EVICT); /* after s2: [360, 362] */
	s5 = be->ops->copy(be, DAO_ENGINE_H2D, 0, NULL, 1, &f, DAO_WHY_FETCH); /* [130, 131] */
	TAP_IS_STATUS(be->ops->wait(be, &f), DAO_OK, "wait returns at once");
	dao_backend_sim_result(be, &r);
	TAP_IS_U64(r.end_ns, 1370, "modeled time: the last operation's end");
	TAP_IS_U64(r.compute_ns, 60 + 10 + 1010, "compute time: sum of kernel durations");
	TAP_IS_U64(r.stall_ns, 100 + 0 + 190, "stall time: sum of stalls");
	TAP_IS_U64(r.h2d_busy_ns, 100 + 30 + 1, "h2d busy time");
	TAP_IS_U64(r.d2h_busy_ns, 200 + 2, "d2h busy time (half the bandwidth)");
	TAP_IS_U64(r.nspans, 8, "every operation recorded");
	tap_ok(r.nspans == 8 && r.spans[1].engine == DAO_ENGINE_COMPUTE &&
		       r.spans[1].start_ns == 100 && r.spans[1].end_ns == 160 &&
		       r.spans[1].resident_bytes == 120 && r.spans[1].bytes == 20 &&
		       r.spans[6].engine == DAO_ENGINE_D2H && r.spans[6].start_ns == 360 &&
		       r.spans[7].start_ns == 130 && s4 == 2 && s5 == 3,
	       "spans carry engine, times, bytes and residency");
	be->ops->destroy(be);
}

int main(void)
{
	test_presets();
	test_file();
	test_create();
	test_timeline();
	tap_plan_done();
	return tap_exit();
}
