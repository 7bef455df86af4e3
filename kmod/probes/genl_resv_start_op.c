// SPDX-License-Identifier: GPL-2.0
/* Generic netlink families declare where strict header checks start. */
#include <net/genetlink.h>

static struct genl_family probe = { .resv_start_op = 1 };
struct genl_family *dao_probe(void);
struct genl_family *dao_probe(void)
{
	return &probe;
}
