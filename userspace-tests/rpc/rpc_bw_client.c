// SPDX-License-Identifier: GPL-2.0
/*
 * rpc_bw_client: the RPC bandwidth program's client, on libtirpc.
 *
 *   rpc_bw_client -h HOST (-n NETID | -N NETTYPE) [-p PORT] [-b BLOCK]
 *                 [-c CONNS] [-t TOTAL] [-r] [-S [-D]] [-T SECONDS] [-s]
 *
 * CONNS connections (a thread each) send TOTAL bytes between them in
 * WRITE calls of BLOCK bytes, which the server checks; -S makes them
 * WRITE_STAMPED calls, whose blocks are filled once and stamped for each
 * call (sdp_bw_proto.h), and -D spoils the last stamp of each, which the
 * server must find (a test of its check); -r also reads as many back
 * (READ), checked here.  The server is found through rpcbind
 * (clnt_tp_create() for a netid, clnt_create() for a nettype), or at PORT
 * when given.  -T bounds each call (default 25 s); -s asks the server's
 * counters at the end.  The time counted runs from when every connection
 * is up (created, and its NETID call answered) to the last call's answer,
 * as qperf and the kernel's bandwidth module count it: set-up has figures
 * of its own.  Prints one line of figures, with the netid of
 * the client and of the server's end of the first connection (procedure
 * NETID); exits 0 only when
 * every call succeeded and every block arrived intact.  On an RPC error
 * it prints "rpc_error STAT MESSAGE" (STAT: enum clnt_stat) and exits 1.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "sdp_rpc_bw.h"

static const char *host, *netid, *nettype;
static int port = -1, read_back, stamped, spoil, want_stats;
static uint32_t block = 65536;
static unsigned int conns = 1;
static unsigned long long total = 1 << 20;
static struct timeval timeout = { 25, 0 };
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
/* The streams and main(): all connections up, and all calls done. */
static pthread_barrier_t all_up, all_done;

static void rpc_failed(CLIENT *cl, enum clnt_stat st, const char *what)
{
	pthread_mutex_lock(&out_lock);
	printf("rpc_error %d %s: %s\n", st, what,
	       cl ? clnt_sperror(cl, "") : clnt_spcreateerror(""));
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	exit(1);
}

/* The server at -p PORT: no rpcbind. */
static CLIENT *create_at_port(struct netconfig *nconf)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	struct netbuf nb;
	char service[16];
	CLIENT *cl;

	hints.ai_family = strcmp(nconf->nc_protofmly, NC_INET6) ? AF_INET :
								  AF_INET6;
	snprintf(service, sizeof(service), "%d", port);
	if (getaddrinfo(host, service, &hints, &res)) {
		fprintf(stderr, "rpc_bw_client: cannot resolve %s\n", host);
		exit(2);
	}
	nb.buf = res->ai_addr;
	nb.len = nb.maxlen = res->ai_addrlen;
	cl = clnt_tli_create(RPC_ANYFD, nconf, &nb, SDP_BW_PROG, SDP_BW_VERS,
			     0, 0);
	freeaddrinfo(res);
	return cl;
}

static CLIENT *create_client(void)
{
	struct netconfig *nconf;
	CLIENT *cl;

	if (nettype) {
		cl = clnt_create_timed(host, SDP_BW_PROG, SDP_BW_VERS, nettype,
				       &timeout);
	} else {
		nconf = getnetconfigent(netid);
		if (!nconf) {
			fprintf(stderr, "rpc_bw_client: no netid %s in /etc/netconfig\n",
				netid);
			exit(2);
		}
		cl = port >= 0 ? create_at_port(nconf) :
			clnt_tp_create_timed(host, SDP_BW_PROG, SDP_BW_VERS,
					     nconf, &timeout);
		freenetconfigent(nconf);
	}
	if (!cl)
		rpc_failed(NULL, rpc_createerr.cf_stat, "create");
	clnt_control(cl, CLSET_TIMEOUT, (char *)&timeout);
	return cl;
}

struct stream {
	pthread_t thread;
	uint32_t id;
	unsigned long long bytes;
	char netid[16];		/* this end's */
	char server_netid[16];	/* the server's transport's */
};

static void *run_stream(void *arg)
{
	unsigned long long share = total / conns, sent;
	struct stream *s = arg;
	struct sdp_bw_read_args ra;
	struct sdp_bw_block b, got;
	char *server_netid = NULL;
	enum clnt_stat st;
	uint32_t status;
	CLIENT *cl;

	cl = create_client();
	snprintf(s->netid, sizeof(s->netid), "%s",
		 cl->cl_netid ? cl->cl_netid : "?");
	st = clnt_call(cl, SDP_BW_NETID, SDP_XDR(xdr_void), NULL,
		       SDP_XDR(xdr_wrapstring), (caddr_t)&server_netid, timeout);
	if (st != RPC_SUCCESS)
		rpc_failed(cl, st, "NETID");
	snprintf(s->server_netid, sizeof(s->server_netid), "%s", server_netid);
	clnt_freeres(cl, SDP_XDR(xdr_wrapstring), (caddr_t)&server_netid);
	b.data = malloc(block ? block : 1);
	if (!b.data)
		exit(2);
	b.stream = s->id;
	if (stamped)
		sdp_bw_fill(b.data, block, b.stream, 0);
	pthread_barrier_wait(&all_up);
	for (b.seq = 0, sent = 0; sent < share; b.seq++) {
		b.len = share - sent < block ? share - sent : block;
		if (stamped) {
			sdp_bw_stamp_put(b.data, b.len, b.stream, b.seq);
			if (spoil && sdp_bw_stamps(b.len))
				b.data[(sdp_bw_stamps(b.len) - 1) *
				       SDP_BW_STAMP_EVERY] ^= 1;
		} else {
			sdp_bw_fill(b.data, b.len, b.stream, b.seq);
		}
		st = clnt_call(cl, stamped ? SDP_BW_WRITE_STAMPED : SDP_BW_WRITE,
			       SDP_XDR(xdr_sdp_bw_block),
			       (caddr_t)&b, SDP_XDR(xdr_u_int32_t),
			       (caddr_t)&status, timeout);
		if (st != RPC_SUCCESS)
			rpc_failed(cl, st, "WRITE");
		if (status) {
			printf("damaged_block stream %u seq %u\n", b.stream, b.seq);
			exit(1);
		}
		sent += b.len;
		if (!read_back)
			continue;
		ra.stream = b.stream;
		ra.seq = b.seq;
		ra.len = b.len;
		memset(&got, 0, sizeof(got));
		st = clnt_call(cl, SDP_BW_READ, SDP_XDR(xdr_sdp_bw_read_args),
			       (caddr_t)&ra, SDP_XDR(xdr_sdp_bw_block),
			       (caddr_t)&got, timeout);
		if (st != RPC_SUCCESS)
			rpc_failed(cl, st, "READ");
		if (got.len != ra.len ||
		    !sdp_bw_intact(got.data, got.len, ra.stream, ra.seq)) {
			printf("damaged_reply stream %u seq %u\n", ra.stream, ra.seq);
			exit(1);
		}
		clnt_freeres(cl, SDP_XDR(xdr_sdp_bw_block), (caddr_t)&got);
		s->bytes += ra.len;
	}
	s->bytes += sent;
	pthread_barrier_wait(&all_done);
	free(b.data);
	clnt_destroy(cl);
	return NULL;
}

static void print_server_stats(void)
{
	struct sdp_bw_stats st;
	CLIENT *cl = create_client();
	enum clnt_stat rc;

	rc = clnt_call(cl, SDP_BW_STATS, SDP_XDR(xdr_void), NULL,
		       SDP_XDR(xdr_sdp_bw_stats), (caddr_t)&st, timeout);
	if (rc != RPC_SUCCESS)
		rpc_failed(cl, rc, "STATS");
	printf("server_blocks %llu server_bad %llu server_bytes %llu\n",
	       (unsigned long long)st.blocks,
	       (unsigned long long)st.bad_blocks,
	       (unsigned long long)st.bytes);
	clnt_destroy(cl);
}

int main(int argc, char **argv)
{
	unsigned long long bytes = 0;
	struct timespec t0, t1;
	struct stream *s;
	double secs;
	unsigned int i;
	int opt;

	while ((opt = getopt(argc, argv, "h:n:N:p:b:c:t:rSDT:s")) != -1) {
		switch (opt) {
		case 'h': host = optarg; break;
		case 'n': netid = optarg; break;
		case 'N': nettype = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'b': block = strtoul(optarg, NULL, 0); break;
		case 'c': conns = strtoul(optarg, NULL, 0); break;
		case 't': total = strtoull(optarg, NULL, 0); break;
		case 'r': read_back = 1; break;
		case 'S': stamped = 1; break;
		case 'D': spoil = 1; break;
		case 'T': timeout.tv_sec = atoi(optarg); break;
		case 's': want_stats = 1; break;
		default:
			fprintf(stderr, "usage: %s -h HOST (-n NETID | -N NETTYPE) [-p PORT] [-b BLOCK] [-c CONNS] [-t TOTAL] [-r] [-S [-D]] [-T SECONDS] [-s]\n",
				argv[0]);
			return 2;
		}
	}
	if (!host || !netid == !nettype || (nettype && port >= 0) ||
	    block > SDP_BW_MAX_BLOCK || !conns || conns > 64 ||
	    (spoil && (!stamped || block < 8))) {
		fprintf(stderr, "rpc_bw_client: -h HOST, one of -n/-N (-p only with -n), BLOCK <= %u, 1 <= CONNS <= 64, -D only with -S and BLOCK >= 8\n",
			SDP_BW_MAX_BLOCK);
		return 2;
	}

	/* A write to a connection the server reset: an error, not a death. */
	signal(SIGPIPE, SIG_IGN);
	s = calloc(conns, sizeof(*s));
	if (!s || pthread_barrier_init(&all_up, NULL, conns + 1) ||
	    pthread_barrier_init(&all_done, NULL, conns + 1))
		return 2;
	for (i = 0; i < conns; i++) {
		s[i].id = i;
		if (pthread_create(&s[i].thread, NULL, run_stream, &s[i]))
			return 2;
	}
	pthread_barrier_wait(&all_up);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_barrier_wait(&all_done);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (i = 0; i < conns; i++) {
		pthread_join(s[i].thread, NULL);
		bytes += s[i].bytes;
	}
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("netid %s server_netid %s block %u conns %u bytes %llu seconds %.3f MBps %.2f\n",
	       s[0].netid, s[0].server_netid, block, conns, bytes, secs,
	       bytes / secs / 1e6);
	if (want_stats)
		print_server_stats();
	free(s);
	return 0;
}
