/* SPDX-License-Identifier: MIT */
/* card.c - the modeled card and its counters (card.h). */
#include "base/report.h"
#include "state/card.h"

struct cm_card cm_card;

void cm_card_init(uint64_t size)
{
	cm_card.size = size;
	cm_card.n.card_bytes = size;
}

void cm_card_update(void)
{
	struct dao_cudamodel_counters *n = &cm_card.n;

	n->managed_device_bytes = cm_card.managed_dev_bytes;
	n->device_bytes = cm_card.dev_alloc_bytes + cm_card.managed_dev_bytes;
	if (n->device_bytes > n->device_bytes_peak)
		n->device_bytes_peak = n->device_bytes;
	if (n->managed_device_bytes > n->managed_device_peak)
		n->managed_device_peak = n->managed_device_bytes;
	if (n->device_bytes > cm_card.size)
		cm_fail("the card holds %llu bytes, more than its %llu",
			(unsigned long long)n->device_bytes, (unsigned long long)cm_card.size);
}

bool cm_card_fits(uint64_t bytes)
{
	return cm_card.dev_alloc_bytes + cm_card.managed_dev_bytes + bytes <= cm_card.size;
}

uint64_t cm_card_free(void)
{
	return cm_card.size - cm_card.dev_alloc_bytes - cm_card.managed_dev_bytes;
}

void cm_card_counters(struct dao_cudamodel_counters *out)
{
	*out = cm_card.n;
	out->misuses = cm_misuses();
}

void cm_card_reset_peaks(void)
{
	cm_card.n.device_bytes_peak = cm_card.n.device_bytes;
	cm_card.n.managed_device_peak = cm_card.n.managed_device_bytes;
}
