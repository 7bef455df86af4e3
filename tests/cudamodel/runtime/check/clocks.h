/* SPDX-License-Identifier: MIT */
/*
 * clocks.h - what orders what: vector clocks over "actors". Every host
 * thread that calls the model and every stream is one. An operation's
 * clock is its stream's clock at enqueue; it joins the enqueuing thread's
 * clock (what the host did before the call happens before the operation),
 * and waits join the clocks of what they wait for. All with the lock held.
 */
#ifndef DAO_CUDAMODEL_CHECK_CLOCKS_H
#define DAO_CUDAMODEL_CHECK_CLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#define CM_ACTORS 128

struct cm_vc {
	uint32_t c[CM_ACTORS];
};

void cm_clocks_init(void); /* once, before any actor */
/* A new actor, its first tick in vc; fails the process past CM_ACTORS at
 * once. */
int cm_actor_new(struct cm_vc *vc);
/* An actor that ended (a stream destroyed and drained, a thread gone):
 * everything it did counts as ordered before what anyone does later, as
 * the joins and frees the model cannot see (pthread_join, free and malloc
 * reusing pageable memory) do. Its slot is reused with its clock going on
 * from where it was. */
void cm_actor_free(int a);
/* The calling host thread's clock and actor, made on its first call. */
struct cm_vc *cm_host_vc(int *actor);
void cm_vc_join(struct cm_vc *a, const struct cm_vc *b);
/* actor's next tick, recorded in vc: what actor does from now on is not
 * ordered before what it did up to here. */
void cm_vc_tick(struct cm_vc *vc, int actor);
/* Whether tick of actor a happens before what vc knows. */
bool cm_vc_knows(const struct cm_vc *vc, int a, uint32_t tick);

#endif /* DAO_CUDAMODEL_CHECK_CLOCKS_H */
