/* SPDX-License-Identifier: MIT */
/* publish.c - placeholder until the shared-memory publisher lands. */
#include "core.h"

void publish_open(struct device *d)
{
}

void publish_tick(struct device *d)
{
}

void publish_close(struct device *d)
{
}
