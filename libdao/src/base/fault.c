/* SPDX-License-Identifier: MIT */
/* fault.c - failing libdao's calls to the world on purpose (fault.h). */
#include <inttypes.h>
#include <stdio.h>

#include "base/fault.h"

int fault_armed;

static const char *const kind_names[FAULT_KINDS] = {
	[FAULT_ALLOC] = "alloc", [FAULT_THREAD] = "thread", [FAULT_MMAP] = "mmap",
	[FAULT_OPEN] = "open",   [FAULT_IOCTL] = "ioctl",   [FAULT_SHM] = "shm",
};

/* Per kind: the call to fail (0: none) and whether every later one fails
 * too. Written only by fault_arm, before the calls it arms. */
static struct {
	uint64_t at;
	bool onwards;
} target[FAULT_KINDS];
static uint64_t calls[FAULT_KINDS]; /* atomic: any thread */
static bool counting;               /* print the counts at exit */

const char *fault_kind_name(enum fault_kind kind)
{
	return (unsigned)kind < FAULT_KINDS ? kind_names[kind] : "unknown";
}

uint64_t fault_count(enum fault_kind kind)
{
	return __atomic_load_n(&calls[kind], __ATOMIC_RELAXED);
}

bool fault_fire(enum fault_kind kind)
{
	uint64_t n = __atomic_add_fetch(&calls[kind], 1, __ATOMIC_RELAXED);

	if (!target[kind].at || n < target[kind].at || (n > target[kind].at && !target[kind].onwards))
		return false;
	/* Said once for a persistent failure: the first is the one that
	 * matters, the rest follow from it. */
	if (n == target[kind].at)
		fprintf(stderr, "dao: DAO_FAULT: failing %s call %" PRIu64 "%s\n", kind_names[kind],
			n, target[kind].onwards ? " and every later one" : "");
	return true;
}

static bool parse_one(const char *s, size_t len)
{
	for (int k = 0; k < FAULT_KINDS; k++) {
		size_t kl = strlen(kind_names[k]);
		char *end;
		unsigned long long n;

		if (len <= kl + 1 || strncmp(s, kind_names[k], kl) || s[kl] != ':')
			continue;
		if (s[kl + 1] < '0' || s[kl + 1] > '9')
			return false;
		errno = 0;
		n = strtoull(s + kl + 1, &end, 10);
		if (errno || !n)
			return false;
		target[k].onwards = end < s + len && *end == '+';
		if (target[k].onwards)
			end++;
		if (end != s + len)
			return false;
		target[k].at = n;
		return true;
	}
	return false;
}

bool fault_arm(const char *spec)
{
	bool ok = true;

	memset(target, 0, sizeof(target));
	for (int k = 0; k < FAULT_KINDS; k++)
		__atomic_store_n(&calls[k], 0, __ATOMIC_RELAXED);
	counting = false;
	fault_armed = 0;
	if (!spec || !*spec)
		return true;
	for (const char *s = spec; ok && *s;) {
		size_t len = strcspn(s, ",");

		if (len == 5 && !strncmp(s, "count", 5))
			counting = true;
		else
			ok = parse_one(s, len);
		s += len;
		if (*s == ',' && !*++s)
			ok = false; /* a list ends with an element */
	}
	if (!ok) {
		memset(target, 0, sizeof(target));
		counting = false;
		return false;
	}
	fault_armed = 1;
	return true;
}

static void print_counts(void)
{
	if (!counting)
		return;
	fprintf(stderr, "dao: DAO_FAULT: calls");
	for (int k = 0; k < FAULT_KINDS; k++)
		fprintf(stderr, " %s=%" PRIu64, kind_names[k], fault_count((enum fault_kind)k));
	fprintf(stderr, "\n");
}

/* Before main, so that every call of the job is counted, the first
 * dao_open's included. */
__attribute__((constructor)) static void fault_from_env(void)
{
	const char *spec = getenv("DAO_FAULT");

	if (!spec || !*spec)
		return;
	if (!fault_arm(spec)) {
		fprintf(stderr, "dao: DAO_FAULT=%s: not a list of KIND:N[+] or count "
				"(kinds: alloc thread mmap open ioctl shm); nothing armed\n", spec);
		return;
	}
	atexit(print_counts);
}
