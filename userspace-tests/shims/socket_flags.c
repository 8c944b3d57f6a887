// SPDX-License-Identifier: GPL-2.0
/*
 * socket_flags.so: preloaded after libsdp.so (LD_PRELOAD="libsdp.so
 * socket_flags.so"), it is the socket() that libsdp's own calls reach
 * (dlsym(RTLD_NEXT)); it prints each call's domain and type flags on
 * standard error, "socket_flags: DOMAIN cloexec" or "... inherit", for
 * libsdp.sh to check that the sockets the library makes are
 * close-on-exec.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/socket.h>

int socket(int domain, int type, int protocol)
{
	static int (*real)(int, int, int);

	if (!real)
		real = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	fprintf(stderr, "socket_flags: %d %s\n", domain,
		type & SOCK_CLOEXEC ? "cloexec" : "inherit");
	return real(domain, type, protocol);
}
