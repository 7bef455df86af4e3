/* SPDX-License-Identifier: GPL-2.0 */
/*
 * json.h - just enough JSON reading for the VM tests to check what daoctl
 * prints: values are found in place in the text (no tree is built), and
 * every step refuses text that is not well formed.
 *
 * A value is a pointer into the text at its first character (leading white
 * space allowed); every function takes NULL and then fails, so lookups chain.
 */
#ifndef DAO_KTEST_JSON_H
#define DAO_KTEST_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Just past the value at p, or NULL when it is not well formed. */
const char *json_skip(const char *p);
/* The text is one well-formed value with only white space after it. */
bool json_valid(const char *text);
/* Member key of the object at obj; NULL when absent or obj is no object. */
const char *json_get(const char *obj, const char *key);
/* Members by a dotted path ("module.limit_bytes"): keys have no dots. */
const char *json_path(const char *obj, const char *path);
/* Element i of the array at arr; NULL past its end or when no array. */
const char *json_at(const char *arr, size_t i);
/* A non-negative integer without fraction or exponent that fits in 64 bits. */
bool json_u64(const char *v, uint64_t *out);
/* The value is exactly the literal true, false or null. */
bool json_is(const char *v, const char *literal);
/* A string without escapes other than \" \\ \/, copied with its NUL. */
bool json_string(const char *v, char *buf, size_t cap);

#endif
