/* SPDX-License-Identifier: MIT */
/*
 * scenario.h - how the CUDA runtime model's tests run a scenario: this
 * program re-executed with the scenario's name (tests/respawn.h), against
 * the model through LD_LIBRARY_PATH, its exit status and what the model
 * printed checked by the parent. A scenario the model must stop ends with its status 66; one
 * that checks its own results ends 0, or 1 with EXPECT's message.
 */
#ifndef DAO_CUDAMODEL_SCENARIO_H
#define DAO_CUDAMODEL_SCENARIO_H

#include <stdio.h>
#include <stdlib.h>

#include "respawn.h"

#define MODEL_EXIT 66 /* the model's own exit status (runtime/base/report.h's CM_EXIT) */
#define MIB (1ull << 20)

#define EXPECT(cond)                                                                 \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "scenario: failed: %s (line %d)\n", #cond, __LINE__); \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

/* One TAP check: scenario name ends with status code and its stderr holds
 * says (NULL: anything). */
static inline void expect(const char *self, const char *name, const char *env, int code,
			  const char *says, const char *what)
{
	const char *const list[] = { says, NULL };

	test_respawn_expect(self, name, env, code, list, what);
}

/*
 * main's start: false in a scenario's process (argv[1] names it: run it);
 * true in the parent, with this program's path in self for expect() and
 * the model's variables a scenario must set itself cleared.
 */
static inline bool scenario_parent(int argc, char *self, size_t cap)
{
	if (argc > 1)
		return false;
	test_self(self, cap);
	unsetenv("DAO_CUDAMODEL_MEM");
	unsetenv("DAO_CUDAMODEL_MISUSE_OK");
	unsetenv("DAO_CUDAMODEL_QUERY");
	unsetenv("DAO_CUDAMODEL_FAIL");
	return true;
}

#endif /* DAO_CUDAMODEL_SCENARIO_H */
