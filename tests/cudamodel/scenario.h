/* SPDX-License-Identifier: MIT */
/*
 * scenario.h - how the CUDA runtime model's tests run a scenario: this
 * program re-executed with the scenario's name (against the model through
 * LD_LIBRARY_PATH), its exit status and what the model printed checked by
 * the parent. A scenario the model must stop ends with its status 66; one
 * that checks its own results ends 0, or 1 with EXPECT's message.
 */
#ifndef DAO_CUDAMODEL_SCENARIO_H
#define DAO_CUDAMODEL_SCENARIO_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

#define MODEL_EXIT 66 /* the model's own exit status (model.h's CM_EXIT) */
#define MIB (1ull << 20)

#define EXPECT(cond)                                                                 \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "scenario: failed: %s (line %d)\n", #cond, __LINE__); \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

/* Run a scenario in a fresh process: its exit status, its stderr in log. */
static inline int spawn(const char *self, const char *name, const char *env, char *log, size_t cap)
{
	char path[] = "/tmp/cudamodel-test-XXXXXX";
	int fd = mkstemp(path), status = -1;
	pid_t pid;
	ssize_t n;

	if (fd < 0)
		tap_bail("mkstemp failed");
	unlink(path);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(fd, 2);
		if (env)
			putenv((char *)env);
		execl(self, self, name, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		tap_bail("cannot run a scenario");
	n = pread(fd, log, cap - 1, 0);
	log[n > 0 ? n : 0] = 0;
	close(fd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static inline void expect(const char *self, const char *name, const char *env, int code,
		   const char *says, const char *what)
{
	static char log[1 << 16];
	int got = spawn(self, name, env, log, sizeof(log));

	if (!tap_ok(got == code && (!says || strstr(log, says)), "%s: %s", name, what))
		tap_diag("  exit %d (wanted %d), stderr:\n%s", got, code, log);
}

/*
 * main's start: false in a scenario's process (argv[1] names it: run it);
 * true in the parent, with this program's path in self for expect() and
 * the model's variables a scenario must set itself cleared.
 */
static inline bool scenario_parent(int argc, char *self, size_t cap)
{
	ssize_t n;

	if (argc > 1)
		return false;
	n = readlink("/proc/self/exe", self, cap - 1);
	if (n <= 0)
		tap_bail("readlink /proc/self/exe failed");
	self[n] = 0;
	unsetenv("DAO_CUDAMODEL_MEM");
	unsetenv("DAO_CUDAMODEL_MISUSE_OK");
	return true;
}

#endif /* DAO_CUDAMODEL_SCENARIO_H */
