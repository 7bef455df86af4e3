/* SPDX-License-Identifier: MIT */
/*
 * core.h - a map of libdao's layers; it declares nothing. Each layer is a
 * folder of libdao/src; a file calls and includes only its own folder
 * (without circles) and the folders below its own. tests/layers/check-layers.pl
 * holds the tree to this in `make check`, this map included: it names every
 * file where it lies (a file and its header together), and no other.
 * Documentation/design.md says why. "Decision N" in the sources is decision
 * N of Documentation/architecture.md.
 *
 *   api/      the DAO_API entry points: buffers.c (create, view, retain,
 *             release, label, size), submit.c (launch, host access, sync,
 *             iteration, statistics), open.c (open, close, the shared
 *             devices), config.c (resolving a dao_config), enter.h (the
 *             shape every entry point shares)
 *     |
 *   core/     objects.h (the objects and how they relate; a device is a
 *             composition of its queue, residency, statistics and
 *             publisher), core.h (this map), handles.c (handles),
 *             device.c, record.c (record lifetime), chunks.c (the huge-page
 *             chunks records and slots are carved from), launch.c (a
 *             kernel launch: its operands resolved once, the locked path),
 *             inbox.c (the lock-free launch, the whole protocol), lock.c
 *             (the device mutex, spinning), queue.c, executor.c,
 *             residency.c (what is resident, fetches, evictions),
 *             victim.c (the eviction order's heaps; the order is the
 *             policy's), ask.c (asking the policy: its state, a
 *             prefetch's room, cleaning ahead, its hooks; the default
 *             for iterative jobs), horizon.c (the
 *             window's modeled time: due fetches, clean-ahead), publish.c
 *             (residency for daoctl, dao_publish.h), summary.c
 *             (DAO_SUMMARY: the figures as one line at close)
 *     |
 *   policy/   policy.h (what a policy decides, from which facts), policy.c
 *             (the table { id, name, ops } of the policies: the one list
 *             of them and their names), one file per policy: dao.c,
 *             belady.c, lru.c, fifo.c, plan.c (plan.h: its counts);
 *             plan_build.c (the plan policy's recorder and planner),
 *             plan_evict.c (the plan's replay of its evictions);
 *             prefetch.c (answers they share)
 *   backend/  backend.h (what the executor asks of a device), backends.c
 *             (the table { kind, name, create }: the one list of backends
 *             and their names), budget.c (a budget below a backend's
 *             allocation unit refused), memory_kind.c (separate
 *             and unified memory), host.c, pin.c (the dao.ko client), sim.c
 *             (libdao-sim.a only), cuda/cuda_backend.h, cuda/cuda_device.c
 *             (opening a CUDA device), cuda/cuda_engines.c (streams,
 *             events, fences), cuda/cuda_explicit.c, cuda/cuda_managed.c,
 *             cuda/switches.c (DAO_CUDA_MANAGED, diagnostic switches),
 *             cuda/request_log.c (DAO_CUDA_REQUEST_LOG: every residency
 *             request made of the driver), cuda/split_prefetch.c (a
 *             prefetch to the host cut into slices on streams of their own)
 *     |
 *   mem/      arena.c (device space), chunk_heap.c (host-addressable memory
 *             carved from a few large chunks with the arena: staging and
 *             managed memory of the CUDA backends)
 *   trace/    trace_write.c with trace_writer.h (DAO_TRACE), trace_read.c
 *             (libdao-sim.a only)
 *     |
 *   base/     log.c, status.c (names of statuses),
 *             fence.h (engines and fences), fault.c (the calls to the
 *             world beneath, each of which DAO_FAULT can fail on purpose),
 *             node_memory.c (what host memory the node can give the
 *             process: the host budget's bound)
 */
#ifndef DAO_CORE_H
#define DAO_CORE_H
#endif /* DAO_CORE_H */
