// SPDX-License-Identifier: GPL-2.0
/*
 * conn_rate: how many connections per second one transport sets up
 * between the bed's two hosts.  THREADS client threads on host A each
 * connect COUNT / THREADS times in turn, each time to a listener on host
 * B served by as many threads: connect, a one-byte request and its
 * answer (the connection is usable both ways), close.  The same over
 * TCP, SDP (family 27) or rsockets (librdmacm), so their rates compare
 * in one boot.
 *
 *   conn_rate [-t tcp|sdp|rsocket] [-c THREADS] [-n COUNT] [-p PORT]
 *
 * Prints "TRANSPORT THREADS COUNT SECONDS RATE" on one line; exits 0
 * when every connection came up and answered, otherwise 1, saying what
 * failed.
 */
#include <errno.h>
#include <pthread.h>
#include <rdma/rsocket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sdp_hosts.h"

/* The socket calls of one transport. */
struct transport {
	const char *name;
	int family;
	int (*socket)(int domain, int type, int protocol);
	int (*bind)(int fd, const struct sockaddr *addr, socklen_t len);
	int (*listen)(int fd, int backlog);
	int (*accept)(int fd, struct sockaddr *addr, socklen_t *len);
	int (*connect)(int fd, const struct sockaddr *addr, socklen_t len);
	ssize_t (*recv)(int fd, void *buf, size_t len, int flags);
	ssize_t (*send)(int fd, const void *buf, size_t len, int flags);
	int (*close)(int fd);
	int (*setsockopt)(int fd, int level, int name, const void *val,
			  socklen_t len);
};

static const struct transport transports[] = {
	{ "tcp", AF_INET, socket, bind, listen, accept, connect, recv, send,
	  close, setsockopt },
	{ "sdp", AF_INET_SDP, socket, bind, listen, accept, connect, recv, send,
	  close, setsockopt },
	{ "rsocket", AF_INET, rsocket, rbind, rlisten, raccept, rconnect, rrecv,
	  rsend, rclose, rsetsockopt },
};

#define NTRANSPORTS	(sizeof(transports) / sizeof(transports[0]))

static const struct transport *tp = &transports[1];
static int threads = 1, count = 1000, port = 18600;
static struct sockaddr_storage a_addr, b_addr;
static socklen_t a_len, b_len;
static int lfd;

static void fail(const char *what)
{
	fprintf(stderr, "conn_rate: %s %s: %s\n", tp->name, what,
		strerror(errno));
	exit(1);
}

static int per_thread(int i)
{
	return count / threads + (i < count % threads);
}

/* A server thread: accepts its share of the connections and answers each. */
static void *serve(void *arg)
{
	int i, n = per_thread((int)(long)arg);
	char c;

	for (i = 0; i < n; i++) {
		int fd = tp->accept(lfd, NULL, NULL);

		if (fd < 0)
			fail("accept");
		if (tp->recv(fd, &c, 1, MSG_WAITALL) != 1)
			fail("server recv");
		if (tp->send(fd, &c, 1, 0) != 1)
			fail("server send");
		tp->close(fd);
	}
	return NULL;
}

/* A client thread: its share of connections, one after the other. */
static void *client(void *arg)
{
	int i, n = per_thread((int)(long)arg);
	char c = 'x';

	for (i = 0; i < n; i++) {
		int fd = tp->socket(tp->family, SOCK_STREAM, 0);

		if (fd < 0)
			fail("socket");
		if (tp->bind(fd, (struct sockaddr *)&a_addr, a_len))
			fail("bind");
		if (tp->connect(fd, (struct sockaddr *)&b_addr, b_len))
			fail("connect");
		if (tp->send(fd, &c, 1, 0) != 1)
			fail("client send");
		if (tp->recv(fd, &c, 1, MSG_WAITALL) != 1)
			fail("client recv");
		tp->close(fd);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t srv[64], cli[64];
	int opt, one = 1, i;
	double t0, t;

	while ((opt = getopt(argc, argv, "t:c:n:p:")) != -1) {
		switch (opt) {
		case 't':
			tp = NULL;
			for (i = 0; i < (int)NTRANSPORTS; i++)
				if (!strcmp(optarg, transports[i].name))
					tp = &transports[i];
			if (!tp)
				goto usage;
			break;
		case 'c': threads = atoi(optarg); break;
		case 'n': count = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (threads < 1 || threads > 64 || count < threads)
		goto usage;

	a_len = sdp_host_addr(&a_addr, AF_INET, 'A', 0);
	b_len = sdp_host_addr(&b_addr, AF_INET, 'B', port);
	lfd = tp->socket(tp->family, SOCK_STREAM, 0);
	if (lfd < 0)
		fail("socket");
	if (tp->setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		fail("SO_REUSEADDR");
	if (tp->bind(lfd, (struct sockaddr *)&b_addr, b_len))
		fail("bind the listener");
	if (tp->listen(lfd, 4 * threads))
		fail("listen");

	t0 = now_s();
	for (i = 0; i < threads; i++)
		if (pthread_create(&srv[i], NULL, serve, (void *)(long)i) ||
		    pthread_create(&cli[i], NULL, client, (void *)(long)i))
			fail("pthread_create");
	for (i = 0; i < threads; i++) {
		pthread_join(cli[i], NULL);
		pthread_join(srv[i], NULL);
	}
	t = now_s() - t0;
	printf("%s %d %d %.3f %.1f\n", tp->name, threads, count, t, count / t);
	tp->close(lfd);
	return 0;
usage:
	fprintf(stderr, "usage: conn_rate [-t tcp|sdp|rsocket] [-c THREADS] [-n COUNT] [-p PORT]\n");
	return 2;
}
