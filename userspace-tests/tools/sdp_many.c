// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_many: many SDP connections at once between the bed's two hosts, from
 * one process: a listener on host B, COUNT non-blocking connects from host
 * A all under way together, every one accepted; then each connection
 * moves BYTES both ways at the same time, each direction its own stream
 * (sdp_hosts.h), checked byte by byte as it arrives and as a whole by
 * FNV-1a against what the other end sent, up to an orderly EOF.
 *
 *   sdp_many [-6] [-t] [-n COUNT] [-s BYTES] [-w] [-q]
 *
 * -6      IPv6 (fd99::1 -> fd99::2) instead of IPv4
 * -t      TCP instead of SDP: the reference
 * -n      connections (default 200)
 * -s      bytes each way on each connection (default 32768; 0: none)
 * -w      once all are up (and the data moved, each way shut down), print
 *         "ready" and keep them open, idle, until standard input closes
 * -q      print nothing but errors (and "ready")
 *
 * Raises RLIMIT_NOFILE to what 2 x COUNT sockets need.  Exits 0 when every
 * connection came up and carried its data intact; otherwise 1, saying
 * which connection failed and how.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "sdp_hosts.h"

/* How long the connections may go without any progress (ms). */
#define STALL_MS	60000
#define CHUNK		16384

/* One end of a connection: ends[i] the client, ends[count + i] its peer. */
struct end {
	int fd;
	int peer;		/* index of the other end */
	uint64_t seed;		/* the stream this end sends */
	uint64_t tx_off, rx_off;
	uint64_t tx_fnv, rx_fnv;
	bool connected, shut, eof;
};

static int count = 200, family = AF_INET, tcp, hold, quiet;
static long bytes = 32768;
static struct end *ends;

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sdp_many: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void raise_nofile(void)
{
	rlim_t need = 2 * (rlim_t)count + 32;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		fail("getrlimit: %s", strerror(errno));
	if (rl.rlim_cur >= need)
		return;
	rl.rlim_cur = need;
	if (rl.rlim_max < need)
		rl.rlim_max = need;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		fail("RLIMIT_NOFILE to %llu: %s", (unsigned long long)need,
		     strerror(errno));
}

static int new_socket(void)
{
	int fd = socket(tcp ? family : AF_INET_SDP, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0)
		fail("socket: %s", strerror(errno));
	return fd;
}

static int local_port(int fd, bool peer)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if ((peer ? getpeername : getsockname)(fd, (struct sockaddr *)&ss, &len))
		fail("get%sname: %s", peer ? "peer" : "sock", strerror(errno));
	return sdp_addr_port(&ss);
}

/* Polls @n entries; fails when nothing at all happens for STALL_MS. */
static void poll_or_fail(struct pollfd *pfd, int n, const char *what)
{
	int ret = poll(pfd, n, STALL_MS);

	if (ret < 0)
		fail("poll: %s", strerror(errno));
	if (!ret)
		fail("%s: no progress for %d s", what, STALL_MS / 1000);
}

/*
 * All COUNT connects under way at once, and every one accepted: the
 * accepted ends in ends[count..], not yet paired.
 */
static void connect_all(int lfd, const struct sockaddr_storage *b,
			socklen_t blen)
{
	struct pollfd *pfd = calloc(count + 1, sizeof(*pfd));
	int *idx = calloc(count + 1, sizeof(*idx));
	int i, n, up = 0, accepted = 0;
	char what[96];

	if (!pfd || !idx)
		fail("out of memory");
	for (i = 0; i < count; i++) {
		ends[i].fd = new_socket();
		if (!connect(ends[i].fd, (const struct sockaddr *)b, blen))
			ends[i].connected = true, up++;
		else if (errno != EINPROGRESS)
			fail("connect %d: %s", i, strerror(errno));
	}

	while (up < count || accepted < count) {
		n = 0;
		if (accepted < count) {
			pfd[n] = (struct pollfd){ .fd = lfd, .events = POLLIN };
			idx[n++] = -1;
		}
		for (i = 0; i < count; i++) {
			if (ends[i].connected)
				continue;
			pfd[n] = (struct pollfd){ .fd = ends[i].fd, .events = POLLOUT };
			idx[n++] = i;
		}
		snprintf(what, sizeof(what), "%d of %d connected, %d accepted",
			 up, count, accepted);
		poll_or_fail(pfd, n, what);

		for (i = 0; i < n; i++) {
			struct end *e;
			socklen_t len = sizeof(int);
			int fd, err = 0;

			if (!pfd[i].revents)
				continue;
			if (idx[i] < 0) {
				while (accepted < count) {
					fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
					if (fd < 0 && errno == EAGAIN)
						break;
					if (fd < 0)
						fail("accept: %s", strerror(errno));
					ends[count + accepted++].fd = fd;
				}
				continue;
			}
			e = &ends[idx[i]];
			if (getsockopt(e->fd, SOL_SOCKET, SO_ERROR, &err, &len))
				fail("SO_ERROR: %s", strerror(errno));
			if (err)
				fail("connect %d: %s (%d of %d connected)", idx[i],
				     strerror(err), up, count);
			e->connected = true;
			up++;
		}
	}
	free(pfd);
	free(idx);
}

/* Pairs each accepted end with its client, by the client's port. */
static void pair_all(void)
{
	int *by_port = malloc(65536 * sizeof(*by_port));
	int i, port;

	if (!by_port)
		fail("out of memory");
	for (i = 0; i < 65536; i++)
		by_port[i] = -1;
	for (i = 0; i < count; i++) {
		port = local_port(ends[i].fd, false);
		if (by_port[port] >= 0)
			fail("clients %d and %d share port %d", by_port[port], i, port);
		by_port[port] = i;
	}
	for (i = count; i < 2 * count; i++) {
		port = local_port(ends[i].fd, true);
		if (by_port[port] < 0)
			fail("an accepted connection from port %d, no client has it", port);
		ends[i].peer = by_port[port];
		ends[by_port[port]].peer = i;
		by_port[port] = -1;
	}
	for (i = 0; i < 2 * count; i++) {
		ends[i].seed = i + 1;
		ends[i].tx_fnv = STREAM_FNV_INIT;
		ends[i].rx_fnv = STREAM_FNV_INIT;
	}
	free(by_port);
}

static bool end_done(const struct end *e)
{
	return e->shut && e->eof;
}

/* Sends what the socket takes of this end's stream; SHUT_WR at its end. */
static void end_send(struct end *e, char *buf)
{
	size_t n = bytes - e->tx_off < CHUNK ? bytes - e->tx_off : CHUNK;
	ssize_t sent;

	if (n) {
		stream_fill(buf, n, e->seed, e->tx_off);
		sent = send(e->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sent < 0 && errno == EAGAIN)
			return;
		if (sent <= 0)
			fail("end %ld: send at %llu: %s", (long)(e - ends),
			     (unsigned long long)e->tx_off,
			     sent ? strerror(errno) : "returned 0");
		e->tx_fnv = stream_fnv1a(e->tx_fnv, buf, sent);
		e->tx_off += sent;
	}
	if (e->tx_off == (uint64_t)bytes) {
		if (shutdown(e->fd, SHUT_WR))
			fail("end %ld: shutdown: %s", (long)(e - ends), strerror(errno));
		e->shut = true;
	}
}

/* Reads and checks what arrived of the peer's stream, or its EOF. */
static void end_recv(struct end *e, char *buf)
{
	const struct end *p = &ends[e->peer];
	ssize_t n, bad;

	n = recv(e->fd, buf, CHUNK * 4, MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n < 0)
		fail("end %ld: recv at %llu: %s", (long)(e - ends),
		     (unsigned long long)e->rx_off, strerror(errno));
	if (!n) {
		if (e->rx_off != (uint64_t)bytes)
			fail("end %ld: EOF after %llu of %ld bytes", (long)(e - ends),
			     (unsigned long long)e->rx_off, bytes);
		e->eof = true;
		return;
	}
	if (e->rx_off + n > (uint64_t)bytes)
		fail("end %ld: %llu bytes, more than the %ld sent", (long)(e - ends),
		     (unsigned long long)(e->rx_off + n), bytes);
	bad = stream_mismatch(buf, n, p->seed, e->rx_off);
	if (bad >= 0)
		fail("end %ld: byte %llu is wrong", (long)(e - ends),
		     (unsigned long long)(e->rx_off + bad));
	e->rx_fnv = stream_fnv1a(e->rx_fnv, buf, n);
	e->rx_off += n;
}

/* Every connection moves BYTES each way at once, to an orderly EOF. */
static void move_all(void)
{
	struct pollfd *pfd = calloc(2 * count, sizeof(*pfd));
	int *idx = calloc(2 * count, sizeof(*idx));
	char *buf = malloc(CHUNK * 4);
	int i, n, done = 0;
	char what[64];

	if (!pfd || !idx || !buf)
		fail("out of memory");
	while (done < 2 * count) {
		n = 0;
		for (i = 0; i < 2 * count; i++) {
			struct end *e = &ends[i];

			if (end_done(e))
				continue;
			pfd[n] = (struct pollfd){
				.fd = e->fd,
				.events = (e->eof ? 0 : POLLIN) |
					  (e->shut ? 0 : POLLOUT),
			};
			idx[n++] = i;
		}
		snprintf(what, sizeof(what), "%d of %d ends done", done, 2 * count);
		poll_or_fail(pfd, n, what);
		for (i = 0; i < n; i++) {
			struct end *e = &ends[idx[i]];

			if (pfd[i].revents & POLLOUT)
				end_send(e, buf);
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
				end_recv(e, buf);
			if (end_done(e))
				done++;
		}
	}
	/* The whole of each stream, as the other end sent it. */
	for (i = 0; i < 2 * count; i++)
		if (ends[i].rx_fnv != ends[ends[i].peer].tx_fnv)
			fail("end %d: FNV-1a %016llx received, %016llx sent", i,
			     (unsigned long long)ends[i].rx_fnv,
			     (unsigned long long)ends[ends[i].peer].tx_fnv);
	free(pfd);
	free(idx);
	free(buf);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage b;
	double t0, t1, t2;
	socklen_t blen;
	int opt, lfd, i;

	while ((opt = getopt(argc, argv, "6tn:s:wq")) != -1) {
		switch (opt) {
		case '6': family = AF_INET6; break;
		case 't': tcp = 1; break;
		case 'n': count = atoi(optarg); break;
		case 's': bytes = atol(optarg); break;
		case 'w': hold = 1; break;
		case 'q': quiet = 1; break;
		default:
			fprintf(stderr, "usage: sdp_many [-6] [-t] [-n COUNT] [-s BYTES] [-w] [-q]\n");
			return 2;
		}
	}
	if (count < 1 || bytes < 0)
		fail("COUNT must be at least 1 and BYTES not negative");
	raise_nofile();
	ends = calloc(2 * count, sizeof(*ends));
	if (!ends)
		fail("out of memory");

	lfd = new_socket();
	blen = sdp_host_addr(&b, family, 'B', 0);
	if (bind(lfd, (struct sockaddr *)&b, blen) || listen(lfd, count) ||
	    getsockname(lfd, (struct sockaddr *)&b, &blen))
		fail("listener on host B: %s", strerror(errno));

	t0 = now_s();
	connect_all(lfd, &b, blen);
	t1 = now_s();
	pair_all();
	if (bytes)
		move_all();
	t2 = now_s();

	if (!quiet) {
		printf("%d connections over %s %s: all up in %.1f s\n", count,
		       tcp ? "TCP" : "SDP", family == AF_INET6 ? "IPv6" : "IPv4",
		       t1 - t0);
		if (bytes)
			printf("%ld bytes each way on each, checked (FNV-1a), in %.1f s\n",
			       bytes, t2 - t1);
	}
	if (hold) {
		char c;

		printf("ready\n");
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	for (i = 0; i < 2 * count; i++)
		close(ends[i].fd);
	close(lfd);
	free(ends);
	return 0;
}
