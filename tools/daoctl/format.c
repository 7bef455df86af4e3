/* SPDX-License-Identifier: MIT */
/* format.c - human units, Prometheus label values (JSON strings: tools/common). */
#include <inttypes.h>
#include <stdio.h>

#include "daoctl.h"

/* Binary units, three significant digits: "512B", "1.50K", "64.0M", "2.00G". */
const char *fmt_bytes(char *buf, size_t cap, uint64_t bytes)
{
	static const char units[] = "BKMGTPE";
	double v = (double)bytes;
	int u = 0;

	if (bytes < 1024) {
		snprintf(buf, cap, "%" PRIu64 "B", bytes);
		return buf;
	}
	while (v >= 1024.0 && u < 6) {
		v /= 1024.0;
		u++;
	}
	if (v >= 999.5 && u < 6) { /* would print as "1024" */
		v /= 1024.0;
		u++;
	}
	snprintf(buf, cap, v < 9.995 ? "%.2f%c" : v < 99.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

/* Decimal units for counts: "999", "1.20k", "3.4M". */
const char *fmt_count(char *buf, size_t cap, uint64_t n)
{
	static const char units[] = " kMGTPE";
	double v = (double)n;
	int u = 0;

	if (n < 1000) {
		snprintf(buf, cap, "%" PRIu64, n);
		return buf;
	}
	while (v >= 1000.0 && u < 6) {
		v /= 1000.0;
		u++;
	}
	if (v >= 999.5 && u < 6) {
		v /= 1000.0;
		u++;
	}
	snprintf(buf, cap, v < 9.995 ? "%.2f%c" : v < 99.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

/* Label values of the text exposition format escape \, " and newline. */
void prom_label(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

const char *location_name(uint64_t flags)
{
	switch (flags & DAO_PUB_BUF_LOC_MASK) {
	case DAO_PUB_LOC_HOST: return "host";
	case DAO_PUB_LOC_DEVICE: return "device";
	case DAO_PUB_LOC_BOTH: return "both";
	default: return "nowhere";
	}
}
