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

/* The level of the SDP socket options: the number historical SDP used. */
#define SOL_SDP		1025

/*
 * int, 0 or 1 (default 0): fall back to TCP.  Set before connect(): when
 * the peer refuses SDP (no SDP listener), no RDMA device routes to it, or
 * the RDMA CM does not answer within the module's fallback_timeout_ms,
 * the socket connects over TCP instead.  Set before listen(): the socket
 * listens on TCP too, on the same address and port, and accept() returns
 * connections of either kind.  Sockets with a file only (not in-kernel
 * sockets: EOPNOTSUPP).
 */
#define SDP_FALLBACK	1

/* int, read only: what the socket's connection runs over. */
#define SDP_PATH	2
#define SDP_PATH_NONE	0	/* no connection: not connected, or a listener */
#define SDP_PATH_SDP	1
#define SDP_PATH_TCP	2

/*
 * int, 0 or 1 (default: the module's read_zcopy): offer read zero-copy
 * (the peer RDMA-Reads large sends from the sender's pages) in the
 * connection's Hello or HelloAck.  Set before connect() or listen();
 * accepted sockets take their listener's.  Both ends must offer it.
 */
#define SDP_READ_ZCOPY	3

#endif /* _UAPI_LINUX_SDP_H */
