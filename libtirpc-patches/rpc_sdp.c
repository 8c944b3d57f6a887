/*
 * rpc_sdp.c: ONC RPC over the Sockets Direct Protocol: the netids "sdp"
 * (IPv4) and "sdp6" (IPv6), and the nettype "sdp" that names both.
 *
 * An SDP socket is a TCP-like stream socket of family AF_INET_SDP,
 * addressed with ordinary sockaddr_in and sockaddr_in6.  So the netids
 * keep the protocol family inet/inet6 and the protocol tcp of their TCP
 * twins: addresses, universal addresses and record marking are TCP's, and
 * only the family of the socket differs.
 *
 * rpcbind stays as it is, and look-ups go to it over TCP.  It answers
 * GETADDR for the netid of the transport the question came in on, never
 * for "sdp", so a client reads rpcbind's list (DUMP) instead: the
 * service's "sdp" entry, or else its TCP twin's, since an SDP service
 * listens on the same port number as its TCP twin.
 *
 * This one file holds the SDP logic twice over: libtirpc builds it (the
 * series in libtirpc-patches/1.3.3), and so does libtirpc-sdp.so, the
 * interposer for hosts that keep their distribution's libtirpc.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcb_clnt.h>
#include <rpc/rpcb_prot.h>

#include "rpc_sdp.h"

static const struct {
	const char *netid;
	const char *tcp_twin;
	int af;
} sdp_netids[] = {
	{ "sdp", "tcp", AF_INET },
	{ "sdp6", "tcp6", AF_INET6 },
};

#define SDP_NETIDS (sizeof(sdp_netids) / sizeof(sdp_netids[0]))

/* The address family an SDP netid carries, or 0 for any other netid. */
int
__rpc_sdp_netid_af(const char *netid)
{
	unsigned int i;

	for (i = 0; netid && i < SDP_NETIDS; i++)
		if (strcmp(netid, sdp_netids[i].netid) == 0)
			return sdp_netids[i].af;
	return 0;
}

static const char *
sdp_tcp_twin(const char *netid)
{
	unsigned int i;

	for (i = 0; i < SDP_NETIDS; i++)
		if (strcmp(netid, sdp_netids[i].netid) == 0)
			return sdp_netids[i].tcp_twin;
	return NULL;
}

/* __rpc_nconf2sockinfo() of an SDP netid: 1, or 0 for any other netid. */
int
__rpc_sdp_nconf2sockinfo(const struct netconfig *nconf,
			 struct __rpc_sockinfo *sip)
{
	int af = __rpc_sdp_netid_af(nconf->nc_netid);

	if (!af)
		return 0;
	sip->si_af = af;
	sip->si_proto = IPPROTO_TCP;
	sip->si_socktype = SOCK_STREAM;
	sip->si_alen = af == AF_INET ? sizeof(struct sockaddr_in) :
				       sizeof(struct sockaddr_in6);
	return 1;
}

/*
 * The socket of an SDP netid; @flags as socket()'s type flags.  An "sdp6"
 * socket takes IPV6_V6ONLY, as libtirpc gives its "tcp6" sockets; on an
 * SDP socket, which learns its family at bind() or connect(), that also
 * makes it an IPv6 socket before either, which bindresvport() and
 * __binddynport() rely on.  On failure, -1 with errno and rpc_createerr
 * saying why (sdp.ko absent: "Address family not supported").
 */
int
__rpc_sdp_socket(const struct netconfig *nconf, int flags)
{
	int af = __rpc_sdp_netid_af(nconf->nc_netid);
	int fd, on = 1;

	fd = socket(AF_INET_SDP, SOCK_STREAM | flags, 0);
	if (fd >= 0 && af == AF_INET6 &&
	    setsockopt(fd, SOL_IPV6, IPV6_V6ONLY, &on, sizeof(on)) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		fd = -1;
	}
	if (fd < 0) {
		rpc_createerr.cf_stat = RPC_SYSTEMERROR;
		rpc_createerr.cf_error.re_errno = errno;
	}
	return fd;
}

/* The SDP netid of an SDP socket, or NULL for any other descriptor. */
const char *
__rpc_sdp_fd2netid(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(int);
	unsigned int i;
	int domain;

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
	    domain != AF_INET_SDP)
		return NULL;
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return NULL;
	for (i = 0; i < SDP_NETIDS; i++)
		if (ss.ss_family == sdp_netids[i].af)
			return sdp_netids[i].netid;
	return NULL;
}

/* The port of a universal address "h1.h2.h3.h4.p1.p2" (or IPv6 "...p1.p2"). */
static int
uaddr_port(const char *uaddr)
{
	const char *p2 = strrchr(uaddr, '.'), *p1;
	char *end;
	long hi, lo;

	if (!p2 || p2 == uaddr)
		return -1;
	for (p1 = p2 - 1; p1 > uaddr && *p1 != '.'; p1--)
		;
	if (*p1 != '.')
		return -1;
	hi = strtol(p1 + 1, &end, 10);
	if (end != p2 || hi < 0 || hi > 255)
		return -1;
	lo = strtol(p2 + 1, &end, 10);
	if (*end || end == p2 + 1 || lo < 0 || lo > 255)
		return -1;
	return hi << 8 | lo;
}

/*
 * The port rpcbind on @host has for @prog/@vers over @nconf: the entry of
 * this very netid, else the TCP twin's (same-port convention); -1 with
 * rpc_createerr set when there is none or rpcbind cannot be asked.
 */
static int
sdp_lookup_port(rpcprog_t prog, rpcvers_t vers,
		const struct netconfig *nconf, const char *host)
{
	const char *twin = sdp_tcp_twin(nconf->nc_netid);
	struct netconfig *tcp = twin ? getnetconfigent(twin) : NULL;
	rpcblist_ptr maps, m;
	int port = -1;

	if (!tcp) {
		rpc_createerr.cf_stat = RPC_UNKNOWNPROTO;
		return -1;
	}
	rpc_createerr.cf_stat = RPC_SUCCESS;
	maps = rpcb_getmaps(tcp, host);
	for (m = maps; m; m = m->rpcb_next) {
		if (m->rpcb_map.r_prog != prog || m->rpcb_map.r_vers != vers)
			continue;
		if (strcmp(m->rpcb_map.r_netid, nconf->nc_netid) == 0) {
			port = uaddr_port(m->rpcb_map.r_addr);
			break;
		}
		if (strcmp(m->rpcb_map.r_netid, twin) == 0 && port < 0)
			port = uaddr_port(m->rpcb_map.r_addr);
	}
	if (maps)
		xdr_free((xdrproc_t)xdr_rpcblist_ptr, (char *)&maps);
	freenetconfigent(tcp);
	if (port < 0 && rpc_createerr.cf_stat == RPC_SUCCESS)
		rpc_createerr.cf_stat = RPC_PROGNOTREGISTERED;
	return port;
}

/*
 * __rpcb_findaddr_timed() for an SDP netid: the service's address on
 * @host, for clnt_tli_create(); NULL with rpc_createerr set.  The caller
 * frees the buffer and the netbuf.
 */
struct netbuf *
__rpc_sdp_findaddr(rpcprog_t prog, rpcvers_t vers,
		   const struct netconfig *nconf, const char *host)
{
	struct addrinfo hints, *res;
	struct netbuf *nb;
	int port;

	if (!host) {
		rpc_createerr.cf_stat = RPC_UNKNOWNHOST;
		return NULL;
	}
	port = sdp_lookup_port(prog, vers, nconf, host);
	if (port < 0)
		return NULL;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = __rpc_sdp_netid_af(nconf->nc_netid);
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	if (getaddrinfo(host, NULL, &hints, &res) != 0) {
		rpc_createerr.cf_stat = RPC_UNKNOWNHOST;
		return NULL;
	}
	nb = malloc(sizeof(*nb));
	if (nb)
		nb->buf = malloc(res->ai_addrlen);
	if (!nb || !nb->buf) {
		free(nb);
		freeaddrinfo(res);
		rpc_createerr.cf_stat = RPC_SYSTEMERROR;
		rpc_createerr.cf_error.re_errno = ENOMEM;
		return NULL;
	}
	memcpy(nb->buf, res->ai_addr, res->ai_addrlen);
	nb->len = nb->maxlen = res->ai_addrlen;
	freeaddrinfo(res);
	/* sin_port and sin6_port sit at the same offset */
	((struct sockaddr_in *)nb->buf)->sin_port = htons(port);
	return nb;
}
