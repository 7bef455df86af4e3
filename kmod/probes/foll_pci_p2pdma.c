// SPDX-License-Identifier: GPL-2.0
/*
 * The GUP flag that came in v6.2, the release whose GUP breaks COW before a
 * read-only long-term pin (reliable R/O pinning): dao_pin.c reads its
 * presence as "read-only pins are coherent".
 */
#include <linux/mm.h>

unsigned int dao_probe(void);
unsigned int dao_probe(void)
{
	return FOLL_PCI_P2PDMA | FOLL_LONGTERM;
}
