/*
 * rpc_sdp.h: ONC RPC over the Sockets Direct Protocol, the netids "sdp"
 * and "sdp6" (see rpc_sdp.c).  Private to libtirpc and to the
 * libtirpc-sdp.so interposer.
 */
#ifndef RPC_SDP_H
#define RPC_SDP_H

#include <rpc/rpc.h>

#ifndef AF_INET_SDP
#define AF_INET_SDP	27	/* the SDP socket family (Linux: sdp.ko) */
#endif

/* The nettype of both SDP netids, for clnt_create() and svc_create(). */
#define RPC_SDP_NETTYPE	"sdp"

int __rpc_sdp_netid_af(const char *netid);
int __rpc_sdp_nconf2sockinfo(const struct netconfig *nconf,
			     struct __rpc_sockinfo *sip);
int __rpc_sdp_socket(const struct netconfig *nconf, int flags);
const char *__rpc_sdp_fd2netid(int fd);
struct netbuf *__rpc_sdp_findaddr(rpcprog_t prog, rpcvers_t vers,
				  const struct netconfig *nconf,
				  const char *host);

#endif
