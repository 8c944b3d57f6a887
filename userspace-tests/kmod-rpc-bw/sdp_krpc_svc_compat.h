/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SunRPC server interfaces the kernel RPC bandwidth server uses, as
 * they differ between the bed's kernels (6.1, 6.12, the newest), in the
 * way of sdp.ko's sdp_compat.h: helpers of the newest form, defined here
 * for the older kernels.  Where the release of a change is not known, the
 * comment says between which of the bed's kernels it happened.
 */
#ifndef SDP_KRPC_SVC_COMPAT_H
#define SDP_KRPC_SVC_COMPAT_H

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/version.h>
#include <linux/sunrpc/svc.h>
#include <linux/sunrpc/svc_xprt.h>
#include <linux/sunrpc/svcsock.h>

/*
 * 6.4: a version's dispatcher takes the request alone, its accept status
 * being rq_accept_statp; authentication returns an enum svc_auth_status.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
#define SDP_SVC_DISPATCH_ARGS	struct svc_rqst *rqstp, __be32 *statp
#define SDP_SVC_ACCEPT_STATP	statp

/* Calls that need no credentials: AUTH_NONE and AUTH_SYS alike. */
static inline int sdp_svc_authenticate_any(struct svc_rqst *rqstp)
{
	return SVC_OK;
}
#else
#define SDP_SVC_DISPATCH_ARGS	struct svc_rqst *rqstp
#define SDP_SVC_ACCEPT_STATP	(rqstp->rq_accept_statp)

static inline enum svc_auth_status
sdp_svc_authenticate_any(struct svc_rqst *rqstp)
{
	return SVC_OK;
}
#endif

/* Before 6.4 a dispatcher set up the call's and the reply's XDR streams. */
static inline void sdp_svcxdr_init_decode(struct svc_rqst *rqstp)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
	svcxdr_init_decode(rqstp);
#endif
}

static inline void sdp_svcxdr_init_encode(struct svc_rqst *rqstp)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
	svcxdr_init_encode(rqstp);
#endif
}

/* A service thread starts: 6.12 waits for it to say it is ready. */
static inline void sdp_svc_thread_ready(struct svc_rqst *rqstp)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	svc_thread_init_status(rqstp, 0);
#endif
}

/* 6.6: a thread stops when its pool picks it, not by kthread_stop(). */
static inline bool sdp_svc_thread_should_stop(struct svc_rqst *rqstp)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
	return kthread_should_stop();
#else
	return svc_thread_should_stop(rqstp);
#endif
}

/*
 * Waits for a call and processes it.  6.6: svc_recv() does both; between
 * 6.12 and 7.3 it took a time limit again (0: none) and a status.
 */
static inline void sdp_svc_serve(struct svc_rqst *rqstp)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
	if (svc_recv(rqstp, MAX_SCHEDULE_TIMEOUT) >= 0)
		svc_process(rqstp);
#elif LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
	svc_recv(rqstp);
#else
	svc_recv(rqstp, 0);
#endif
}

/*
 * The number of threads (0 stops them all).  Between 6.12 and 7.3 the
 * pool argument became a least number of threads.
 */
static inline int sdp_svc_set_num_threads(struct svc_serv *serv,
					  unsigned int nrservs)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
	return svc_set_num_threads(serv, NULL, nrservs);
#else
	return svc_set_num_threads(serv, 0, nrservs);
#endif
}

/*
 * Closes every transport and withdraws the rpcbind registrations; between
 * 6.12 and 7.3 svc_xprt_destroy_all() learnt to do the latter itself.
 */
static inline void sdp_svc_close_all(struct svc_serv *serv, struct net *net)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
	svc_xprt_destroy_all(serv, net);
	svc_rpcb_cleanup(serv, net);
#else
	svc_xprt_destroy_all(serv, net, true);
#endif
}

/* 6.9: svc_destroy() frees the service and clears the pointer; svc_put() went. */
static inline void sdp_svc_destroy(struct svc_serv **servp)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 9, 0)
	svc_put(*servp);
	*servp = NULL;
#else
	svc_destroy(servp);
#endif
}

#endif /* SDP_KRPC_SVC_COMPAT_H */
