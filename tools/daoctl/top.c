/* SPDX-License-Identifier: MIT */
/*
 * top.c - the ps view refreshed every second with rates, drawn with plain
 * ANSI sequences on the alternate screen. Quits on q or Ctrl-C (or SIGTERM,
 * SIGHUP) and always puts the terminal back as it found it.
 */
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "daoctl.h"

#define REFRESH_MS 1000

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

struct prev {
	uint32_t pid;
	uint64_t h2d, d2h, evictions, kernels;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct prev *prev_find(const struct prev *v, uint32_t n, uint32_t pid)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i].pid == pid)
			return &v[i];
	return NULL;
}

static const char *rate(char *buf, size_t cap, uint64_t now, uint64_t before, double dt,
			bool bytes)
{
	double r;

	if (dt <= 0 || now < before) {
		snprintf(buf, cap, "-");
		return buf;
	}
	r = (double)(now - before) / dt;
	/* Rounded to a whole count per second for display only. */
	return bytes ? fmt_bytes(buf, cap, (uint64_t)(r + 0.5))
		     : fmt_count(buf, cap, (uint64_t)(r + 0.5));
}

static void draw(FILE *f, const struct node *n, const struct scan *s, const struct prev *pv,
		 uint32_t npv, double dt, unsigned rows)
{
	char b[10][24], clock[16];
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	fputs("\033[H", f);
	fprintf(f, "daoctl top - %s   module: %s   dao processes: %u   (q quits)\033[K\n", clock,
		n->loaded ? "loaded" : "not loaded", s->n);
	if (n->loaded)
		fprintf(f, "node: limit %s, pinned %s, peak %s, refused %" PRIu64 "\033[K\n",
			fmt_bytes(b[0], 24, n->limit), fmt_bytes(b[1], 24, n->pinned),
			fmt_bytes(b[2], 24, n->peak), n->refused);
	else
		fputs("node: no kernel accounting (module not loaded)\033[K\n", f);
	fputs("\033[K\n", f);
	fprintf(f, "\033[7m%7s %-16s %-8s %7s %7s %7s %7s %6s %8s %8s %8s %8s\033[0m\033[K\n",
		"PID", "JOB", "BACKEND", "BUDGET", "DEVICE", "HOST", "PINNED", "BUFS", "KERN/s",
		"H2D/s", "D2H/s", "EVICT/s");
	for (uint32_t i = 0; i < s->n && i + 5 < rows; i++) {
		const struct proc *p = &s->procs[i];
		const struct prev *q = prev_find(pv, npv, p->pid);
		uint64_t pinned = n->loaded ? (p->k ? p->k->pinned : 0) : p->sum.pinned_bytes;
		double d = q ? dt : 0;

		fprintf(f, "%7u %-16.16s %-8.8s %7s %7s %7s %7s %6s %8s %8s %8s %8s\033[K\n", p->pid,
			p->job, p->backend, fmt_bytes(b[0], 24, p->sum.budget_bytes),
			fmt_bytes(b[1], 24, p->sum.device_bytes),
			fmt_bytes(b[2], 24, p->sum.host_bytes), fmt_bytes(b[3], 24, pinned),
			fmt_count(b[4], 24, p->sum.live_buffers),
			rate(b[5], 24, p->sum.kernels, q ? q->kernels : 0, d, false),
			rate(b[6], 24, p->sum.h2d_bytes, q ? q->h2d : 0, d, true),
			rate(b[7], 24, p->sum.d2h_bytes, q ? q->d2h : 0, d, true),
			rate(b[8], 24, p->sum.evictions, q ? q->evictions : 0, d, false));
	}
	fputs("\033[J", f);
}

static unsigned term_rows(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
		return ws.ws_row;
	return 24;
}

/* Reads pending keys; true when one asks to quit. */
static bool key_quit(void)
{
	char c[32];
	ssize_t n = read(STDIN_FILENO, c, sizeof(c));

	for (ssize_t i = 0; i < n; i++)
		if (c[i] == 'q' || c[i] == 'Q')
			return true;
	return false;
}

int cmd_top(void)
{
	struct termios saved, raw;
	struct sigaction sa;
	bool tty_in = isatty(STDIN_FILENO);
	struct prev *pv = NULL;
	uint32_t npv = 0;
	double last = 0;
	int rc = EXIT_OK;

	if (!isatty(STDOUT_FILENO)) {
		fprintf(stderr, "daoctl: top needs a terminal; use 'daoctl ps' for a snapshot\n");
		return EXIT_FAIL;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: poll must return at once on Ctrl-C. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (tty_in) {
		tcgetattr(STDIN_FILENO, &saved);
		raw = saved;
		/* Keys without Enter and without echo; Ctrl-C still raises SIGINT. */
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
	}
	fputs("\033[?1049h\033[?25l\033[2J", stdout);
	while (!quit) {
		struct node n;
		struct scan s;
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		double t = now_s();
		struct prev *np;

		node_query(&n);
		if (scan_segments(&s)) {
			node_free(&n);
			rc = EXIT_FAIL;
			break;
		}
		for (uint32_t i = 0; i < s.n; i++)
			s.procs[i].k = node_find(&n, s.procs[i].pid);
		sort_procs(&s);

		char *frame = NULL;
		size_t len = 0;
		FILE *mf = open_memstream(&frame, &len);

		if (mf) {
			draw(mf, &n, &s, pv, npv, t - last, term_rows());
			fclose(mf);
			fwrite(frame, 1, len, stdout);
			fflush(stdout);
			free(frame);
		}
		np = calloc(s.n ? s.n : 1, sizeof(*np));
		if (np) {
			for (uint32_t i = 0; i < s.n; i++) {
				np[i].pid = s.procs[i].pid;
				np[i].h2d = s.procs[i].sum.h2d_bytes;
				np[i].d2h = s.procs[i].sum.d2h_bytes;
				np[i].evictions = s.procs[i].sum.evictions;
				np[i].kernels = s.procs[i].sum.kernels;
			}
			free(pv);
			pv = np;
			npv = s.n;
			last = t;
		}
		scan_free(&s);
		node_free(&n);
		/* Wait out the second, waking for keys. */
		for (;;) {
			int left = REFRESH_MS - (int)((now_s() - t) * 1000);

			if (quit || left <= 0)
				break;
			if (poll(&pfd, tty_in ? 1 : 0, left) <= 0)
				continue; /* time is up, or a signal: the checks above decide */
			if ((pfd.revents & (POLLHUP | POLLERR)) || key_quit())
				quit = 1; /* the terminal went away, or q */
		}
	}
	free(pv);
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	if (tty_in)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
	return rc;
}
