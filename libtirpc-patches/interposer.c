/*
 * libtirpc-sdp.so: the netids "sdp" and "sdp6" for programs that use the
 * distribution's own libtirpc, by LD_PRELOAD or /etc/ld.so.preload.
 *
 * libtirpc calls its helpers below through the PLT, so definitions here
 * come first; each handles the SDP netids with rpc_sdp.c, the file the
 * libtirpc patch series adds, and hands everything else to libtirpc
 * (dlsym(RTLD_NEXT)).  What the series changes inside functions of
 * libtirpc, this file does at their call boundaries:
 *
 *   rpc_generic.c  __rpc_nconf2sockinfo(), __rpc_nconf2fd_flags()
 *                  __rpc_nconf2fd(): SDP sockets for the SDP netids;
 *                  __rpc_setconf()/__rpc_getconf()/__rpc_endconf(): the
 *                  nettype "sdp", and "tcp" no longer picking SDP netids;
 *   svc_vc.c       an accepted connection keeps its listener's netid:
 *                  __rpc_fd2sockinfo() notes that the descriptor is SDP,
 *                  and __rpc_sockinfo2netid() of that same sockinfo, next
 *                  in the same thread, answers its SDP netid;
 *   rpcb_clnt.c    look-ups for SDP netids (__rpcb_findaddr_timed(), which
 *                  is internal) at clnt_tp_create_timed() and
 *                  rpcb_getaddr().
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/nettype.h>

#include "rpc_sdp.h"

/* Built with -fvisibility=hidden: only what stands in for libtirpc shows. */
#define INTERPOSE __attribute__((visibility("default")))

/* libtirpc's definition of @name, the one this file stands in front of. */
#define REAL(name)							\
	({								\
		static __typeof__(name) *real_;				\
		__typeof__(name) *f_ =					\
			__atomic_load_n(&real_, __ATOMIC_RELAXED);	\
		if (!f_) {						\
			f_ = (__typeof__(name) *)dlsym(RTLD_NEXT, #name); \
			__atomic_store_n(&real_, f_, __ATOMIC_RELAXED);	\
		}							\
		f_;							\
	})

/* The sockinfo last filled in for an SDP descriptor, in this thread. */
static __thread struct {
	const struct __rpc_sockinfo *si;
	const char *netid;
} sdp_fd_info;

INTERPOSE int
__rpc_nconf2sockinfo(const struct netconfig *nconf, struct __rpc_sockinfo *sip)
{
	sdp_fd_info.si = NULL;	/* a sockinfo from a netconfig, not a socket */
	if (nconf && __rpc_sdp_nconf2sockinfo(nconf, sip))
		return 1;
	return REAL(__rpc_nconf2sockinfo)(nconf, sip);
}

INTERPOSE int
__rpc_nconf2fd_flags(const struct netconfig *nconf, int flags)
{
	if (nconf && __rpc_sdp_netid_af(nconf->nc_netid))
		return __rpc_sdp_socket(nconf, flags);
	return REAL(__rpc_nconf2fd_flags)(nconf, flags);
}

INTERPOSE int
__rpc_nconf2fd(const struct netconfig *nconf)
{
	if (nconf && __rpc_sdp_netid_af(nconf->nc_netid))
		return __rpc_sdp_socket(nconf, 0);
	return REAL(__rpc_nconf2fd)(nconf);
}

INTERPOSE int
__rpc_fd2sockinfo(int fd, struct __rpc_sockinfo *sip)
{
	int ret = REAL(__rpc_fd2sockinfo)(fd, sip);

	sdp_fd_info.si = NULL;
	if (ret) {
		sdp_fd_info.netid = __rpc_sdp_fd2netid(fd);
		if (sdp_fd_info.netid)
			sdp_fd_info.si = sip;
	}
	return ret;
}

INTERPOSE int
__rpc_sockinfo2netid(struct __rpc_sockinfo *sip, const char **netid)
{
	if (sip && sip == sdp_fd_info.si &&
	    sip->si_af == __rpc_sdp_netid_af(sdp_fd_info.netid) &&
	    sip->si_proto == IPPROTO_TCP) {
		sdp_fd_info.si = NULL;
		if (netid)
			*netid = sdp_fd_info.netid;
		return 1;
	}
	return REAL(__rpc_sockinfo2netid)(sip, netid);
}

/*
 * Nettype handles.  "sdp" gets a handle of ours over setnetconfig();
 * "tcp", whose libtirpc handle takes every inet/inet6 tcp entry however
 * visible, is remembered so that its walk skips the SDP netids, which
 * only "sdp" or an explicit netid should ever pick.
 */
struct sdp_conf_handle {
	void *nc;		/* setnetconfig() */
	struct sdp_conf_handle *next;
};

struct tcp_conf_handle {
	void *handle;		/* libtirpc's __rpc_setconf("tcp") */
	struct tcp_conf_handle *next;
};

static pthread_mutex_t conf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sdp_conf_handle *sdp_handles;
static struct tcp_conf_handle *tcp_handles;

/* Whether @h is one of ours; with @unlink, also forgets it. */
static int
is_sdp_handle(void *h, int unlink)
{
	struct sdp_conf_handle **p;
	int found = 0;

	pthread_mutex_lock(&conf_lock);
	for (p = &sdp_handles; *p; p = &(*p)->next) {
		if (*p == h) {
			found = 1;
			if (unlink)
				*p = (*p)->next;
			break;
		}
	}
	pthread_mutex_unlock(&conf_lock);
	return found;
}

static int
is_tcp_handle(void *h, int unlink)
{
	struct tcp_conf_handle **p, *t;
	int found = 0;

	pthread_mutex_lock(&conf_lock);
	for (p = &tcp_handles; *p; p = &(*p)->next) {
		if ((*p)->handle == h) {
			found = 1;
			if (unlink) {
				t = *p;
				*p = t->next;
				free(t);
			}
			break;
		}
	}
	pthread_mutex_unlock(&conf_lock);
	return found;
}

INTERPOSE void *
__rpc_setconf(const char *nettype)
{
	struct sdp_conf_handle *s;
	struct tcp_conf_handle *t;
	void *h;

	if (nettype && strcasecmp(nettype, RPC_SDP_NETTYPE) == 0) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		s->nc = setnetconfig();
		if (!s->nc) {
			free(s);
			return NULL;
		}
		pthread_mutex_lock(&conf_lock);
		s->next = sdp_handles;
		sdp_handles = s;
		pthread_mutex_unlock(&conf_lock);
		return s;
	}
	h = REAL(__rpc_setconf)(nettype);
	if (h && nettype && strcasecmp(nettype, "tcp") == 0) {
		t = malloc(sizeof(*t));
		if (!t) {
			REAL(__rpc_endconf)(h);
			return NULL;
		}
		t->handle = h;
		pthread_mutex_lock(&conf_lock);
		t->next = tcp_handles;
		tcp_handles = t;
		pthread_mutex_unlock(&conf_lock);
	}
	return h;
}

INTERPOSE struct netconfig *
__rpc_getconf(void *h)
{
	struct netconfig *nconf;

	if (is_sdp_handle(h, 0)) {
		struct sdp_conf_handle *s = h;

		while ((nconf = getnetconfig(s->nc)) &&
		       !__rpc_sdp_netid_af(nconf->nc_netid))
			;
		return nconf;
	}
	if (!is_tcp_handle(h, 0))
		return REAL(__rpc_getconf)(h);
	while ((nconf = REAL(__rpc_getconf)(h)) &&
	       __rpc_sdp_netid_af(nconf->nc_netid))
		;
	return nconf;
}

INTERPOSE void
__rpc_endconf(void *h)
{
	if (is_sdp_handle(h, 1)) {
		struct sdp_conf_handle *s = h;

		endnetconfig(s->nc);
		free(s);
		return;
	}
	is_tcp_handle(h, 1);
	REAL(__rpc_endconf)(h);
}

INTERPOSE CLIENT *
clnt_tp_create_timed(const char *host, const rpcprog_t prog,
		     const rpcvers_t vers, const struct netconfig *nconf,
		     const struct timeval *tp)
{
	struct netbuf *svcaddr;
	CLIENT *cl;

	if (!nconf || !__rpc_sdp_netid_af(nconf->nc_netid))
		return REAL(clnt_tp_create_timed)(host, prog, vers, nconf, tp);
	svcaddr = __rpc_sdp_findaddr(prog, vers, nconf, host);
	if (!svcaddr)
		return NULL;
	cl = clnt_tli_create(RPC_ANYFD, nconf, svcaddr, prog, vers, 0, 0);
	free(svcaddr->buf);
	free(svcaddr);
	return cl;
}

INTERPOSE CLIENT *
clnt_tp_create(const char *host, const rpcprog_t prog, const rpcvers_t vers,
	       const struct netconfig *nconf)
{
	return clnt_tp_create_timed(host, prog, vers, nconf, NULL);
}

INTERPOSE bool_t
rpcb_getaddr(rpcprog_t prog, rpcvers_t vers, const struct netconfig *nconf,
	     struct netbuf *address, const char *host)
{
	struct netbuf *na;

	if (!nconf || !__rpc_sdp_netid_af(nconf->nc_netid))
		return REAL(rpcb_getaddr)(prog, vers, nconf, address, host);
	na = __rpc_sdp_findaddr(prog, vers, nconf, host);
	if (!na)
		return FALSE;
	if (address->maxlen < na->len) {
		rpc_createerr.cf_stat = RPC_FAILED;
		free(na->buf);
		free(na);
		return FALSE;
	}
	memcpy(address->buf, na->buf, na->len);
	address->len = na->len;
	free(na->buf);
	free(na);
	return TRUE;
}
