/* SPDX-License-Identifier: MIT */
/*
 * open.c - opening and closing contexts, and the devices they share.
 *
 * Contexts that are not private attach to one device per backend kind: one
 * budget, one table, one eviction order for the whole process (decision 11).
 * The handles are core/handles.c's, the devices core/device.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "api/config.h"
#include "backend/backend.h"
#include "backend/backends.h"
#include "base/log.h"
#include "base/node_memory.h"
#include "core/device.h"
#include "core/inbox.h"
#include "core/lock.h"
#include "core/queue.h"
#include "core/record.h"
#include "core/handles.h"
#include "dao_sim.h"

/* The devices that contexts not private share, one per backend kind at
 * most (decision 11), linked through shared_next. Registry lock. */
static struct device *shared_devs;

static struct device *shared_device(dao_backend_kind kind)
{
	for (struct device *d = shared_devs; d; d = d->sharing.next)
		if (d->kind == kind)
			return d;
	return NULL;
}

static void shared_forget(struct device *d)
{
	for (struct device **p = &shared_devs; *p; p = &(*p)->sharing.next)
		if (*p == d) {
			*p = d->sharing.next;
			return;
		}
}

/* The host budget: explicit, or a share of what the node could ever give
 * this process (base/node_memory.c). */
static uint64_t host_budget_of(const struct resolved_config *rc, const struct node_memory *nm)
{
	return dao_budget_bytes(rc->host_budget, rc->host_budget_percent, nm->capacity);
}

/*
 * The host budget against the node (dao.h): one the node could never give
 * is refused here, since buffers that outgrow the node's memory would meet
 * the OOM killer instead of a status; what it can give now is checked by
 * the creates that need it, from d->host_room on (api/buffers.c). Not for
 * a backend that keeps no data (the simulator).
 */
static dao_status host_budget_admit(const struct resolved_config *rc, const struct dao_backend *be,
				    const struct node_memory *nm)
{
	uint64_t want = host_budget_of(rc, nm);

	if (!be->holds_data || want <= nm->capacity)
		return DAO_OK;
	dao_err("a host budget of %llu bytes exceeds the %llu bytes this node can give the "
		"process (%s)",
		(unsigned long long)want, (unsigned long long)nm->capacity, nm->capacity_by);
	return DAO_ERR_CONFIG;
}

static void host_room_init(struct device *d, const struct node_memory *nm)
{
	/* Half of it, as after every reading (api/buffers.c). */
	d->host.room = d->be->holds_data ? node_memory_backs(nm->available, 1) / 2 : UINT64_MAX;
}

/* auto: cuda-explicit when a CUDA device is usable, else host; said once
 * per process. Called with the registry locked. */
static dao_backend_kind auto_backend(void)
{
	static bool said;
	dao_backend_kind kind = dao_backend_auto_kind();

	if (!said) {
		if (kind == DAO_BACKEND_HOST)
			dao_info("backend auto: no usable CUDA device, using the host backend");
		else
			dao_info("backend auto: using %s", dao_backend_name(kind));
		said = true;
	}
	return kind;
}

static dao_status backend_open(const struct resolved_config *rc, struct dao_backend **out)
{
	const struct dao_backend_entry *e = dao_backend_entry(rc->backend);

	/* config_resolve lets no other kind through, and auto is resolved */
	if (!e || !e->create)
		return DAO_ERR_CONFIG;
	return e->create(e, rc->device_budget, rc->device_budget_percent, out);
}

static dao_status ctx_create(struct device *d, const struct resolved_config *rc,
			     struct ctx **out)
{
	/* Aligned: its cache lines are laid out (core/objects.h). */
	struct ctx *c = fault_aligned_alloc(_Alignof(struct ctx), sizeof(*c));

	if (!c)
		return DAO_ERR_NOMEM;
	memset(c, 0, sizeof(*c));
	c->dev = d;
	pthread_mutex_init(&c->slot_mu, NULL);
	c->log_level = rc->log_level;
	if (rc->job_name[0])
		memcpy(c->job_name, rc->job_name, sizeof(c->job_name));
	*out = c;
	return DAO_OK;
}

static dao_status open_on(struct device *d, const struct resolved_config *rc, bool shared,
			  dao_ctx *out, struct ctx **opened)
{
	struct ctx *c;
	dao_status st = ctx_create(d, rc, &c);

	if (st != DAO_OK)
		return st;
	st = registry_insert(c);
	if (st != DAO_OK) {
		pthread_mutex_destroy(&c->slot_mu);
		free(c);
		return st;
	}
	d->sharing.nctx++;
	d->sharing.shared = shared;
	if ((int)rc->log_level > d->report.log_level)
		d->report.log_level = rc->log_level;
	*out = (dao_ctx){ c->id };
	*opened = c;
	return DAO_OK;
}

/*
 * The memory a context's first creates need, faulted in on the opener's
 * thread before dao_open returns: the device's first chunk of records and
 * the context's first slot table, a huge page each (core/chunks.c). On a
 * virtual machine that is 0.1-0.3 ms (more when the host has taken the
 * memory back), once per process: paid by dao_open, not by the first
 * create, where it was most of what the first thousand creates cost.
 * Chunks a closed device or context left are reused and cost nothing.
 * The price: a context holds 2 MiB of slots and a device 2 MiB of records
 * resident from dao_open even if no buffer is ever created (they did from
 * the first create before). Done after the registry's mutex is let go:
 * other contexts' calls are not held up; nobody else has the handle yet.
 */
static void open_prime(struct ctx *c)
{
	rec_cache_prime(c->dev);
	pthread_mutex_lock(&c->slot_mu);
	slot_table_prime(c);
	pthread_mutex_unlock(&c->slot_mu);
}

/* The plan order a device's flags fix, for its log lines ("" when none). */
static const char *plan_order_text(uint32_t flags)
{
	if (flags & DAO_CONFIG_PLAN_CLEAN_FIRST)
		return ", plan order clean first";
	if (flags & DAO_CONFIG_PLAN_DAO_ORDER)
		return ", plan order dao's";
	return "";
}

/* Whether the plan policy's prefetches take their room at once, likewise. */
static const char *plan_eager_text(uint32_t flags)
{
	return flags & DAO_CONFIG_PLAN_EAGER ? ", plan prefetches eager" : "";
}

/*
 * A second shared context gets the device as it is: what it leaves unset it
 * takes from the device; what it asks for explicitly must be what the device
 * has. Budgets are compared after the rounding the device's budget went
 * through, so two identical requests always agree. Determinism may be given
 * to a context that did not ask for it (it only removes overlap), never
 * taken from one that did; so may eager plan prefetches, which change
 * only when bytes move. Returns the name of the first setting that
 * differs, NULL when none.
 */
static const char *shared_conflict(const struct device *d, const struct resolved_config *rc,
				   const struct node_memory *nm)
{
	if (rc->budget_explicit) {
		uint64_t want = dao_budget_bytes(rc->device_budget, rc->device_budget_percent,
						 d->be->device_memory);

		if (dao_budget_round(want, d->be->align) != d->budget)
			return "device budget";
	}
	/* The device's policy changes at most once, under dev->mu, at an
	 * iteration mark (core/ask.c: the default for iterative jobs): read
	 * without it. */
	if (rc->policy_explicit && rc->policy != __atomic_load_n(&d->policy.id, __ATOMIC_ACQUIRE))
		return "policy";
	if ((rc->flags & DAO_CONFIG_DETERMINISTIC) && !(d->flags & DAO_CONFIG_DETERMINISTIC))
		return "determinism";
	if (rc->lookahead_explicit && rc->lookahead != d->lookahead)
		return "lookahead";
	if ((rc->flags & DAO_CONFIG_PLAN_ORDER) &&
	    (rc->flags & DAO_CONFIG_PLAN_ORDER) != (d->flags & DAO_CONFIG_PLAN_ORDER))
		return "plan order";
	if ((rc->flags & DAO_CONFIG_PLAN_EAGER) && !(d->flags & DAO_CONFIG_PLAN_EAGER))
		return "plan prefetch";
	if (rc->host_budget_explicit && host_budget_of(rc, nm) != d->host.budget)
		return "host budget";
	if (rc->trace_path[0] && (!d->trace.path || strcmp(rc->trace_path, d->trace.path)))
		return "trace file";
	return NULL;
}

static dao_status open_resolved(struct resolved_config *rc, dao_ctx *out)
{
	struct node_memory nm;
	struct dao_backend *be;
	struct device *d;
	struct ctx *c;
	dao_status st;
	const char *differs;

	/* Files to read: before the registry's mutex, which every open takes. */
	node_memory_read(&nm);
	registry_lock();
	if (rc->backend == DAO_BACKEND_AUTO)
		rc->backend = auto_backend();
	if (!(rc->flags & DAO_CONFIG_PRIVATE) && (d = shared_device(rc->backend))) {
		/* A budget no backend of this kind could honour is refused
		 * as it is when it opens the device. */
		st = rc->budget_explicit && rc->device_budget
			     ? dao_budget_check(dao_backend_name_of(d->be), rc->device_budget,
						d->be->align)
			     : DAO_OK;
		if (st != DAO_OK) {
			registry_unlock();
			return st;
		}
		differs = shared_conflict(d, rc, &nm);
		if (differs) {
			registry_unlock();
			dao_err("a context is already open on the %s device with another %s "
				"(budget %llu, policy %s, lookahead %u%s%s%s)",
				dao_backend_name(d->kind), differs, (unsigned long long)d->budget,
				dao_policy_name(__atomic_load_n(&d->policy.id, __ATOMIC_ACQUIRE)),
				d->lookahead, d->flags & DAO_CONFIG_DETERMINISTIC ? ", deterministic" : "",
				plan_order_text(d->flags), plan_eager_text(d->flags));
			return DAO_ERR_CONFLICT;
		}
		/* A context that chooses the policy the device has keeps it
		 * (before it opens, so that no first mark comes between; an
		 * open that then fails leaves the choice, which only keeps
		 * the policy the process asked for). */
		if (rc->policy_explicit)
			__atomic_store_n(&d->policy_choice.chosen, true, __ATOMIC_RELEASE);
		st = open_on(d, rc, true, out, &c);
		registry_unlock();
		if (st == DAO_OK)
			open_prime(c);
		return st;
	}
	st = backend_open(rc, &be);
	if (st == DAO_OK && (st = host_budget_admit(rc, be, &nm)) != DAO_OK)
		be->ops->destroy(be);
	if (st == DAO_OK)
		st = device_create(be, rc, host_budget_of(rc, &nm), &d);
	if (st == DAO_OK) {
		host_room_init(d, &nm);
		st = open_on(d, rc, !(rc->flags & DAO_CONFIG_PRIVATE), out, &c);
		if (st != DAO_OK) {
			device_destroy(d);
		} else if (!(rc->flags & DAO_CONFIG_PRIVATE)) {
			d->sharing.next = shared_devs;
			shared_devs = d;
		}
	}
	registry_unlock();
	if (st == DAO_OK) {
		open_prime(c);
		dao_info("opened context on %s backend, budget %llu bytes, policy %s, lookahead %u%s%s",
			 dao_backend_name(d->kind), (unsigned long long)d->budget,
			 dao_policy_name(d->policy.id), d->lookahead, plan_order_text(d->flags),
			 plan_eager_text(d->flags));
	}
	return st;
}

/* Everything logged while opening follows the level the config asks for. */
dao_status dao_open(const dao_config *cfg, dao_ctx *out)
{
	struct resolved_config rc;
	dao_status st;

	if (!out)
		return DAO_ERR_NULL;
	dao_log_scope_push(config_log_level(cfg));
	st = config_resolve(cfg, &rc);
	if (st == DAO_OK)
		st = open_resolved(&rc, out);
	dao_log_scope_pop();
	return st;
}

dao_status dao_open_on_backend(const dao_config *cfg, struct dao_backend *be, dao_ctx *out)
{
	struct node_memory nm;
	struct resolved_config rc;
	struct device *d;
	struct ctx *c;
	dao_status st;

	if (!be)
		return DAO_ERR_NULL;
	if (!out) {
		be->ops->destroy(be);
		return DAO_ERR_NULL;
	}
	dao_log_scope_push(config_log_level(cfg));
	st = config_resolve(cfg, &rc);
	if (st != DAO_OK) {
		be->ops->destroy(be);
		dao_log_scope_pop();
		return st;
	}
	node_memory_read(&nm);
	st = host_budget_admit(&rc, be, &nm);
	if (st != DAO_OK) {
		be->ops->destroy(be);
		dao_log_scope_pop();
		return st;
	}
	st = device_create(be, &rc, host_budget_of(&rc, &nm), &d);
	if (st != DAO_OK) {
		dao_log_scope_pop();
		return st;
	}
	host_room_init(d, &nm);
	registry_lock();
	st = open_on(d, &rc, false, out, &c);
	registry_unlock();
	if (st != DAO_OK)
		device_destroy(d);
	else
		open_prime(c);
	dao_log_scope_pop();
	return st;
}

/* Release every handle the context still holds; returns how many there were. */
static uint64_t release_all(struct ctx *c)
{
	struct device *d = c->dev;
	uint64_t leaked = 0;

	for (uint32_t i = 0; i < c->fresh; i++) {
		struct slot *s = &c->slots[i];

		if (!s->refs)
			continue;
		leaked++;
		pthread_mutex_lock(&c->slot_mu); /* writers hold both (objects.h) */
		s->refs = 0;
		s->gen++;
		pthread_mutex_unlock(&c->slot_mu);
		rec_unref(d, s->rec);
	}
	c->live_handles = 0;
	return leaked;
}

dao_status dao_close(dao_ctx h, uint64_t *leaked)
{
	struct op sync_op = { .kind = OP_SYNC, .blocking = true };
	struct device *d;
	struct ctx *c;
	uint64_t n;
	dao_status st;

	st = registry_close(h, &c);
	if (st != DAO_OK)
		return st;
	dao_log_scope_push(c->log_level);

	d = c->dev;
	dev_lock(d);
	n = release_all(c);
	pthread_mutex_lock(&c->slot_mu);
	rec_ctx_release(d, c); /* its spare records serve the device's other contexts */
	pthread_mutex_unlock(&c->slot_mu);
	sync_op.ctx = c;
	inbox_push(d, &sync_op);
	op_wait(d, &sync_op);
	st = c->failure;
	dev_unlock(d);
	if (n)
		dao_warn("context closed with %llu unreleased handle%s",
			 (unsigned long long)n, n == 1 ? "" : "s");
	if (leaked)
		*leaked = n;

	registry_lock();
	if (--d->sharing.nctx == 0) {
		shared_forget(d);
	} else {
		d = NULL;
	}
	registry_unlock();
	device_destroy(d);
	dao_log_scope_pop();
	slot_table_free(c);
	pthread_mutex_destroy(&c->slot_mu);
	free(c);
	return st;
}
