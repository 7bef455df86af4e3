/* SPDX-License-Identifier: MIT */
/*
 * report.h - what the model reports: a failure that stops the process
 * (its exit status CM_EXIT), and a refused call (the runtime's error,
 * printed with its call site and counted: a process that had any fails at
 * exit, api/init.c).
 */
#ifndef DAO_CUDAMODEL_BASE_REPORT_H
#define DAO_CUDAMODEL_BASE_REPORT_H

#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdint.h>

#include "base/site.h"

#define CM_EXIT 66 /* exit status of a process the model stops */

void cm_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* A refused call: logged with its caller, counted; returns err (as the
 * calling thread's last error). */
cudaError_t cm_misuse(const char *call, cudaError_t err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same with the caller's site (cm_site_here in the entry point). */
cudaError_t cm_vmisuse(const char *call, cudaError_t err, const struct cm_site *site,
		       const char *fmt, va_list ap);
/* Refused calls so far; with or without the lock. */
uint64_t cm_misuses(void);

#endif /* DAO_CUDAMODEL_BASE_REPORT_H */
