/* SPDX-License-Identifier: MIT */
/*
 * summary.h - a device's figures as one line when DAO_SUMMARY asks for it
 * (summary.c), written once the executor has stopped.
 */
#ifndef DAO_CORE_SUMMARY_H
#define DAO_CORE_SUMMARY_H

#include "core/objects.h"

/* SLURM_JOB_ID as a number; 0 when absent or not a plain decimal. */
uint64_t summary_slurm_job_id(void);
void summary_write(const struct device *d);

#endif /* DAO_CORE_SUMMARY_H */
