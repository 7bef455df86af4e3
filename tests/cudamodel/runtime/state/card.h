/* SPDX-License-Identifier: MIT */
/*
 * card.h - the modeled card: its size, what it holds (cudaMalloc's blocks
 * and card-resident managed pages, never more than its size: checked on
 * every change), and the counters tests read (cudamodel.h). The lock held.
 */
#ifndef DAO_CUDAMODEL_STATE_CARD_H
#define DAO_CUDAMODEL_STATE_CARD_H

#include <stdbool.h>
#include <stdint.h>

#include "cudamodel.h"

struct cm_card {
	uint64_t size;              /* DAO_CUDAMODEL_MEM */
	uint64_t dev_alloc_bytes;   /* cudaMalloc's, in 2 MiB blocks */
	uint64_t managed_dev_bytes; /* card-resident managed pages */
	struct dao_cudamodel_counters n;
};

extern struct cm_card cm_card;

void cm_card_init(uint64_t size); /* once, at start */
/* The counters after a change of what the card holds; fails the process
 * when it holds more than its size. */
void cm_card_update(void);
/* Whether bytes more fit on the card now. */
bool cm_card_fits(uint64_t bytes);
uint64_t cm_card_free(void);
/* The counters, refused calls included. */
void cm_card_counters(struct dao_cudamodel_counters *out);
/* The peaks reset to the values now. */
void cm_card_reset_peaks(void);

#endif /* DAO_CUDAMODEL_STATE_CARD_H */
