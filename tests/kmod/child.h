/* SPDX-License-Identifier: GPL-2.0 */
/*
 * child.h - run a step of a test in a child process and learn how it ended.
 * A child reports the number of its first failed check as its exit status.
 */
#ifndef DAO_KTEST_CHILD_H
#define DAO_KTEST_CHILD_H

#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* In a child: exit with the line number of a failed check. */
#define CHILD_CHECK(cond)                                                          \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "# %s:%d: child check failed: %s\n",      \
				__FILE__, __LINE__, #cond);                        \
			_exit(__LINE__ % 250 + 1);                                 \
		}                                                                  \
	} while (0)

/* fn's return value becomes the exit status; 0 means every check held. */
static inline int run_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn(arg));
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

#endif
