/* SPDX-License-Identifier: MIT */
/*
 * um_records.h - DAO_CUDAMODEL_UM_RECORDS=<file>: the pages the model
 * moved or faulted, written at exit in the records format of the CUPTI
 * collector, in CUPTI's terms.
 */
#ifndef DAO_CUDAMODEL_RECORDS_UM_RECORDS_H
#define DAO_CUDAMODEL_RECORDS_UM_RECORDS_H

#include <stdint.h>

enum cm_um_kind { CM_UM_HTOD, CM_UM_DTOH, CM_UM_CPU_FAULT, CM_UM_GPU_FAULT, CM_UM_REMOTE_MAP };
/* CUPTI's migration causes and remote-map causes, by value. */
#define CM_CAUSE_NONE (-1) /* a move that is not recorded (a discard) */
#define CM_CAUSE_USER 1
#define CM_CAUSE_COHERENCE 2
#define CM_CAUSE_EVICTION 4
#define CM_REMOTE_POLICY 3
#define CM_REMOTE_OUT_OF_MEMORY 4

void cm_um_init(void); /* once, at start */
/* Lock held (or inside the fault handler); allocates nothing. */
void cm_um_record(enum cm_um_kind kind, const void *addr, uint64_t value, int cause);
void cm_um_write(void); /* at exit */

#endif /* DAO_CUDAMODEL_RECORDS_UM_RECORDS_H */
