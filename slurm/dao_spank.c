/* SPDX-License-Identifier: MIT */
/*
 * dao_spank.c - the dao SPANK plugin: libdao's settings as srun/sbatch
 * options, the job's figures in its output, no segment left behind.
 *
 *   srun --dao-budget=25% --dao-policy=dao ./job
 *   #SBATCH --dao-budget=8G
 *
 * Where each part runs (Documentation/slurm.md):
 *   option callbacks  srun/sbatch/salloc (local, allocator): refuse a bad
 *                     value before the job is queued; slurmstepd (remote):
 *                     take the value forwarded with the job
 *   task_init         slurmstepd, in each task as the user before exec: the
 *                     DAO_* variables, and DAO_SUMMARY=stderr so libdao
 *                     writes the figures to the task's stderr at its end
 *   exit              slurmstepd at the end of the step, as root: remove the
 *                     shared-memory segments of this job whose process is
 *                     gone (a task killed outright cannot remove its own)
 *
 * plugstack.conf arguments: "nosummary" (do not set DAO_SUMMARY).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "dao_kind_names.h"
#include "options.h"
#include "dao_publish.h"

SPANK_PLUGIN(dao, 1);

enum { OPT_BUDGET, OPT_POLICY, OPT_BACKEND, OPT_LOOKAHEAD, OPT_COUNT };

struct dao_opt {
	const char *name;
	const char *env;
	const char *(*check)(const char *text);
	char value[64]; /* "" when not given */
};

static struct dao_opt opts[OPT_COUNT] = {
	[OPT_BUDGET] = { "dao-budget", "DAO_DEVICE_BUDGET", dao_opt_check_budget, "" },
	[OPT_POLICY] = { "dao-policy", "DAO_POLICY", dao_opt_check_policy, "" },
	[OPT_BACKEND] = { "dao-backend", "DAO_BACKEND", dao_opt_check_backend, "" },
	[OPT_LOOKAHEAD] = { "dao-lookahead", "DAO_LOOKAHEAD", dao_opt_check_lookahead, "" },
};

static int summary = 1;

static int take_option(int val, const char *optarg, int remote)
{
	struct dao_opt *o;
	const char *why;

	if (val < 0 || val >= OPT_COUNT)
		return -1;
	o = &opts[val];
	why = o->check(optarg);
	if (!why && strlen(optarg) >= sizeof(o->value))
		why = "too long";
	if (why) {
		/* On the submitting side this message is what the user sees;
		 * the non-zero return makes srun/sbatch refuse the job. */
		slurm_error("dao: --%s=%s: %s", o->name, optarg ? optarg : "", why);
		return -1;
	}
	strcpy(o->value, optarg);
	return 0;
}

/* Registered from slurm_spank_init: a static spank_options table is not
 * read by sbatch and salloc. */
static struct spank_option dao_options[] = {
	{ "dao-budget", "SIZE|N%",
	  "dao: device budget of every task, bytes with K/M/G/T (\"8G\") or N% of device "
	  "memory (sets DAO_DEVICE_BUDGET)",
	  1, OPT_BUDGET, take_option },
	{ "dao-policy", "POLICY",
	  "dao: eviction policy, " DAO_KIND_POLICIES_BARS " (sets DAO_POLICY)", 1, OPT_POLICY,
	  take_option },
	{ "dao-backend", "BACKEND",
	  "dao: " DAO_KIND_BACKENDS_BARS " (sets DAO_BACKEND)", 1, OPT_BACKEND,
	  take_option },
	{ "dao-lookahead", "N",
	  "dao: kernels a job may run ahead, 1 to 65536 (sets DAO_LOOKAHEAD)", 1,
	  OPT_LOOKAHEAD, take_option },
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	for (int i = 0; i < ac; i++) {
		if (!strcmp(av[i], "nosummary")) {
			summary = 0;
		} else {
			slurm_error("dao: unknown plugstack.conf argument '%s' (nosummary)", av[i]);
			return -1;
		}
	}
	for (size_t i = 0; i < sizeof(dao_options) / sizeof(dao_options[0]); i++) {
		if (spank_option_register(sp, &dao_options[i]) != ESPANK_SUCCESS) {
			slurm_error("dao: cannot register --%s", dao_options[i].name);
			return -1;
		}
	}
	return 0;
}

/* In each task, before the program starts. A value the user exported
 * (DAO_POLICY=lru srun ...) yields to the option given on the command
 * line or in #SBATCH, which is the more specific. */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	for (int i = 0; i < OPT_COUNT; i++) {
		if (opts[i].value[0] && spank_setenv(sp, opts[i].env, opts[i].value, 1) !=
						ESPANK_SUCCESS) {
			slurm_error("dao: cannot set %s in the task", opts[i].env);
			return -1;
		}
	}
	/* The user's own DAO_SUMMARY (a file, say) wins. */
	if (summary)
		spank_setenv(sp, "DAO_SUMMARY", "stderr", 0);
	return 0;
}

/* 1: the segment at dirfd/name belongs to job `job` and its process is
 * gone. Its bytes come from the job's user: every field is checked. */
static int stale_segment_of_job(int dirfd, const char *name, uid_t uid, uint32_t job)
{
	struct dao_pub_header h;
	char path[64], stat_text[1024];
	struct stat st;
	uint64_t start;
	ssize_t n;
	int fd, alive;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != uid ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
		close(fd);
		return 0;
	}
	close(fd);
	if (h.magic != DAO_PUB_MAGIC || h.version < 2 || h.summary_off != sizeof(h) ||
	    h.uid != uid || h.slurm_job_id != job)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/stat", h.pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	n = read(fd, stat_text, sizeof(stat_text) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	stat_text[n] = 0;
	/* The pid alive with another start time is another process. */
	alive = dao_pub_stat_start_time(stat_text, &start) && start == h.start_time;
	return !alive;
}

/* At the end of every step on the node, as root. */
int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	char prefix[32];
	struct dirent *e;
	uint32_t job;
	uid_t uid;
	DIR *dir;

	if (spank_context() != S_CTX_REMOTE)
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
		return 0;
	dir = opendir(DAO_PUB_DIR);
	if (!dir)
		return 0;
	snprintf(prefix, sizeof(prefix), DAO_PUB_PREFIX "%u.", (unsigned)uid);
	while ((e = readdir(dir))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		if (stale_segment_of_job(dirfd(dir), e->d_name, uid, job) &&
		    !unlinkat(dirfd(dir), e->d_name, 0))
			slurm_info("dao: removed %s/%s left by a task of job %u", DAO_PUB_DIR,
				   e->d_name, job);
	}
	closedir(dir);
	return 0;
}
