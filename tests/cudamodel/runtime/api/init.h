/* SPDX-License-Identifier: MIT */
/*
 * init.h - the model's start and end. The first entry point that needs
 * the model starts it, once, from the top: the switches read, then each
 * layer below started (the card, the clocks, the fault handler, the
 * records, the legacy default stream); at exit the counters printed
 * (DAO_CUDAMODEL_STATS=1), the records written, and a process that had a
 * refused call failed.
 */
#ifndef DAO_CUDAMODEL_API_INIT_H
#define DAO_CUDAMODEL_API_INIT_H

#include <stdbool.h>

/* The switches, read once at start. */
struct cm_config {
	int devices;     /* DAO_CUDAMODEL_DEVICES, default 1 */
	bool no_driver;  /* DAO_CUDAMODEL_DRIVER=0 */
	bool no_pin;     /* DAO_CUDAMODEL_PIN=0: pinning refused, as over a locked-memory limit */
	bool no_discard; /* DAO_CUDAMODEL_DISCARD=0: a driver without discard */
	/* DAO_CUDAMODEL_QUERY=0: cudaEventQuery of a recorded event always
	 * says not ready, as for a card that is always behind: only waits
	 * order the host after the streams, so every host access that a
	 * lucky query would have ordered is a race, whatever the timing. */
	bool no_query;
};

extern struct cm_config cm_config;

void cm_init(void); /* once; takes no lock */
/* An entry point's way in: the model started, the lock taken (cm_unlock
 * leaves). */
void cm_enter(void);

#endif /* DAO_CUDAMODEL_API_INIT_H */
