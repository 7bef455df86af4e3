/* SPDX-License-Identifier: MIT */
/*
 * trace_writer.h - what the core calls to record a dao-trace v1 (DAO_TRACE).
 * Implemented in trace_write.c.
 *
 * Kind, label and name are written as single words (blanks and control
 * bytes become '_', a leading '#' too, at most 255 bytes kept; a NULL name
 * is written "kernel"); a record naming an id out of range is dropped and
 * dao_trace_writer_close() then returns DAO_ERR_INVALID; any failed write
 * makes it return DAO_ERR_IO.
 */
#ifndef DAO_TRACE_WRITER_H
#define DAO_TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "dao.h"

struct dao_trace_writer;

dao_status dao_trace_writer_open(const char *path, struct dao_trace_writer **out);
void dao_trace_writer_buffer(struct dao_trace_writer *w, uint64_t id, uint64_t bytes,
			     const char *kind, const char *label);
void dao_trace_writer_kernel(struct dao_trace_writer *w, const char *name, uint64_t flops,
			     const uint64_t *r, size_t nr, const uint64_t *wr, size_t nw,
			     const uint64_t *rw, size_t nrw);
/* A host kernel (DAO_LAUNCH_HOST): the kernel's line as a comment, "# host
 * k ...", which readers skip: to the device it is a host access, as
 * dao_read and dao_write are, which a trace does not record either. */
void dao_trace_writer_host_kernel(struct dao_trace_writer *w, const char *name, uint64_t flops,
				  const uint64_t *r, size_t nr, const uint64_t *wr, size_t nw,
				  const uint64_t *rw, size_t nrw);
void dao_trace_writer_free(struct dao_trace_writer *w, uint64_t id);
void dao_trace_writer_iteration(struct dao_trace_writer *w, uint64_t n);
dao_status dao_trace_writer_close(struct dao_trace_writer *w);

#endif /* DAO_TRACE_WRITER_H */
