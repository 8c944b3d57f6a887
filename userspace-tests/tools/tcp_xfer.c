// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_xfer: a plain TCP program, for running under libsdp.so: it knows
 * nothing of SDP.  The server takes connections with accept4() and epoll
 * and answers each with the FNV-1a hash of all it received; the client
 * sends a pattern, half-closes and checks the hash.  Both check what the
 * preload must keep of their sockets: the descriptor flags, the file
 * flags, the address family of the names.
 *
 *   tcp_xfer server ADDRESS PORT CONNECTIONS
 *   tcp_xfer client [-n] ADDRESS PORT BYTES
 *
 * -n: a non-blocking connect(), waited for with poll() and SO_ERROR, then
 *     connect() again, which must say it is connected (0 or EISCONN).
 * ADDRESS: IPv4 or IPv6.  The server prints "listening" once it does.
 * Exit status 0 iff everything held.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define FNV_INIT 0xcbf29ce484222325ull

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t len)
{
	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static int fail(const char *what)
{
	fprintf(stderr, "tcp_xfer: %s: %s\n", what, strerror(errno));
	return 1;
}

static socklen_t make_addr(struct sockaddr_storage *ss, const char *host,
			   int port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		return sizeof(*sin);
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
		return 0;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	return sizeof(*sin6);
}

/* The names of @fd are of @family, and its flags are as made. */
static int check_socket(int fd, int family, int nonblock)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return fail("getsockname");
	if (ss.ss_family != family) {
		fprintf(stderr, "tcp_xfer: getsockname family %d, want %d\n",
			ss.ss_family, family);
		return 1;
	}
	len = sizeof(ss);
	if (getpeername(fd, (struct sockaddr *)&ss, &len))
		return fail("getpeername");
	if (ss.ss_family != family) {
		fprintf(stderr, "tcp_xfer: getpeername family %d, want %d\n",
			ss.ss_family, family);
		return 1;
	}
	if (!(fcntl(fd, F_GETFD) & FD_CLOEXEC)) {
		fprintf(stderr, "tcp_xfer: FD_CLOEXEC lost\n");
		return 1;
	}
	if (!!(fcntl(fd, F_GETFL) & O_NONBLOCK) != nonblock) {
		fprintf(stderr, "tcp_xfer: O_NONBLOCK %s\n",
			nonblock ? "lost" : "appeared");
		return 1;
	}
	return 0;
}

/* Reads @fd to its end; the hash of it all, or an error. */
static int drain(int fd, uint64_t *hash)
{
	unsigned char buf[65536];
	ssize_t n;

	*hash = FNV_INIT;
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			poll(&p, 1, 30000);
			continue;
		}
		if (n < 0)
			return fail("read");
		if (!n)
			return 0;
		*hash = fnv1a(*hash, buf, n);
	}
}

static int server(const char *host, int port, int conns)
{
	struct sockaddr_storage ss;
	struct epoll_event ev;
	socklen_t len = make_addr(&ss, host, port);
	int lfd, ep, one = 1, err = 0;

	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!len || lfd < 0)
		return fail("socket");
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&ss, len) || listen(lfd, 16))
		return fail("bind/listen");
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = lfd };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev))
		return fail("epoll");
	printf("listening\n");
	fflush(stdout);
	while (conns-- > 0 && !err) {
		uint64_t hash;
		int fd;

		if (epoll_wait(ep, &ev, 1, 60000) != 1)
			return fail("epoll_wait");
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			return fail("accept4");
		err = check_socket(fd, ss.ss_family, 0) || drain(fd, &hash);
		if (!err && write(fd, &hash, sizeof(hash)) != sizeof(hash))
			err = fail("write");
		close(fd);
	}
	close(ep);
	close(lfd);
	return err;
}

static int client(const char *host, int port, long long bytes, int nonblock)
{
	unsigned char buf[65536];
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, host, port);
	uint64_t mine = FNV_INIT, theirs;
	long long sent = 0;
	int fd, flags = SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0);

	fd = socket(ss.ss_family, SOCK_STREAM | flags, 0);
	if (!len || fd < 0)
		return fail("socket");
	if (connect(fd, (struct sockaddr *)&ss, len)) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		socklen_t elen = sizeof(int);
		int soerr;

		if (!nonblock || errno != EINPROGRESS)
			return fail("connect");
		if (poll(&p, 1, 60000) != 1)
			return fail("poll for the connection");
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &elen) || soerr) {
			errno = soerr;
			return fail("connect (SO_ERROR)");
		}
		/* as hiredis does: connect() again says the connection is made */
		if (connect(fd, (struct sockaddr *)&ss, len) && errno != EISCONN)
			return fail("connect again");
	}
	if (check_socket(fd, ss.ss_family, nonblock))
		return 1;
	if (nonblock && fcntl(fd, F_SETFL, 0))
		return fail("fcntl");
	while (sent < bytes) {
		size_t n = bytes - sent < (long long)sizeof(buf) ?
			   (size_t)(bytes - sent) : sizeof(buf);
		size_t i;

		for (i = 0; i < n; i++)
			buf[i] = (unsigned char)((sent + i) * 2654435761u >> 13);
		if (write(fd, buf, n) != (ssize_t)n)
			return fail("write");
		mine = fnv1a(mine, buf, n);
		sent += n;
	}
	if (shutdown(fd, SHUT_WR))
		return fail("shutdown");
	if (read(fd, &theirs, sizeof(theirs)) != sizeof(theirs))
		return fail("read the hash");
	close(fd);
	if (theirs != mine) {
		fprintf(stderr, "tcp_xfer: hash %016llx, sent %016llx\n",
			(unsigned long long)theirs, (unsigned long long)mine);
		return 1;
	}
	printf("sent %lld bytes, hash %016llx\n", bytes, (unsigned long long)mine);
	return 0;
}

int main(int argc, char **argv)
{
	int nonblock = argc > 2 && !strcmp(argv[2], "-n");

	if (argc == 5 && !strcmp(argv[1], "server"))
		return server(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 5 + nonblock && !strcmp(argv[1], "client"))
		return client(argv[2 + nonblock], atoi(argv[3 + nonblock]),
			      atoll(argv[4 + nonblock]), nonblock);
	fprintf(stderr, "usage: tcp_xfer server ADDRESS PORT CONNECTIONS\n"
			"       tcp_xfer client [-n] ADDRESS PORT BYTES\n");
	return 2;
}
