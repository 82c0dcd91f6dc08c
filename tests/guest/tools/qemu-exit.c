// SPDX-License-Identifier: GPL-2.0
/*
 * qemu-exit STATUS: end the guest through QEMU's isa-debug-exit device
 * (iobase 0xf4).  QEMU then exits with (STATUS << 1) | 1, which the host
 * runner decodes; a plain power-off (exit 0) therefore never looks like
 * a pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>
#include <sys/reboot.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int status = argc > 1 ? atoi(argv[1]) : 1;

	if (ioperm(0xf4, 4, 1)) {
		perror("qemu-exit: ioperm");
		return 1;
	}
	sync();
	outb((unsigned char)status, 0xf4);
	/* Not reached under QEMU with the device; power off otherwise. */
	reboot(RB_POWER_OFF);
	return 1;
}
