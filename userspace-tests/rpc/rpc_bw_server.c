// SPDX-License-Identifier: GPL-2.0
/*
 * rpc_bw_server: the RPC bandwidth program's server, on libtirpc.
 *
 *   rpc_bw_server [-p PORT] [-m] [-R] NETID...    a listener per netid, all
 *                                                 on PORT (0: one dynamic
 *                                                 port for all)
 *   rpc_bw_server -N NETTYPE                      svc_create() by nettype
 *
 * It checks the content of every block it receives (of a stamped one, the
 * stamps) and counts intact and damaged ones (procedure STATS), and tells
 * the netid of the transport a call came in on (procedure NETID).  -m
 * serves each connection in a thread of its own (the paper's MTRPC);
 * otherwise svc_run() serves all in one.  -R leaves rpcbind alone.  It
 * prints "ready PORT" once it listens, and on SIGTERM or SIGINT withdraws
 * from rpcbind and prints its counters.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "sdp_rpc_bw.h"

/* Room for decoded credentials after the two raw ones: RQCRED_SIZE. */
#define CRED_AREA	400

static struct sdp_bw_stats stats;
static int registered;

/* WRITE, and WRITE_STAMPED when @stamped. */
static void reply_write(SVCXPRT *xprt, int stamped)
{
	struct sdp_bw_block b = { 0 };
	uint32_t status;

	if (!svc_getargs(xprt, SDP_XDR(xdr_sdp_bw_block), (caddr_t)&b)) {
		svcerr_decode(xprt);
		return;
	}
	if (stamped ? sdp_bw_stamps_ok(b.data, b.len, b.stream, b.seq) :
		      sdp_bw_intact(b.data, b.len, b.stream, b.seq)) {
		__atomic_add_fetch(&stats.blocks, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&stats.bytes, b.len, __ATOMIC_RELAXED);
		status = 0;
	} else {
		__atomic_add_fetch(&stats.bad_blocks, 1, __ATOMIC_RELAXED);
		status = 1;
	}
	svc_sendreply(xprt, SDP_XDR(xdr_u_int32_t), (caddr_t)&status);
	svc_freeargs(xprt, SDP_XDR(xdr_sdp_bw_block), (caddr_t)&b);
}

static void reply_read(SVCXPRT *xprt)
{
	struct sdp_bw_read_args a;
	struct sdp_bw_block b;

	if (!svc_getargs(xprt, SDP_XDR(xdr_sdp_bw_read_args), (caddr_t)&a) ||
	    a.len > SDP_BW_MAX_BLOCK) {
		svcerr_decode(xprt);
		return;
	}
	b.stream = a.stream;
	b.seq = a.seq;
	b.len = a.len;
	b.data = malloc(a.len ? a.len : 1);
	if (!b.data) {
		svcerr_systemerr(xprt);
		return;
	}
	sdp_bw_fill(b.data, b.len, b.stream, b.seq);
	svc_sendreply(xprt, SDP_XDR(xdr_sdp_bw_block), (caddr_t)&b);
	free(b.data);
}

static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct sdp_bw_stats now;
	char *netid;

	switch (rq->rq_proc) {
	case SDP_BW_NULL:
		svc_sendreply(xprt, SDP_XDR(xdr_void), NULL);
		break;
	case SDP_BW_WRITE:
	case SDP_BW_WRITE_STAMPED:
		reply_write(xprt, rq->rq_proc == SDP_BW_WRITE_STAMPED);
		break;
	case SDP_BW_READ:
		reply_read(xprt);
		break;
	case SDP_BW_NETID:
		netid = xprt->xp_netid ? xprt->xp_netid : "";
		svc_sendreply(xprt, SDP_XDR(xdr_wrapstring), (caddr_t)&netid);
		break;
	case SDP_BW_STATS:
		now.blocks = __atomic_load_n(&stats.blocks, __ATOMIC_RELAXED);
		now.bad_blocks = __atomic_load_n(&stats.bad_blocks,
						 __ATOMIC_RELAXED);
		now.bytes = __atomic_load_n(&stats.bytes, __ATOMIC_RELAXED);
		svc_sendreply(xprt, SDP_XDR(xdr_sdp_bw_stats), (caddr_t)&now);
		break;
	default:
		svcerr_noproc(xprt);
		break;
	}
}

/*
 * A connection served by a thread of its own: receives and dispatches
 * its calls until the peer goes; the transport is this thread's alone.
 */
static void *serve_connection(void *arg)
{
	char cred[2 * MAX_AUTH_BYTES + CRED_AREA];
	SVCXPRT *xprt = arg;
	enum auth_stat auth;
	struct rpc_msg msg;
	struct svc_req rq;

	for (;;) {
		memset(&msg, 0, sizeof(msg));
		msg.rm_call.cb_cred.oa_base = cred;
		msg.rm_call.cb_verf.oa_base = &cred[MAX_AUTH_BYTES];
		if (!SVC_RECV(xprt, &msg)) {
			if (SVC_STAT(xprt) == XPRT_DIED)
				break;
			continue;
		}
		memset(&rq, 0, sizeof(rq));
		rq.rq_xprt = xprt;
		rq.rq_prog = msg.rm_call.cb_prog;
		rq.rq_vers = msg.rm_call.cb_vers;
		rq.rq_proc = msg.rm_call.cb_proc;
		rq.rq_clntcred = &cred[2 * MAX_AUTH_BYTES];
		auth = _authenticate(&rq, &msg);	/* sets up the transport's */
		if (auth != AUTH_OK)
			svcerr_auth(xprt, auth);
		else if (rq.rq_prog != SDP_BW_PROG)
			svcerr_noprog(xprt);
		else if (rq.rq_vers != SDP_BW_VERS)
			svcerr_progvers(xprt, SDP_BW_VERS, SDP_BW_VERS);
		else
			dispatch(&rq, xprt);
	}
	SVC_DESTROY(xprt);
	return NULL;
}

/*
 * The record buffers of a connection's XDR stream: what svc_vc_create()
 * gives the connections of a TCP listener (__rpc_get_t_size()), where
 * svc_fd_create(fd, 0, 0) would give 4000 bytes and a read() per 4000.
 */
#define CONN_BUF_SIZE	(64 * 1024)

/* -m: accepts on the listeners itself, a thread per connection. */
static void run_threaded(SVCXPRT **listeners, int n)
{
	struct pollfd pfd[8];
	pthread_t thread;
	SVCXPRT *xprt;
	int i, fd, one = 1;

	for (i = 0; i < n; i++) {
		pfd[i].fd = listeners[i]->xp_fd;
		pfd[i].events = POLLIN;
	}
	for (;;) {
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("poll");
			exit(1);
		}
		for (i = 0; i < n; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			fd = accept(pfd[i].fd, NULL, NULL);
			if (fd < 0)
				continue;
			/* What svc_run()'s rendezvous does for TCP too. */
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			xprt = svc_fd_create(fd, CONN_BUF_SIZE, CONN_BUF_SIZE);
			if (!xprt || pthread_create(&thread, NULL,
						    serve_connection, xprt)) {
				fprintf(stderr, "rpc_bw_server: cannot serve a connection\n");
				if (xprt)
					SVC_DESTROY(xprt);
				else
					close(fd);
				continue;
			}
			pthread_detach(thread);
		}
	}
}

static int xprt_port(SVCXPRT *xprt)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(xprt->xp_fd, (struct sockaddr *)&ss, &len))
		return -1;
	/* sin_port and sin6_port sit at the same offset */
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* A listener for @netid on @port (0: any), registered unless -R. */
static SVCXPRT *listen_on(const char *netid, int port, int use_rpcbind)
{
	struct netconfig *nconf = getnetconfigent(netid);
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct t_bind bind;
	SVCXPRT *xprt;

	if (!nconf) {
		fprintf(stderr, "rpc_bw_server: no netid %s in /etc/netconfig\n",
			netid);
		exit(2);
	}
	if (strcmp(nconf->nc_protofmly, NC_INET6) == 0) {
		sin6.sin6_port = htons(port);
		bind.addr.buf = &sin6;
		bind.addr.len = bind.addr.maxlen = sizeof(sin6);
	} else {
		sin.sin_port = htons(port);
		bind.addr.buf = &sin;
		bind.addr.len = bind.addr.maxlen = sizeof(sin);
	}
	bind.qlen = 64;
	xprt = svc_tli_create(RPC_ANYFD, nconf, &bind, 0, 0);
	if (!xprt) {
		fprintf(stderr, "rpc_bw_server: cannot listen on %s port %d: %s\n",
			netid, port, clnt_spcreateerror(""));
		exit(1);
	}
	if (use_rpcbind)
		rpcb_unset(SDP_BW_PROG, SDP_BW_VERS, nconf);
	if (!svc_reg(xprt, SDP_BW_PROG, SDP_BW_VERS, dispatch,
		     use_rpcbind ? nconf : NULL)) {
		fprintf(stderr, "rpc_bw_server: cannot register on %s\n", netid);
		exit(1);
	}
	registered |= use_rpcbind;
	freenetconfigent(nconf);
	return xprt;
}

/* Waits for SIGTERM or SIGINT: withdraws from rpcbind, prints, exits. */
static void *wait_for_quit(void *arg)
{
	sigset_t *set = arg;
	int sig;

	sigwait(set, &sig);
	if (registered)
		svc_unreg(SDP_BW_PROG, SDP_BW_VERS);
	printf("blocks %llu bad %llu bytes %llu\n",
	       (unsigned long long)__atomic_load_n(&stats.blocks, __ATOMIC_RELAXED),
	       (unsigned long long)__atomic_load_n(&stats.bad_blocks, __ATOMIC_RELAXED),
	       (unsigned long long)__atomic_load_n(&stats.bytes, __ATOMIC_RELAXED));
	fflush(stdout);
	_exit(0);
}

int main(int argc, char **argv)
{
	int port = 0, threaded = 0, use_rpcbind = 1, n = 0, opt;
	const char *nettype = NULL;
	SVCXPRT *listeners[8];
	static sigset_t quit_set;
	pthread_t quitter;

	while ((opt = getopt(argc, argv, "p:mRN:")) != -1) {
		switch (opt) {
		case 'p':
			port = atoi(optarg);
			break;
		case 'm':
			threaded = 1;
			break;
		case 'R':
			use_rpcbind = 0;
			break;
		case 'N':
			nettype = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-p PORT] [-m] [-R] NETID... | -N NETTYPE\n",
				argv[0]);
			return 2;
		}
	}
	if (nettype ? optind != argc || threaded :
		      optind == argc || argc - optind > 8) {
		fprintf(stderr, "rpc_bw_server: NETID... (up to 8) or -N NETTYPE\n");
		return 2;
	}
	sigemptyset(&quit_set);
	sigaddset(&quit_set, SIGTERM);
	sigaddset(&quit_set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &quit_set, NULL);	/* every thread's */
	if (pthread_create(&quitter, NULL, wait_for_quit, &quit_set)) {
		fprintf(stderr, "rpc_bw_server: no thread\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);

	if (nettype) {
		svc_unreg(SDP_BW_PROG, SDP_BW_VERS);
		if (!svc_create(dispatch, SDP_BW_PROG, SDP_BW_VERS, nettype)) {
			fprintf(stderr, "rpc_bw_server: svc_create(%s): %s\n",
				nettype, clnt_spcreateerror(""));
			return 1;
		}
		registered = 1;
		printf("ready\n");
	} else {
		for (; optind < argc; optind++) {
			listeners[n] = listen_on(argv[optind], port, use_rpcbind);
			if (!port)	/* the same port for the rest */
				port = xprt_port(listeners[n]);
			n++;
		}
		printf("ready %d\n", port);
	}
	fflush(stdout);
	if (threaded)
		run_threaded(listeners, n);
	svc_run();
	return 1;
}
