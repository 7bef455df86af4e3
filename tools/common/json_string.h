/* SPDX-License-Identifier: MIT */
/*
 * json_string.h - the JSON string writer the tools share (daoctl, daosim):
 * the bottom of tools/, it includes none of their headers and they link it
 * (tools/common/common.mk).
 */
#ifndef DAO_TOOLS_JSON_STRING_H
#define DAO_TOOLS_JSON_STRING_H

#include <stdio.h>

/*
 * s as a JSON string, with its quotes: '"' and '\' escaped by a backslash,
 * the control bytes 0x01-0x1f as \u00XX, every other byte as it is (UTF-8
 * passes through; DEL, 0x7f, is no control character to JSON).
 */
void json_string(FILE *f, const char *s);

#endif /* DAO_TOOLS_JSON_STRING_H */
