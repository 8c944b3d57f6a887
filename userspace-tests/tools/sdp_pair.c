// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_pair: makes SDP connections between the bed's two hosts from one
 * process: a listener on host B, connects from host A, accepts.
 *
 *   sdp_pair [-6] [-p PORT] [-n COUNT] [-s BYTES] [-w] [-q]
 *
 * -6      IPv6 (fd99::1 -> fd99::2) instead of IPv4 (10.99.0.1 -> 10.99.0.2)
 * -p      listener port (default: any)
 * -n      connect, accept, check the addresses and close COUNT times
 *         (default 1), then print the set-up times
 * -s      over each connection, send BYTES of a known pattern from the
 *         client and check them at the server (FNV-1a), then print the
 *         rate of the last transfer
 * -w      keep the last connection and the listener open until standard
 *         input closes (prints "ready" first); the server leaves the last
 *         transfer unread
 * -q      print nothing but errors
 *
 * Exits 0 when every connection came up with the right addresses.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sdp_hosts.h"

static int family = AF_INET;
static int quiet;

static void die(const char *what)
{
	fprintf(stderr, "sdp_pair: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct xfer {
	int fd;
	long bytes;
};

static unsigned char pattern(long i)
{
	return (unsigned char)(i * 7 + 3);
}

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
	while (n--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

/* The client's side of a transfer, in a thread: the server reads meanwhile. */
static void *send_pattern(void *arg)
{
	struct xfer *x = arg;
	unsigned char buf[65536];
	long sent = 0;

	while (sent < x->bytes) {
		long n = x->bytes - sent < (long)sizeof(buf) ?
			 x->bytes - sent : (long)sizeof(buf);
		long i;

		for (i = 0; i < n; i++)
			buf[i] = pattern(sent + i);
		n = write(x->fd, buf, n);
		if (n <= 0)
			die("write");
		sent += n;
	}
	return NULL;
}

/* Reads @bytes and checks them against the pattern. */
static void check_pattern(int fd, long bytes)
{
	uint64_t want = 0xcbf29ce484222325ULL, got = want;
	unsigned char buf[65536];
	long i, have = 0;

	for (i = 0; i < bytes; i++) {
		unsigned char c = pattern(i);

		want = fnv1a(want, &c, 1);
	}
	while (have < bytes) {
		long n = read(fd, buf, sizeof(buf));

		if (n <= 0)
			die("read");
		got = fnv1a(got, buf, n);
		have += n;
	}
	if (got != want) {
		fprintf(stderr, "sdp_pair: checksum mismatch\n");
		exit(1);
	}
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage b_addr, a_addr, got, peer, local;
	int port = 0, count = 1, hold = 0, opt, lfd, cfd = -1, afd = -1, i;
	long bytes = 0;
	double xfer_us = 0;
	socklen_t len, b_len;
	double *times;

	while ((opt = getopt(argc, argv, "6p:n:s:wq")) != -1) {
		switch (opt) {
		case '6': family = AF_INET6; break;
		case 'p': port = atoi(optarg); break;
		case 'n': count = atoi(optarg); break;
		case 's': bytes = atol(optarg); break;
		case 'w': hold = 1; break;
		case 'q': quiet = 1; break;
		default:
			fprintf(stderr, "usage: sdp_pair [-6] [-p PORT] [-n COUNT] [-s BYTES] [-w] [-q]\n");
			return 2;
		}
	}
	if (count < 1)
		count = 1;
	times = calloc(count, sizeof(*times));

	lfd = socket(AF_INET_SDP, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket");
	b_len = sdp_host_addr(&b_addr, family, 'B', port);
	if (bind(lfd, (struct sockaddr *)&b_addr, b_len))
		die("bind");
	if (listen(lfd, 16))
		die("listen");
	len = sizeof(b_addr);
	if (getsockname(lfd, (struct sockaddr *)&b_addr, &len))
		die("getsockname");
	sdp_host_addr(&a_addr, family, 'A', 0);

	for (i = 0; i < count; i++) {
		double t0;

		cfd = socket(AF_INET_SDP, SOCK_STREAM, 0);
		if (cfd < 0)
			die("socket");
		t0 = now_us();
		if (connect(cfd, (struct sockaddr *)&b_addr, b_len))
			die("connect");
		len = sizeof(got);
		afd = accept(lfd, (struct sockaddr *)&got, &len);
		if (afd < 0)
			die("accept");
		times[i] = now_us() - t0;

		/* The accepted peer is the client's local end, and vice versa. */
		len = sizeof(local);
		if (getsockname(cfd, (struct sockaddr *)&local, &len))
			die("getsockname");
		len = sizeof(peer);
		if (getpeername(cfd, (struct sockaddr *)&peer, &len))
			die("getpeername");
		if (!sdp_same_addr(&got, &a_addr, 0) || !sdp_same_addr(&got, &local, 1) ||
		    !sdp_same_addr(&peer, &b_addr, 1)) {
			fprintf(stderr, "sdp_pair: addresses do not match\n");
			return 1;
		}
		if (bytes) {
			struct xfer x = { .fd = cfd, .bytes = bytes };
			pthread_t t;
			double t1 = now_us();

			if (pthread_create(&t, NULL, send_pattern, &x))
				die("pthread_create");
			if (!(hold && i == count - 1))
				check_pattern(afd, bytes);
			pthread_join(t, NULL);
			xfer_us = now_us() - t1;
		}
		if (hold && i == count - 1)
			break;
		close(afd);
		close(cfd);
	}

	qsort(times, count, sizeof(*times), cmp_double);
	if (!quiet)
		printf("%d connection(s) over %s: set-up min %.0f us, median %.0f us, max %.0f us\n",
		       count, family == AF_INET6 ? "IPv6" : "IPv4", times[0],
		       times[count / 2], times[count - 1]);

	if (bytes && !hold && !quiet)
		printf("%ld bytes sent and checked: %.1f MB/s\n", bytes,
		       bytes / xfer_us);
	if (hold) {
		char c;

		printf("ready\n");
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		close(afd);
		close(cfd);
	}
	close(lfd);
	free(times);
	return 0;
}
