// SPDX-License-Identifier: GPL-2.0
/*
 * SDP socket addresses: ordinary sockaddr_in and sockaddr_in6 (v4-mapped
 * included), kept in the inet_sock fields TCP uses so that /proc, tracing
 * and SunRPC see what they expect.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/neighbour.h>
#include <net/route.h>

#include "sdp.h"

/* The checks and errno values of inet_bind() and inet6_bind(). */
int sdp_check_sockaddr(const struct sockaddr *addr, int len)
{
	if (len < (int)offsetofend(struct sockaddr, sa_family))
		return -EINVAL;

	switch (addr->sa_family) {
	case AF_INET:
		return len < (int)sizeof(struct sockaddr_in) ? -EINVAL : 0;
	case AF_INET6:
		return len < SIN6_LEN_RFC2133 ? -EINVAL : 0;
	default:
		return -EAFNOSUPPORT;
	}
}

/*
 * A v4-mapped address on a socket with IPV6_V6ONLY: bind() refuses it with
 * EINVAL (__inet6_bind()), connect() with ENETUNREACH (tcp_v6_connect()).
 */
bool sdp_mapped_on_v6only(const struct sock *sk, const struct sockaddr *addr)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;

	return addr->sa_family == AF_INET6 && sk->sk_ipv6only &&
	       ipv6_addr_v4mapped(&sin6->sin6_addr);
}

static int sdp_check_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	return 0;	/* a bound id that does nothing has no events */
}

/*
 * bind()'s EADDRNOTAVAIL: whether @addr is an address of this host that
 * an RDMA device serves.  The CM says, binding a throwaway id to it at
 * any port: binding the socket's own id would hold the port in the CM.
 */
int sdp_check_local(struct net *net, const struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	int ret;

	sdp_cm_sockaddr(addr, &ss);
	((struct sockaddr_in *)&ss)->sin_port = 0;	/* sin6_port too */
	if (ss.ss_family == AF_INET ?
	    ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_ANY) :
	    ipv6_addr_any(&((struct sockaddr_in6 *)&ss)->sin6_addr))
		return 0;

	id = rdma_create_id(net, sdp_check_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&ss);
	rdma_destroy_id(id);
	switch (ret) {
	case -ENODEV:
	case -ENETUNREACH:
		return -EADDRNOTAVAIL;
	default:
		return ret;
	}
}

/* The IPv4 fields of an IPv6 socket hold its v4-mapped address, or 0. */
static __be32 sdp_v4_part(const struct in6_addr *a)
{
	return ipv6_addr_v4mapped(a) ? a->s6_addr32[3] : 0;
}

void sdp_set_local(struct sock *sk, const struct sockaddr *addr)
{
	struct inet_sock *inet = inet_sk(sk);

	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;

		inet->inet_rcv_saddr = sin->sin_addr.s_addr;
		inet->inet_saddr = sin->sin_addr.s_addr;
		inet->inet_sport = sin->sin_port;
		ipv6_addr_set_v4mapped(sin->sin_addr.s_addr, &sk->sk_v6_rcv_saddr);
	} else {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;

		sk->sk_v6_rcv_saddr = sin6->sin6_addr;
		inet->inet_sport = sin6->sin6_port;
		inet->inet_rcv_saddr = sdp_v4_part(&sin6->sin6_addr);
		inet->inet_saddr = inet->inet_rcv_saddr;
	}
	inet->inet_num = ntohs(inet->inet_sport);
}

void sdp_set_remote(struct sock *sk, const struct sockaddr *addr)
{
	struct inet_sock *inet = inet_sk(sk);

	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;

		inet->inet_daddr = sin->sin_addr.s_addr;
		inet->inet_dport = sin->sin_port;
		ipv6_addr_set_v4mapped(sin->sin_addr.s_addr, &sk->sk_v6_daddr);
	} else {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;

		sk->sk_v6_daddr = sin6->sin6_addr;
		inet->inet_dport = sin6->sin6_port;
		inet->inet_daddr = sdp_v4_part(&sin6->sin6_addr);
	}
}

/* Fills @addr as getsockname()/getpeername() return it; gives its length. */
int sdp_fill_sockaddr(const struct sock *sk, struct sockaddr *addr, bool peer)
{
	const struct inet_sock *inet = inet_sk(sk);
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)addr;
	struct sockaddr_in *sin = (struct sockaddr_in *)addr;

	if (sdp_sk(sk)->addr_family == AF_INET6) {
		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = peer ? inet->inet_dport : inet->inet_sport;
		sin6->sin6_addr = peer ? sk->sk_v6_daddr : sk->sk_v6_rcv_saddr;
		return sizeof(*sin6);
	}

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = peer ? inet->inet_dport : inet->inet_sport;
	sin->sin_addr.s_addr = peer ? inet->inet_daddr : inet->inet_rcv_saddr;
	return sizeof(*sin);
}

/*
 * The address as the RDMA CM takes it: the CM does not route v4-mapped
 * IPv6 addresses, so those become sockaddr_in.
 */
void sdp_cm_sockaddr(const struct sockaddr *addr, struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (addr->sa_family == AF_INET) {
		memcpy(ss, addr, sizeof(struct sockaddr_in));
	} else if (ipv6_addr_v4mapped(&sin6->sin6_addr)) {
		sin->sin_family = AF_INET;
		sin->sin_port = sin6->sin6_port;
		sin->sin_addr.s_addr = sin6->sin6_addr.s6_addr32[3];
	} else {
		/* The caller checked the length is at least SIN6_LEN_RFC2133. */
		memcpy(ss, addr, SIN6_LEN_RFC2133);
	}
}

/*
 * Asks for the neighbour that a connection to @addr (as the CM takes it)
 * goes through, before the RDMA CM resolves the address.  The CM's
 * resolver misses a neighbour that becomes valid inside its own request,
 * as when a veth peer answers ARP before the request returns: it then
 * waits out its whole timeout (resolve_timeout_ms) before it looks
 * again.  Asked here, such an answer is in before the CM looks; one that
 * comes later from the wire wakes the CM's request as it always did.
 */
void sdp_neigh_prime(struct net *net, const struct sockaddr *addr)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	struct neighbour *n = NULL;
	struct dst_entry *route;

	if (addr->sa_family == AF_INET) {
		struct flowi4 fl4 = { .daddr = sin->sin_addr.s_addr };
		struct rtable *rt = ip_route_output_key(net, &fl4);

		if (IS_ERR(rt))
			return;
		route = &rt->dst;
		n = dst_neigh_lookup(route, &sin->sin_addr.s_addr);
	} else {
		struct flowi6 fl6 = {
			.daddr = sin6->sin6_addr,
			.flowi6_oif = sin6->sin6_scope_id,
		};

		route = ip6_route_output(net, NULL, &fl6);
		if (!route->error)
			n = dst_neigh_lookup(route, &sin6->sin6_addr);
	}
	if (n) {
		neigh_event_send(n, NULL);
		neigh_release(n);
	}
	dst_release(route);
}
