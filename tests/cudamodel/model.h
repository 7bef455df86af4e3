/* SPDX-License-Identifier: MIT */
/*
 * model.h - the CUDA runtime model's shared state. One lock (model.lock)
 * guards everything; stream workers drop it only while they move bytes.
 *
 * Ordering is tracked with vector clocks over "actors": every host thread
 * that calls the model and every stream is one. An operation's clock is
 * its stream's clock at enqueue; it joins the enqueuing thread's clock
 * (what the host did before the call happens before the operation), and
 * waits join the clocks of what they wait for.
 */
#ifndef DAO_CUDAMODEL_MODEL_H
#define DAO_CUDAMODEL_MODEL_H

#include <cuda_runtime.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "cudamodel.h"

#define CM_ACTORS 128
#define CM_PAGE (64ull << 10)  /* the device's large page: libdao's granule */
#define CM_DEV_ROUND (2ull << 20) /* cudaMalloc takes the card in 2 MiB blocks */
#define CM_FRAMES 6
#define CM_EXIT 66 /* exit status of a process the model stops */

struct cm_vc {
	uint32_t c[CM_ACTORS];
};

struct cm_site {
	void *pc[CM_FRAMES];
	int n;
};

/* Allocation kinds. */
enum cm_kind { CM_DEVICE, CM_MANAGED, CM_HOSTALLOC, CM_REGISTERED };

/* Managed page states and flags. */
#define PG_DEVICE 1u    /* resident on the card */
#define PG_POISON 2u    /* some bytes were discarded (poison[] says which) */
#define PG_PREF_HOST 4u /* preferred location: host */
#define PG_PREF_DEV 8u
#define PG_ACCESSED 16u /* accessed-by the device: host pages mapped remotely */
/* On the host with no physical page yet (never touched since allocated):
 * the host's first touch is a CPU page fault that populates it. A page
 * that was prefetched or discarded either way has one where it went (as
 * documented: both populate and map at their destination). */
#define PG_EMPTY 32u
/* What keeps the caller's mapping of a page closed (PROT_NONE), pending
 * stream work aside (page_closed, memory.c). */
#define PG_CLOSED (PG_DEVICE | PG_POISON | PG_EMPTY)
#define PG_OPEN 64u     /* pending, but a host touch that conflicted with nothing opened it */

struct cm_alloc {
	enum cm_kind kind;
	char *base;    /* what the caller got */
	char *alias;   /* the model's own mapping (device, managed) */
	uint64_t size; /* asked for */
	uint64_t span; /* mapped (rounded) */
	int fd;
	uint32_t npages;
	uint8_t *page;     /* managed: PG_* per CM_PAGE */
	uint32_t *pending; /* managed: per page, stream operations on it enqueued, not yet run */
	uint64_t **poison; /* managed: per page, a bitmap of discarded bytes or NULL */
	struct cm_site site, discard_site;
	struct cm_alloc *next;
};

struct cm_stream;

/*
 * A stream operation: the first member of each kind's own struct (a copy,
 * a prefetch, a kernel, an event's record, a wait), which its run function
 * casts back to and the worker frees as one block once it has run. The
 * worker knows no kind: it calls run.
 */
struct cm_op {
	uint64_t index; /* position in its stream, from 1 */
	/* Called by the stream's worker with the lock held; it may drop the
	 * lock while the bytes change. */
	void (*run)(struct cm_op *op);
	struct cm_site site;
	struct cm_op *next;
};

struct cm_stream {
	unsigned flags;
	bool legacy, dead, exited;
	int actor;
	struct cm_vc vc;
	uint64_t enqueued, completed;
	struct cm_op *head, *tail;
	pthread_t worker;
	pthread_cond_t cv;
	struct cm_stream *next_all;
};

struct cm_state {
	pthread_mutex_t lock;
	bool ready;
	int devices;     /* DAO_CUDAMODEL_DEVICES */
	bool no_driver;  /* DAO_CUDAMODEL_DRIVER=0 */
	bool no_pin;     /* DAO_CUDAMODEL_PIN=0: pinning refused, as over a locked-memory limit */
	bool no_discard; /* DAO_CUDAMODEL_DISCARD=0: a driver without discard */
	/* DAO_CUDAMODEL_QUERY=0: cudaEventQuery of a recorded event always
	 * says not ready, as for a card that is always behind: only waits
	 * order the host after the streams, so every host access that a
	 * lucky query would have ordered is a race, whatever the timing. */
	bool no_query;
	uint64_t card;   /* DAO_CUDAMODEL_MEM */
	uint64_t dev_alloc_bytes, managed_dev_bytes;
	struct dao_cudamodel_counters n;
	uint32_t clock[CM_ACTORS]; /* each actor's latest tick, never reset */
	bool actor_used[CM_ACTORS];
	/* An actor that ended (a stream destroyed and drained, a thread
	 * gone): everything it did up to this tick counts as ordered before
	 * what anyone does later, as the joins and frees the model cannot
	 * see (pthread_join, free and malloc reusing pageable memory) do. */
	uint32_t retired[CM_ACTORS];
	struct cm_alloc *allocs;
	struct cm_stream *streams; /* every stream ever made (never freed) */
	struct cm_stream *legacy;
};

extern struct cm_state model;

/* core.c */
void cm_init(void);          /* once; takes no lock */
void cm_lock(void);
void cm_unlock(void);
struct cm_vc *cm_host_vc(int *actor); /* the calling thread's clock (lock held) */
void cm_vc_join(struct cm_vc *a, const struct cm_vc *b);
int cm_actor_new(void);
void cm_actor_free(int a);
void cm_site_here(struct cm_site *s);
void cm_site_print(const char *what, const struct cm_site *s);
/* A refused call: logged with its caller, counted; returns err. */
cudaError_t cm_misuse(const char *call, cudaError_t err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same with the caller's site (cm_site_here in the entry point). */
cudaError_t cm_vmisuse(const char *call, cudaError_t err, const struct cm_site *site,
		       const char *fmt, va_list ap);
cudaError_t cm_ret(cudaError_t err); /* sets the thread's last error */
void cm_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* um_records.c: DAO_CUDAMODEL_UM_RECORDS, in CUPTI's terms. */
enum cm_um_kind { CM_UM_HTOD, CM_UM_DTOH, CM_UM_CPU_FAULT, CM_UM_GPU_FAULT, CM_UM_REMOTE_MAP };
/* CUPTI's migration causes and remote-map causes, by value. */
#define CM_CAUSE_NONE (-1) /* a move that is not recorded (a discard) */
#define CM_CAUSE_USER 1
#define CM_CAUSE_COHERENCE 2
#define CM_CAUSE_EVICTION 4
#define CM_REMOTE_POLICY 3
#define CM_REMOTE_OUT_OF_MEMORY 4
void cm_um_init(void);
/* Lock held (or inside the fault handler); allocates nothing. */
void cm_um_record(enum cm_um_kind kind, const void *addr, uint64_t value, int cause);
void cm_um_write(void); /* at exit */

/* memory.c */
void cm_mem_init(void);
struct cm_alloc *cm_find(const void *p); /* allocation holding p (lock held) */
void cm_card_update(void);
/* Move managed pages [first, first + n) of m; counts nothing, records
 * each run of pages that changes place as migrations of cause (CUPTI's;
 * CM_CAUSE_NONE: not recorded). */
void cm_pages_move(struct cm_alloc *m, uint32_t first, uint32_t n, bool to_device, int cause);
/* Make room on the card for `bytes`, evicting managed pages not in keep. */
void cm_card_make_room(uint64_t bytes, const struct cm_alloc *keep);
void cm_device_access(struct cm_alloc *m, uint64_t off, uint64_t len);
void cm_protect(struct cm_alloc *m, uint32_t first, uint32_t n);
/* A stream operation on [off, off + len) of m enqueued (delta 1) or run
 * (-1): while one is pending, the pages are closed to the host too. */
void cm_pages_pending(struct cm_alloc *m, uint64_t off, uint64_t len, int delta);

/* checker.c */
/* An access by actor with clock vc (vc->c[actor] its epoch) to
 * [p, p + len) (vc NULL: the calling host thread, not recorded): reports a race with an unordered conflicting access and
 * stops the process; then records it. */
void cm_check(const void *p, uint64_t len, bool write, int actor, const struct cm_vc *vc,
	      const struct cm_site *site, const char *what);
void cm_check_forget(const void *p, uint64_t len);
void cm_poison_set(struct cm_alloc *m, uint64_t off, uint64_t len, const struct cm_site *site);
void cm_poison_clear(struct cm_alloc *m, uint64_t off, uint64_t len);
/* The same for one whole page, without freeing (signal handler). */
void cm_poison_drop_page(struct cm_alloc *m, uint32_t pg);
/* Stops the process if [off, off + len) of m holds discarded bytes. */
void cm_poison_check(struct cm_alloc *m, uint64_t off, uint64_t len, const struct cm_site *site,
		     const char *what);

/* streams.c */
void cm_streams_init(void);
/* The stream a handle names: NULL (and a misuse) when it is not live. */
struct cm_stream *cm_stream_of(cudaStream_t s, const char *call, cudaError_t *err);
/* Order a new op of s after the host and (legacy rules) other streams,
 * tick s's clock, append op. Lock held. */
void cm_enqueue(struct cm_stream *s, struct cm_op *op, int host_actor, struct cm_vc *host);
/* Block until op index of s completes, then the host's clock joins vc. */
void cm_host_wait(struct cm_stream *s, uint64_t index, const struct cm_vc *vc);

#endif /* DAO_CUDAMODEL_MODEL_H */
