// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_pattern_send: listens on host B, accepts one connection and sends
 * it the bed's test pattern, for the in-kernel readers of
 * kmod-read-sock/sdp_read_sock_test.c.
 *
 *   sdp_pattern_send -p PORT [-n BYTES] [-c CHUNK] [-6] [-t] [-C]
 *
 * -p      the port to listen on (host B: 10.99.0.2, or fd99::2 with -6)
 * -n      bytes to send (default 1 MiB)
 * -c      bytes per send() (default 65536)
 * -6      IPv6
 * -t      TCP instead of SDP (to check the test itself)
 * -C      close as soon as everything is sent; by default the sender shuts
 *         down its side and waits for the reader to close first
 *
 * Prints "listening PORT" once it listens, and, once everything is sent,
 * "bytes=N checksum=XXXXXXXX": the CRC-32 (zlib's) of the pattern.  The
 * pattern: 32-bit words of xorshift32 from seed 0x2545f491, little-endian.
 * Exits 0 when everything was sent.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdp_hosts.h"

#define PATTERN_SEED 0x2545f491u
#define WAIT_MS 60000

static uint32_t crc_table[256];

static void die(const char *what)
{
	fprintf(stderr, "sdp_pattern_send: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void crc_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

/* zlib's crc32() before the final inversion: start with ~0. */
static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static uint32_t xorshift32(uint32_t x)
{
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

int main(int argc, char **argv)
{
	int port = 0, family = AF_INET, sdp = 1, close_at_once = 0, opt;
	long long bytes = 1 << 20, sent = 0;
	struct sockaddr_storage addr;
	size_t chunk = 65536, i, n;
	uint32_t crc = ~0u, pat = PATTERN_SEED;
	unsigned char *buf;
	struct pollfd pfd;
	socklen_t len;
	int lfd, fd, one = 1;
	char c;

	while ((opt = getopt(argc, argv, "p:n:c:6tC")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'n': bytes = atoll(optarg); break;
		case 'c': chunk = strtoul(optarg, NULL, 0); break;
		case '6': family = AF_INET6; break;
		case 't': sdp = 0; break;
		case 'C': close_at_once = 1; break;
		default:
			fprintf(stderr, "usage: sdp_pattern_send -p PORT [-n BYTES] [-c CHUNK] [-6] [-t] [-C]\n");
			return 2;
		}
	}
	if (port <= 0 || bytes < 0 || !chunk) {
		fprintf(stderr, "sdp_pattern_send: -p PORT is needed; -n, -c positive\n");
		return 2;
	}
	crc_init();
	/* Whole words, so the pattern continues across sends. */
	chunk = (chunk + 3) & ~(size_t)3;
	buf = malloc(chunk);
	if (!buf)
		die("malloc");

	lfd = socket(sdp ? AF_INET_SDP : family, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket");
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		die("SO_REUSEADDR");
	len = sdp_host_addr(&addr, family, 'B', port);
	if (bind(lfd, (struct sockaddr *)&addr, len))
		die("bind");
	if (listen(lfd, 1))
		die("listen");
	printf("listening %d\n", port);
	fflush(stdout);

	pfd.fd = lfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, WAIT_MS) != 1) {
		errno = ETIMEDOUT;
		die("accept");
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	close(lfd);

	while (sent < bytes) {
		n = chunk;
		if ((long long)n > bytes - sent)
			n = bytes - sent;
		for (i = 0; i < n; i += 4) {
			pat = xorshift32(pat);
			buf[i] = pat;
			buf[i + 1] = pat >> 8;
			buf[i + 2] = pat >> 16;
			buf[i + 3] = pat >> 24;
		}
		crc = crc_update(crc, buf, n);
		for (i = 0; i < n; ) {
			ssize_t r = send(fd, buf + i, n - i, MSG_NOSIGNAL);

			if (r < 0) {
				if (errno == EINTR)
					continue;
				fprintf(stderr, "sdp_pattern_send: send after %lld bytes: %s\n",
					sent + (long long)i, strerror(errno));
				return 1;
			}
			i += r;
		}
		sent += n;
	}
	printf("bytes=%lld checksum=%08x\n", sent, ~crc);
	fflush(stdout);

	if (!close_at_once) {
		/* Our side is done; the reader closes when it has read it all. */
		shutdown(fd, SHUT_WR);
		pfd.fd = fd;
		pfd.events = POLLIN;
		while (poll(&pfd, 1, WAIT_MS) == 1 && read(fd, &c, 1) > 0)
			;
	}
	close(fd);
	return 0;
}
