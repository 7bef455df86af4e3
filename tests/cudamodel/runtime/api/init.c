/* SPDX-License-Identifier: MIT */
/*
 * init.c - the model's start and end (init.h). DAO_CUDAMODEL_MEM, the
 * card's size, defaults to 1 GiB (suffixes K M G).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/init.h"
#include "base/lock.h"
#include "base/report.h"
#include "check/clocks.h"
#include "records/um_records.h"
#include "state/card.h"
#include "state/host_faults.h"
#include "state/streams.h"

struct cm_config cm_config;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static uint64_t env_bytes(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	uint64_t x;

	if (!v || !*v)
		return dflt;
	x = strtoull(v, &end, 0);
	switch (*end) {
	case 'k': case 'K': x <<= 10; break;
	case 'm': case 'M': x <<= 20; break;
	case 'g': case 'G': x <<= 30; break;
	case 0: break;
	default:
		cm_fail("%s=%s: not a size", name, v);
	}
	return x;
}

static bool env_off(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "0");
}

static void check_at_exit(void)
{
	/* Refused calls are the real runtime's errors too, but a test that
	 * makes one by mistake must not pass: DAO_CUDAMODEL_MISUSE_OK=1 is
	 * for tests that make them on purpose. */
	const char *ok = getenv("DAO_CUDAMODEL_MISUSE_OK");

	uint64_t n = cm_misuses();
	const char *stats = getenv("DAO_CUDAMODEL_STATS");

	if (stats && *stats == '1') {
		struct dao_cudamodel_counters c;

		cm_lock();
		cm_card_counters(&c);
		cm_unlock();
		fprintf(stderr,
			"cudamodel: card %llu, peak %llu (managed %llu); pages: %llu prefetched, "
			"%llu discarded, %llu device faults, %llu host faults, %llu fault "
			"migrations, %llu remote, %llu evicted, %llu host populations; %llu "
			"refused calls\n",
			(unsigned long long)c.card_bytes, (unsigned long long)c.device_bytes_peak,
			(unsigned long long)c.managed_device_peak,
			(unsigned long long)c.prefetch_migrations, (unsigned long long)c.discards,
			(unsigned long long)c.device_faults, (unsigned long long)c.host_faults,
			(unsigned long long)c.fault_migrations, (unsigned long long)c.remote_accesses,
			(unsigned long long)c.evictions, (unsigned long long)c.host_populations,
			(unsigned long long)c.misuses);
	}

	cm_um_write();
	if (n && !(ok && *ok == '1')) {
		fprintf(stderr, "cudamodel: %llu refused call(s): failing the process\n",
			(unsigned long long)n);
		_exit(CM_EXIT);
	}
}

static void init(void)
{
	const char *d = getenv("DAO_CUDAMODEL_DEVICES");

	cm_config.devices = d && *d ? atoi(d) : 1;
	cm_config.no_driver = env_off("DAO_CUDAMODEL_DRIVER");
	cm_config.no_pin = env_off("DAO_CUDAMODEL_PIN");
	cm_config.no_discard = env_off("DAO_CUDAMODEL_DISCARD");
	cm_config.no_query = env_off("DAO_CUDAMODEL_QUERY");
	cm_card_init(env_bytes("DAO_CUDAMODEL_MEM", 1ull << 30));
	cm_clocks_init();
	cm_host_faults_init();
	cm_um_init();
	cm_streams_init();
	atexit(check_at_exit);
}

void cm_init(void)
{
	pthread_once(&init_once, init);
}

void cm_enter(void)
{
	cm_init();
	cm_lock();
}
