/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Sockets Direct Protocol: the constants user space and other modules see.
 *
 * One header for the module, the tests, the libtirpc patch and the
 * preload library.
 */
#ifndef _UAPI_LINUX_SDP_H
#define _UAPI_LINUX_SDP_H

/*
 * The socket family.  Mainline numbers 27 as AF_IB but registers no socket
 * family for it; qperf, libsdp-style preloads and the JDK hard-code 27 for
 * SDP, so the module registers it.
 */
#define AF_INET_SDP	27
#define PF_INET_SDP	AF_INET_SDP

#endif /* _UAPI_LINUX_SDP_H */
