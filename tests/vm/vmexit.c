// SPDX-License-Identifier: GPL-2.0
/*
 * vmexit STATUS - end the VM with STATUS through qemu's isa-debug-exit
 * device at port 0xf4: qemu then exits with (STATUS << 1) | 1, so the host
 * sees the suite's status rather than a shutdown's 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>

int main(int argc, char **argv)
{
	int status = argc > 1 ? atoi(argv[1]) : 1;

	if (ioperm(0xf4, 4, 1)) {
		perror("vmexit: ioperm");
		return 1;
	}
	outl((unsigned int)status, 0xf4);
	/* Not reached when the device is there. */
	fprintf(stderr, "vmexit: no isa-debug-exit device\n");
	return 1;
}
