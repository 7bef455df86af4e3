/* SPDX-License-Identifier: MIT */
/* clocks.c - actors and vector clocks (clocks.h). */
#include <pthread.h>

#include "base/lock.h"
#include "base/report.h"
#include "check/clocks.h"

static uint32_t ticks[CM_ACTORS]; /* each actor's latest tick, never reset */
static bool actor_used[CM_ACTORS];
static uint32_t retired[CM_ACTORS]; /* each ended actor's last tick */

static pthread_key_t host_key;
static __thread int host_actor = -1;
/* In TLS, not allocated: a host fault may need it inside the signal
 * handler. */
static __thread struct cm_vc host_clock_storage;
static __thread struct cm_vc *host_clock;

static void host_gone(void *p)
{
	cm_lock();
	cm_actor_free(host_actor);
	cm_unlock();
}

void cm_clocks_init(void)
{
	pthread_key_create(&host_key, host_gone);
}

int cm_actor_new(struct cm_vc *vc)
{
	for (int a = 0; a < CM_ACTORS; a++)
		if (!actor_used[a]) {
			actor_used[a] = true;
			ticks[a]++;
			vc->c[a] = ticks[a];
			return a;
		}
	cm_fail("more than %d threads and streams at once", CM_ACTORS);
}

void cm_actor_free(int a)
{
	if (a >= 0) {
		actor_used[a] = false;
		retired[a] = ticks[a];
	}
}

struct cm_vc *cm_host_vc(int *actor)
{
	if (host_actor < 0) {
		host_clock = &host_clock_storage;
		host_actor = cm_actor_new(host_clock);
		pthread_setspecific(host_key, host_clock); /* for host_gone */
	}
	*actor = host_actor;
	return host_clock;
}

void cm_vc_join(struct cm_vc *a, const struct cm_vc *b)
{
	for (int i = 0; i < CM_ACTORS; i++)
		if (b->c[i] > a->c[i])
			a->c[i] = b->c[i];
}

void cm_vc_tick(struct cm_vc *vc, int actor)
{
	vc->c[actor] = ++ticks[actor];
}

bool cm_vc_knows(const struct cm_vc *vc, int a, uint32_t tick)
{
	return tick <= vc->c[a] || tick <= retired[a];
}
