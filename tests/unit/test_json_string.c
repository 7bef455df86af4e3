/* SPDX-License-Identifier: MIT */
/*
 * test_json_string.c - the JSON string writer daoctl and daosim share
 * (tools/common/json_string.c): quotes and backslashes escaped, control
 * bytes as \u00XX, everything else (UTF-8, DEL) as it is; checked on
 * every byte value, and on strings as the tools print them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/common/json_string.h"
#include "tap.h"

/* json_string(s) as a NUL-terminated string (caller frees). */
static char *written(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		tap_bail("open_memstream");
	json_string(f, s);
	if (fclose(f))
		tap_bail("fclose");
	return buf;
}

static void check(const char *in, const char *want, const char *what)
{
	char *got = written(in);

	if (!tap_ok(strcmp(got, want) == 0, "%s", what))
		tap_diag("got %s, want %s", got, want);
	free(got);
}

/* Every byte 0x01-0xff alone: the one form JSON allows for it. */
static void every_byte(void)
{
	int bad = 0;

	for (int c = 1; c < 256; c++) {
		char in[2] = { (char)c, 0 }, want[16];
		char *got;

		if (c == '"' || c == '\\')
			snprintf(want, sizeof(want), "\"\\%c\"", c);
		else if (c < 0x20)
			snprintf(want, sizeof(want), "\"\\u%04x\"", c);
		else
			snprintf(want, sizeof(want), "\"%c\"", c);
		got = written(in);
		if (strcmp(got, want)) {
			if (!bad)
				tap_diag("byte 0x%02x: got %s, want %s", c, got, want);
			bad++;
		}
		free(got);
	}
	tap_ok(bad == 0, "every byte 0x01-0xff: escaped as JSON requires, else as it is (%d wrong)",
	       bad);
}

int main(void)
{
	tap_plan(9);
	check("", "\"\"", "the empty string: two quotes");
	check("h100", "\"h100\"", "plain ASCII as it is, in quotes");
	check("a\"b", "\"a\\\"b\"", "a quote escaped");
	check("C:\\dir\\f", "\"C:\\\\dir\\\\f\"", "backslashes escaped");
	check("line\nnext\ttab\r", "\"line\\u000anext\\u0009tab\\u000d\"",
	      "newline, tab, return as \\u00XX");
	check("\x01\x1f", "\"\\u0001\\u001f\"", "the first and last control byte");
	check("gr\xc3\xbc\xc3\x9f \xe2\x86\x92 \xf0\x9f\x98\x80", "\"gr\xc3\xbc\xc3\x9f \xe2\x86\x92 \xf0\x9f\x98\x80\"",
	      "UTF-8 of two, three and four bytes passes through");
	check("del\x7f/", "\"del\x7f/\"", "DEL and a slash as they are");
	every_byte();
	return tap_exit();
}
