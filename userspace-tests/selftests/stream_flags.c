// SPDX-License-Identifier: GPL-2.0
/*
 * stream_flags: the send/recv flags of a stream socket, over real TCP (the
 * reference) and over SDP on IPv4, IPv6 and v4-mapped IPv6: MSG_PEEK
 * (does not consume, spans writes, with MSG_WAITALL), MSG_WAITALL (waits
 * for several writes, short only at EOF), MSG_DONTWAIT (EAGAIN when empty,
 * and when the send buffer is full), MSG_NOSIGNAL (EPIPE without SIGPIPE
 * after the peer closed; SIGPIPE without the flag), MSG_MORE, EOF after
 * the peer's shutdown(SHUT_WR), and sendto() addresses being ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

/* A thread that writes @n pieces of @len pattern bytes, @gap_us apart. */
struct slow_writer {
	int fd;
	uint64_t seed;
	size_t len;
	int n;
	unsigned int gap_us;
	int err;
};

static void *slow_write(void *arg)
{
	struct slow_writer *w = arg;
	uint64_t off = 0;
	int i;

	for (i = 0; i < w->n && !w->err; i++) {
		usleep(w->gap_us);
		w->err = stream_send_pattern(w->fd, w->seed, &off, w->len, 0);
	}
	return NULL;
}

FIXTURE(flags)
{
	STREAM_CONN_FIELDS;
};

STREAM_VARIANTS(flags);

FIXTURE_SETUP(flags)
{
	STREAM_SETUP(self, variant);
}

FIXTURE_TEARDOWN(flags)
{
	STREAM_TEARDOWN(self);
}

/* Peeking leaves the data queued: peek twice, then read the same bytes. */
TEST_F(flags, peek_does_not_consume)
{
	char a[200], b[200], c[200];
	uint64_t off = 0;

	ASSERT_EQ(0, stream_send_pattern(self->cfd, 1, &off, 100, 0));
	ASSERT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 100, STREAM_WAIT_MS));
	EXPECT_EQ(100, recv(self->afd, a, sizeof(a), MSG_PEEK));
	EXPECT_EQ(100, recv(self->afd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT));
	EXPECT_EQ(100, recv(self->afd, c, sizeof(c), 0));
	EXPECT_EQ(-1, stream_mismatch(a, 100, 1, 0));
	EXPECT_EQ(0, memcmp(a, b, 100));
	EXPECT_EQ(0, memcmp(a, c, 100));
	/* Now it is gone. */
	EXPECT_EQ(-1, recv(self->afd, a, sizeof(a), MSG_PEEK | MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
}

/* A short peek, a short read, then a peek sees from where the read ended. */
TEST_F(flags, peek_read_interleaved)
{
	char buf[200];
	uint64_t off = 0;

	ASSERT_EQ(0, stream_send_pattern(self->cfd, 2, &off, 100, 0));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 100, STREAM_WAIT_MS));
	EXPECT_EQ(10, recv(self->afd, buf, 10, MSG_PEEK));
	EXPECT_EQ(-1, stream_mismatch(buf, 10, 2, 0));
	EXPECT_EQ(30, recv(self->afd, buf, 30, 0));
	EXPECT_EQ(-1, stream_mismatch(buf, 30, 2, 0));
	EXPECT_EQ(70, recv(self->afd, buf, sizeof(buf), MSG_PEEK));
	EXPECT_EQ(-1, stream_mismatch(buf, 70, 2, 30));
	EXPECT_EQ(70, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(-1, stream_mismatch(buf, 70, 2, 30));
}

/* Two writes that have both arrived: one peek returns both. */
TEST_F(flags, peek_spans_writes)
{
	char buf[200];
	uint64_t off = 0;

	ASSERT_EQ(0, stream_send_pattern(self->cfd, 3, &off, 50, 0));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 50, STREAM_WAIT_MS));
	ASSERT_EQ(0, stream_send_pattern(self->cfd, 3, &off, 70, 0));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 120, STREAM_WAIT_MS));
	EXPECT_EQ(120, recv(self->afd, buf, sizeof(buf), MSG_PEEK));
	EXPECT_EQ(-1, stream_mismatch(buf, 120, 3, 0));
	/* And one read takes both. */
	EXPECT_EQ(120, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(-1, stream_mismatch(buf, 120, 3, 0));
}

/* MSG_PEEK | MSG_WAITALL waits until the whole length is there. */
TEST_F(flags, peek_waitall)
{
	struct slow_writer w = { .fd = self->cfd, .seed = 4, .len = 20, .n = 3,
				 .gap_us = 100000 };
	char buf[60];
	pthread_t t;

	stream_watchdog(20);
	ASSERT_EQ(0, pthread_create(&t, NULL, slow_write, &w));
	EXPECT_EQ(60, recv(self->afd, buf, sizeof(buf), MSG_PEEK | MSG_WAITALL));
	EXPECT_EQ(-1, stream_mismatch(buf, 60, 4, 0));
	pthread_join(t, NULL);
	EXPECT_EQ(0, w.err);
	EXPECT_EQ(60, recv(self->afd, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(-1, stream_mismatch(buf, 60, 4, 0));
	stream_watchdog(0);
}

/* MSG_WAITALL returns the full length, gathered from ten writes. */
TEST_F(flags, waitall_gathers_writes)
{
	struct slow_writer w = { .fd = self->cfd, .seed = 5, .len = 1000, .n = 10,
				 .gap_us = 20000 };
	char buf[10000];
	pthread_t t;

	stream_watchdog(20);
	ASSERT_EQ(0, pthread_create(&t, NULL, slow_write, &w));
	EXPECT_EQ(10000, recv(self->afd, buf, sizeof(buf), MSG_WAITALL));
	EXPECT_EQ(-1, stream_mismatch(buf, sizeof(buf), 5, 0));
	pthread_join(t, NULL);
	EXPECT_EQ(0, w.err);
	stream_watchdog(0);
}

/* MSG_WAITALL at EOF returns what there was; then 0. */
TEST_F(flags, waitall_short_at_eof)
{
	char buf[1000];
	uint64_t off = 0;

	stream_watchdog(20);
	ASSERT_EQ(0, stream_send_pattern(self->cfd, 6, &off, 500, 0));
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	EXPECT_EQ(500, recv(self->afd, buf, sizeof(buf), MSG_WAITALL));
	EXPECT_EQ(-1, stream_mismatch(buf, 500, 6, 0));
	EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), MSG_WAITALL));
	stream_watchdog(0);
}

/* Nothing to read: MSG_DONTWAIT fails with EAGAIN on a blocking socket. */
TEST_F(flags, dontwait_empty)
{
	char buf[10];
	int fl;

	EXPECT_EQ(-1, recv(self->afd, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, recv(self->cfd, buf, sizeof(buf), MSG_DONTWAIT | MSG_PEEK));
	EXPECT_EQ(EAGAIN, errno);
	/* As does a plain read on an O_NONBLOCK socket. */
	fl = fcntl(self->afd, F_GETFL);
	ASSERT_EQ(0, fcntl(self->afd, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(-1, read(self->afd, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, fcntl(self->afd, F_SETFL, fl));

	/* Once data is there, MSG_DONTWAIT reads it. */
	ASSERT_EQ(3, send(self->cfd, "abc", 3, 0));
	ASSERT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(3, recv(self->afd, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(0, memcmp(buf, "abc", 3));
}

/*
 * A peer that never reads: MSG_DONTWAIT sends fill the buffers, then fail
 * with EAGAIN.  When the peer drains it all, every byte is there and the
 * sender is writable again.
 */
TEST_F_TIMEOUT(flags, dontwait_send_fills, 120)
{
	uint64_t sent = 0, rcvd = 0;
	char buf[100];
	int ev;

	ASSERT_EQ(0, stream_fill_sndbuf(self->cfd, 7, &sent, 256ull << 20));
	TH_LOG("%llu bytes queued before EAGAIN", (unsigned long long)sent);
	EXPECT_LT(0, sent);
	/* Still full: even one byte fails the same way. */
	EXPECT_EQ(-1, send(self->cfd, buf, 1, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);

	/* Every byte that send() said it took arrives, and no more. */
	ASSERT_EQ(0, stream_recv_pattern(self->afd, 7, &rcvd, sent, 65537));
	ev = stream_wait(self->cfd, POLLOUT, STREAM_WAIT_MS);
	EXPECT_EQ(POLLOUT, ev);
	EXPECT_EQ(-1, recv(self->afd, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	/* And sending works again. */
	EXPECT_EQ(100, send(self->cfd, buf, 100, MSG_DONTWAIT));
}

/*
 * Sending to a peer that has closed: TCP's first send is taken (the peer
 * answers it with RST), a later one fails with EPIPE; with MSG_NOSIGNAL no
 * SIGPIPE comes.  Sends a byte every 10 ms, for at most 2 s, until one
 * fails; its errno in *@err.
 */
static void send_until_epipe(int fd, int flags, int *err)
{
	int i;

	*err = 0;
	for (i = 0; i < 200; i++) {
		if (send(fd, "x", 1, flags) < 0) {
			*err = errno;
			break;
		}
		usleep(10000);
	}
}

TEST_F(flags, nosignal_epipe_after_peer_close)
{
	char buf[10];
	int err;

	catch_sigpipe();
	stream_close(&self->afd);
	/* The close reaches us as EOF first. */
	ASSERT_EQ(POLLIN, stream_wait(self->cfd, POLLIN, STREAM_WAIT_MS));
	ASSERT_EQ(0, recv(self->cfd, buf, sizeof(buf), 0));

	send_until_epipe(self->cfd, MSG_NOSIGNAL, &err);
	EXPECT_EQ(EPIPE, err);
	EXPECT_EQ(-1, send(self->cfd, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(0, sigpipes);
}

TEST_F(flags, sigpipe_without_nosignal)
{
	char buf[10];
	int err;

	catch_sigpipe();
	stream_close(&self->afd);
	ASSERT_EQ(POLLIN, stream_wait(self->cfd, POLLIN, STREAM_WAIT_MS));
	ASSERT_EQ(0, recv(self->cfd, buf, sizeof(buf), 0));

	send_until_epipe(self->cfd, 0, &err);
	EXPECT_EQ(EPIPE, err);
	EXPECT_EQ(1, sigpipes);
	/* One SIGPIPE for each failing send. */
	EXPECT_EQ(-1, send(self->cfd, "x", 1, 0));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(2, sigpipes);
}

/* After the peer's shutdown(SHUT_WR): all data, then 0, again and again. */
TEST_F(flags, eof_after_last_byte)
{
	char buf[1000];
	uint64_t off = 0, roff = 0;

	ASSERT_EQ(0, stream_send_pattern(self->cfd, 8, &off, 3000, 0));
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	ASSERT_EQ(0, stream_recv_pattern(self->afd, 8, &roff, 3000, 1000));
	ASSERT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), MSG_PEEK));
	EXPECT_EQ(0, read(self->afd, buf, sizeof(buf)));
}

/*
 * MSG_MORE holds data back, written but not sent (SIOCOUTQNSD), only
 * until a send without it.
 */
TEST_F(flags, msg_more)
{
	char buf[300];
	uint64_t off = 0;
	int unsent = -1;

	stream_fill(buf, 200, 9, 0);
	ASSERT_EQ(100, send(self->cfd, buf, 100, MSG_MORE));
	EXPECT_EQ(0, ioctl(self->cfd, SIOCOUTQNSD, &unsent));
	EXPECT_EQ(100, unsent);
	ASSERT_EQ(100, send(self->cfd, buf + 100, 100, 0));
	ASSERT_EQ(0, stream_recv_pattern(self->afd, 9, &off, 200, 0));
	EXPECT_EQ(-1, recv(self->afd, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
}

/* On a connected stream socket sendto() ignores the address it is given. */
TEST_F(flags, sendto_ignores_address)
{
	struct sockaddr_storage other;
	socklen_t len = sdp_host_addr(&other, variant->family, 'A', 9);
	char buf[4];

	ASSERT_EQ(1, sendto(self->cfd, "a", 1, 0, (struct sockaddr *)&other, len));
	/* Even one too short to be any address. */
	ASSERT_EQ(1, sendto(self->cfd, "b", 1, 0, (struct sockaddr *)&other, 3));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 2, STREAM_WAIT_MS));
	EXPECT_EQ(2, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(0, memcmp(buf, "ab", 2));
}

TEST_HARNESS_MAIN
