// SPDX-License-Identifier: GPL-2.0
/* Multicast groups that only CAP_SYS_ADMIN may join (6.6, backported to 6.1.y). */
#include <net/genetlink.h>

static const struct genl_multicast_group probe = {
	.name = "probe", .flags = GENL_MCAST_CAP_SYS_ADMIN,
};
const struct genl_multicast_group *dao_probe(void);
const struct genl_multicast_group *dao_probe(void)
{
	return &probe;
}
