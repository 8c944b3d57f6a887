/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test bed's two hosts (bed/hosts.env) as socket addresses, for the C
 * tests and tools.  Header-only.
 */
#ifndef SDP_HOSTS_H
#define SDP_HOSTS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/sdp.h>

#define SDP_A4 "10.99.0.1"
#define SDP_B4 "10.99.0.2"
#define SDP_A6 "fd99::1"
#define SDP_B6 "fd99::2"

/*
 * Fills @ss with host 'A' or 'B' and @port.  @family is AF_INET, AF_INET6,
 * or AF_INET6 | SDP_MAPPED for the v4-mapped IPv6 form of the IPv4
 * address.  Returns the address length.
 */
#define SDP_MAPPED 0x10000

static inline socklen_t sdp_host_addr(struct sockaddr_storage *ss, int family,
				      char host, int port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	const char *v4 = host == 'A' ? SDP_A4 : SDP_B4;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		inet_pton(AF_INET, v4, &sin->sin_addr);
		return sizeof(*sin);
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	if (family & SDP_MAPPED) {
		sin6->sin6_addr.s6_addr[10] = 0xff;
		sin6->sin6_addr.s6_addr[11] = 0xff;
		inet_pton(AF_INET, v4, &sin6->sin6_addr.s6_addr[12]);
	} else {
		inet_pton(AF_INET6, host == 'A' ? SDP_A6 : SDP_B6,
			  &sin6->sin6_addr);
	}
	return sizeof(*sin6);
}

static inline int sdp_addr_port(const struct sockaddr_storage *ss)
{
	/* sin_port and sin6_port sit at the same offset */
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* Same family and address; and port, where @port_too. */
static inline int sdp_same_addr(const struct sockaddr_storage *a,
				const struct sockaddr_storage *b, int port_too)
{
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;

	if (a->ss_family != b->ss_family)
		return 0;
	if (port_too && sdp_addr_port(a) != sdp_addr_port(b))
		return 0;
	if (a->ss_family == AF_INET6)
		return !memcmp(&a6->sin6_addr, &b6->sin6_addr, 16);
	return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
}

#endif /* SDP_HOSTS_H */
