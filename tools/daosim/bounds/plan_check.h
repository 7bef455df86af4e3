/* SPDX-License-Identifier: MIT */
/*
 * plan_check.h - whether a replayed schedule is feasible, from its own
 * timeline: what makes the planned schedule's time an upper bound.
 */
#ifndef DAOSIM_PLAN_CHECK_H
#define DAOSIM_PLAN_CHECK_H

#include "bound.h"
#include "../replay.h"

/*
 * r: a replay of in->trace at in->budget on in->model with its spans
 * recorded. DAO_OK when its timeline is a schedule of the trace on that
 * device: one kernel span per kernel of the trace, in its order, each
 * with the kernel's operand bytes and modeled duration and with at most
 * the budget allocated; on each engine one operation at a time; the
 * copies' bytes those the statistics report; the end the last span's.
 * Else DAO_ERR_BACKEND (the executor or the model broke a rule), err
 * saying what is wrong where.
 */
dao_status plan_check(const struct bound_input *in, const struct replay_result *r, char *err,
		      size_t errlen);

#endif /* DAOSIM_PLAN_CHECK_H */
