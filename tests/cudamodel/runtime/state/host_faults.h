/* SPDX-License-Identifier: MIT */
/*
 * host_faults.h - the host touching device and managed memory, seen as a
 * SIGSEGV on the caller's mapping: a touch of device memory stops the
 * process naming the address, the allocation and the faulting instruction;
 * a touch of a closed managed page is checked for races and for discarded
 * bytes, then migrates the page back or populates it (counted, recorded)
 * and opens it. Faults elsewhere go to the handler installed before.
 */
#ifndef DAO_CUDAMODEL_STATE_HOST_FAULTS_H
#define DAO_CUDAMODEL_STATE_HOST_FAULTS_H

void cm_host_faults_init(void); /* once, at start */

#endif /* DAO_CUDAMODEL_STATE_HOST_FAULTS_H */
