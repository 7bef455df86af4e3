/* SPDX-License-Identifier: MIT */
/*
 * respawn.h - a test that must watch a case end (an exit status, what it
 * printed on stderr) runs it as this very program again, with the case's
 * name as its one argument, in a process of its own: a case the CUDA
 * runtime model stops (status 66) stops only itself.
 */
#ifndef DAO_TEST_RESPAWN_H
#define DAO_TEST_RESPAWN_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

/* This program's path, for test_respawn. */
static inline void test_self(char *self, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", self, cap - 1);

	if (n <= 0)
		tap_bail("readlink /proc/self/exe failed");
	self[n] = 0;
}

/* Run `self name` with one more environment variable (env, or NULL): its
 * exit status (128 + the signal when one ended it), its stderr in log. */
static inline int test_respawn(const char *self, const char *name, const char *env, char *log,
			       size_t cap)
{
	char path[] = "/tmp/dao-respawn-XXXXXX";
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
		tap_bail("cannot run case %s", name);
	n = pread(fd, log, cap - 1, 0);
	log[n > 0 ? n : 0] = 0;
	close(fd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* One TAP check: case name ends with status code and its stderr holds
 * every string of says (NULL-terminated; NULL for none). */
static inline void test_respawn_expect(const char *self, const char *name, const char *env,
				       int code, const char *const *says, const char *what)
{
	static char log[1 << 16];
	int got = test_respawn(self, name, env, log, sizeof(log));
	bool said = true;

	for (; says && *says; says++)
		said &= strstr(log, *says) != NULL;
	if (!tap_ok(got == code && said, "%s: %s", name, what))
		tap_diag("  exit %d (wanted %d), stderr:\n%s", got, code, log);
}

#endif /* DAO_TEST_RESPAWN_H */
