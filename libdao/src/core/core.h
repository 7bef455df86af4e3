/* SPDX-License-Identifier: MIT */
/*
 * core.h - a map of libdao's layers; it declares nothing. Each layer is a
 * folder of libdao/src; a file calls and includes only its own folder
 * (without circles) and the folders below its own. tests/layers/check-layers.pl
 * holds the tree to this in `make check`; Documentation/design.md says why.
 * "Decision N" in the sources is decision N of Documentation/architecture.md.
 *
 *   api/      the DAO_API entry points: buffers.c, submit.c, registry.c
 *             (open/close), config.c (resolving a dao_config)
 *     |
 *   core/     objects.h (the objects and how they relate; a device is a
 *             composition of its queue, residency, statistics and
 *             publisher), registry.c
 *             (handles), device.c, record.c (record lifetime), queue.c,
 *             executor.c, residency.c, victim.c (eviction order),
 *             publish.c (residency for daoctl, dao_publish.h),
 *             summary.c (DAO_SUMMARY: the figures as one line at close)
 *     |
 *   policy/   policy.c: one table per policy (victim key, prefetch horizon,
 *             clean-ahead)
 *   backend/  backend.h (what the executor asks of a device), backends.c
 *             (the table { kind, name, create }), host.c, cuda/ (managed,
 *             explicit), pin.c (the dao.ko client), sim.c (libdao-sim.a only)
 *     |
 *   mem/      arena.c (device space)
 *   trace/    trace_write.c (DAO_TRACE), trace_read.c (libdao-sim.a only)
 *     |
 *   base/     log.c, status.c (names of statuses, backends, policies),
 *             fence.h (engines and fences)
 */
#ifndef DAO_CORE_H
#define DAO_CORE_H
#endif /* DAO_CORE_H */
