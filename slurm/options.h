/* SPDX-License-Identifier: MIT */
/*
 * options.h - the values the dao SPANK plugin accepts, checked on the
 * submitting side before a job is queued.
 */
#ifndef DAO_SPANK_OPTIONS_H
#define DAO_SPANK_OPTIONS_H

#include <stddef.h>

/*
 * Each returns NULL when text is valid, else the reason it is not (a static
 * string). The grammar is libdao's (Documentation/libdao.md), so a value the
 * plugin lets through is one dao_open accepts.
 */
const char *dao_opt_check_budget(const char *text);    /* DAO_DEVICE_BUDGET */
const char *dao_opt_check_policy(const char *text);    /* DAO_POLICY */
const char *dao_opt_check_backend(const char *text);   /* DAO_BACKEND */
const char *dao_opt_check_lookahead(const char *text); /* DAO_LOOKAHEAD */

#endif
