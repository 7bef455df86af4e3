/* SPDX-License-Identifier: MIT */
/*
 * chunks.h - memory for records and slot tables in huge-page-sized
 * mappings, kept for reuse across devices and contexts (chunks.c).
 */
#ifndef DAO_CORE_CHUNKS_H
#define DAO_CORE_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>

#define CHUNK_BYTES (2u << 20)

/* A fresh, zeroed mapping of `bytes` aligned to CHUNK_BYTES, advised for
 * huge pages, or NULL; munmap gives it back. */
void *chunk_map(size_t bytes);
/* A CHUNK_BYTES mapping aligned to CHUNK_BYTES (the kernel may back it
 * with one huge page), or NULL. *zero: never used, all zero; otherwise
 * one that chunk_put gave back, with whatever it held. */
void *chunk_get(bool *zero);
/* Fault a fresh chunk in now, on the calling thread (dao_open: a setup
 * cost of opening, not of the first create). One store of a zero byte: with
 * huge pages that one fault brings the whole chunk in; without them one
 * 4 KiB page, and the rest comes as creates reach it. Still all zero. */
void chunk_fault_in(void *p);
/* Give a chunk_get mapping back: kept for the next chunk_get (a few), or
 * unmapped. */
void chunk_put(void *p);

#endif /* DAO_CORE_CHUNKS_H */
