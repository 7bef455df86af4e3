/* SPDX-License-Identifier: MIT */
/* counters.c - the counters tests read (cudamodel.h). */
#include "api/init.h"
#include "base/lock.h"
#include "cudamodel.h"
#include "state/card.h"

void dao_cudamodel_counters(struct dao_cudamodel_counters *out)
{
	cm_enter();
	cm_card_counters(out);
	cm_unlock();
}

void dao_cudamodel_reset_peaks(void)
{
	cm_enter();
	cm_card_reset_peaks();
	cm_unlock();
}
