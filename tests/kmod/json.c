// SPDX-License-Identifier: GPL-2.0
/*
 * json.c - walking JSON text in place (json.h). Nesting is bounded so that
 * malformed input cannot run the stack out.
 */
#include <string.h>

#include "json.h"

#define MAX_DEPTH 64

static const char *ws(const char *p)
{
	while (p && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* p at the opening quote; just past the closing one. */
static const char *skip_string(const char *p)
{
	for (p++; *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL; /* control characters, the NUL included */
		if (*p != '\\')
			continue;
		p++;
		if (*p == 'u') {
			for (int i = 1; i <= 4; i++)
				if (!is_hex(p[i]))
					return NULL;
			p += 4;
		} else if (!strchr("\"\\/bfnrt", *p) || !*p) {
			return NULL;
		}
	}
	return p + 1;
}

static const char *digits(const char *p)
{
	const char *s = p;

	while (*p >= '0' && *p <= '9')
		p++;
	return p == s ? NULL : p;
}

static const char *skip_number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (!(p = digits(p)))
		return NULL;
	if (*p == '.' && !(p = digits(p + 1)))
		return NULL;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		p = digits(p);
	}
	return p;
}

static const char *skip_value(const char *p, int depth);

/* Object or array at p (its opening bracket), just past its closing one. */
static const char *skip_container(const char *p, int depth)
{
	char close = *p == '{' ? '}' : ']';

	if (depth >= MAX_DEPTH)
		return NULL;
	p = ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (close == '}') {
			if (*p != '"' || !(p = ws(skip_string(p))) || *p != ':')
				return NULL;
			p++;
		}
		p = ws(skip_value(p, depth + 1));
		if (!p)
			return NULL;
		if (*p == close)
			return p + 1;
		if (*p != ',')
			return NULL;
		p = ws(p + 1);
	}
}

static const char *skip_value(const char *p, int depth)
{
	p = ws(p);
	if (!p)
		return NULL;
	switch (*p) {
	case '{':
	case '[':
		return skip_container(p, depth);
	case '"':
		return skip_string(p);
	case 't':
		return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f':
		return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n':
		return strncmp(p, "null", 4) ? NULL : p + 4;
	default:
		return (*p == '-' || (*p >= '0' && *p <= '9')) ? skip_number(p) : NULL;
	}
}

const char *json_skip(const char *p)
{
	return skip_value(p, 0);
}

bool json_valid(const char *text)
{
	const char *end = ws(json_skip(text));

	return end && !*end;
}

const char *json_get(const char *obj, const char *key)
{
	size_t len = strlen(key);
	const char *p = ws(obj);

	if (!p || *p != '{' || !json_skip(p))
		return NULL;
	p = ws(p + 1);
	while (*p == '"') {
		const char *name = p + 1, *end = skip_string(p);

		p = ws(end);
		p = ws(p + 1); /* the colon: the object was checked whole */
		if ((size_t)(end - 1 - name) == len && !strncmp(name, key, len))
			return p;
		p = ws(json_skip(p));
		if (*p != ',')
			return NULL;
		p = ws(p + 1);
	}
	return NULL;
}

const char *json_path(const char *obj, const char *path)
{
	char key[64];

	while (obj && *path) {
		size_t len = strcspn(path, ".");

		if (len >= sizeof(key))
			return NULL;
		memcpy(key, path, len);
		key[len] = 0;
		obj = json_get(obj, key);
		path += len + (path[len] == '.');
	}
	return obj;
}

const char *json_at(const char *arr, size_t i)
{
	const char *p = ws(arr);

	if (!p || *p != '[' || !json_skip(p))
		return NULL;
	p = ws(p + 1);
	if (*p == ']')
		return NULL;
	for (;;) {
		if (!i--)
			return p;
		p = ws(json_skip(p));
		if (*p != ',')
			return NULL;
		p = ws(p + 1);
	}
}

bool json_u64(const char *v, uint64_t *out)
{
	const char *p = ws(v), *end = p ? skip_number(p) : NULL;
	uint64_t n = 0;

	if (!end || *p == '-' || (*p == '0' && end - p > 1))
		return false;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9' || n > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return false;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	*out = n;
	return true;
}

bool json_is(const char *v, const char *literal)
{
	const char *p = ws(v);
	size_t len = strlen(literal);

	return p && !strncmp(p, literal, len) && json_skip(p) == p + len;
}

bool json_string(const char *v, char *buf, size_t cap)
{
	const char *p = ws(v), *end;
	size_t n = 0;

	if (!p || *p != '"' || !(end = skip_string(p)))
		return false;
	for (p++; p < end - 1; p++) {
		if (*p == '\\') {
			p++;
			if (*p != '"' && *p != '\\' && *p != '/')
				return false;
		}
		if (n + 1 >= cap)
			return false;
		buf[n++] = *p;
	}
	if (!cap)
		return false;
	buf[n] = 0;
	return true;
}
