/* SPDX-License-Identifier: MIT */
/*
 * model.h - a map of the CUDA runtime model's layers; it declares nothing.
 * Each layer is a folder of tests/cudamodel/runtime/; a file calls and
 * includes only its own folder (without circles) and the folders below its
 * own, and the model is started from the top (api/init.c starts each layer
 * below). tests/layers/check-layers.pl holds the tree to this in `make
 * check`, this map included: it names every file where it lies (a file and
 * its header together), and no other. Documentation/cuda.md says what the
 * model does; cudamodel.h and cudamodel_lib.h (tests/cudamodel/) are what
 * tests and the library models may ask of it besides the runtime's API.
 *
 *   api/      the entry points, each started by cm_enter (the model started,
 *             the lock taken): init.c (the switches, the start of every
 *             layer, the checks at exit), device.c (the device's queries,
 *             valid memory locations), memory.c (cudaMalloc,
 *             cudaMallocManaged, cudaFree, cudaMemGetInfo, cudaMemAdvise),
 *             host_memory.c (pinned and registered host memory), copies.c
 *             (copies and memsets), prefetches.c (prefetches and discards
 *             of managed pages), stream_calls.c (streams created, destroyed,
 *             synchronised), events.c, kernels.c (the library models'
 *             kernels, cudamodel_lib.h), counters.c (cudamodel.h), model.h
 *             (this map)
 *     |
 *   state/    what the model holds: allocs.c (the allocations and their
 *             two mappings), pages.c (managed memory's page table: moves,
 *             the driver's evictions, the card's accesses), poison.c
 *             (discarded bytes), card.c (the card's size, what it holds, the
 *             counters), host_faults.c (the host touching device and
 *             managed memory: SIGSEGV), streams.c (streams and their worker
 *             threads, which run each operation through the function it
 *             carries, cm_op.run)
 *     |
 *   check/    the happens-before checker: clocks.c (actors and vector
 *             clocks), races.c (accesses to byte ranges checked and kept)
 *   records/  um_records.c (DAO_CUDAMODEL_UM_RECORDS, in CUPTI's terms)
 *     |
 *   base/     lock.c (the one lock), report.c (failures, refused calls),
 *             site.c (call sites), errors.c (the runtime's error codes and
 *             each thread's last error), ptr_set.c (the live handles)
 */
#ifndef DAO_CUDAMODEL_API_MODEL_H
#define DAO_CUDAMODEL_API_MODEL_H
#endif /* DAO_CUDAMODEL_API_MODEL_H */
