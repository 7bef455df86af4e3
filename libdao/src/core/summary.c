/* SPDX-License-Identifier: MIT */
/*
 * summary.c - a device's figures as one line at the end of the job, asked
 * for with DAO_SUMMARY=stderr or DAO_SUMMARY=/absolute/file (appended to).
 *
 * A batch system shows the job what oversubscription cost without tools of
 * its own: the Slurm plugin sets DAO_SUMMARY=stderr in every task, and the
 * task's stderr is the job's output. One write(2) of one line, so the lines
 * of concurrent processes appending to one file never interleave.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fault.h"
#include "backend/backend.h"
#include "base/log.h"
#include "core/ask.h"
#include "core/summary.h"

uint64_t summary_slurm_job_id(void)
{
	const char *v = getenv("SLURM_JOB_ID");
	unsigned long long id;
	char *end;

	if (!v || *v < '0' || *v > '9')
		return 0;
	errno = 0;
	id = strtoull(v, &end, 10);
	return errno || *end ? 0 : (uint64_t)id;
}

void summary_write(const struct device *d)
{
	const dao_stats *st = &d->stats;
	char line[512], pol[160];
	int n, fd;

	if (!d->report.summary_path[0])
		return;
	ask_summary(d, pol, sizeof(pol));
	n = snprintf(line, sizeof(line),
		     "dao summary: slurm_job=%" PRIu64 " pid=%d job=%s backend=%s policy=%s"
		     " budget_bytes=%" PRIu64 " kernels=%" PRIu64 " h2d_bytes=%" PRIu64
		     " d2h_bytes=%" PRIu64 " evictions=%" PRIu64 " stalls=%" PRIu64
		     " peak_device_bytes=%" PRIu64 " peak_pinned_bytes=%" PRIu64 "%s\n",
		     d->report.slurm_job_id, (int)getpid(),
		     d->report.job_name[0] ? d->report.job_name : program_invocation_short_name,
		     dao_backend_name_of(d->be), dao_policy_name(d->policy.id), d->budget, st->kernels,
		     st->h2d_bytes, st->d2h_bytes, st->evictions, st->stalls, d->res.arena.peak,
		     d->peak_pinned_bytes, pol);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) { /* cut, but still one whole line */
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	if (!strcmp(d->report.summary_path, "stderr")) {
		fd = STDERR_FILENO;
	} else {
		fd = fault_open(d->report.summary_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			dao_warn("DAO_SUMMARY: %s: %s", d->report.summary_path, strerror(errno));
			return;
		}
	}
	if (write(fd, line, (size_t)n) != n)
		dao_warn("DAO_SUMMARY: writing the summary failed");
	if (fd != STDERR_FILENO)
		close(fd);
}
