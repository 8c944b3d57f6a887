// SPDX-License-Identifier: GPL-2.0
/*
 * stream_close: shutdown and close of stream connections, over real TCP
 * (the reference) and over SDP on IPv4, IPv6 and v4-mapped IPv6.
 * Half-close in either direction; orderly close delivering everything
 * written before it, then EOF; close with unread data and SO_LINGER
 * {1, 0} resetting the peer (ECONNRESET once, then EOF and EPIPE); data
 * that arrived before a reset still read; EPIPE and SIGPIPE writing after
 * the peer closed or after one's own SHUT_WR; shutdown() errors (ENOTCONN,
 * EINVAL), shutdown of a listener, and shutdown waking a blocked reader.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

/* Waits, at most STREAM_WAIT_MS, until @fd reports POLLERR. */
static int wait_err(int fd)
{
	return stream_wait_bits(fd, POLLERR, STREAM_WAIT_MS);
}

/*
 * The half-close: @closer shuts its sending side; @other reads EOF, then
 * still sends, and @closer still reads all of it; then @other closes and
 * @closer reads EOF.
 */
static void half_close(struct __test_metadata *_metadata, int closer, int other)
{
	uint64_t off = 0, roff = 0, pre = 0, pre_r = 0;
	char buf[16];

	/* Data written before the shutdown comes first. */
	ASSERT_EQ(0, stream_send_pattern(closer, 1, &pre, 3000, 0));
	ASSERT_EQ(0, shutdown(closer, SHUT_WR));
	ASSERT_EQ(0, stream_recv_pattern(other, 1, &pre_r, 3000, 0));
	ASSERT_EQ(POLLIN, stream_wait(other, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(0, recv(other, buf, sizeof(buf), 0));

	/* (Little enough to sit in the buffers before it is read.) */
	ASSERT_EQ(0, stream_send_pattern(other, 2, &off, 16000, 4096));
	EXPECT_EQ(0, stream_recv_pattern(closer, 2, &roff, 16000, 7));
	/* The closer cannot send any more. */
	EXPECT_EQ(-1, send(closer, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);

	ASSERT_EQ(0, close(other));
	/* Both directions are shut now: POLLHUP with the EOF. */
	ASSERT_EQ(POLLIN | POLLHUP, stream_wait(closer, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(0, recv(closer, buf, sizeof(buf), 0));
}

FIXTURE(closing)
{
	STREAM_CONN_FIELDS;
};

STREAM_VARIANTS(closing);

FIXTURE_SETUP(closing)
{
	STREAM_SETUP(self, variant);
}

FIXTURE_TEARDOWN(closing)
{
	STREAM_TEARDOWN(self);
}

TEST_F(closing, half_close_client_to_server)
{
	half_close(_metadata, self->cfd, self->afd);
	self->afd = -1;		/* closed by half_close() */
}

TEST_F(closing, half_close_server_to_client)
{
	half_close(_metadata, self->afd, self->cfd);
	self->cfd = -1;
}

/* A thread that writes @len bytes and closes at once. */
struct write_close {
	int fd;
	size_t len;
	int err;
};

static void *write_then_close(void *arg)
{
	struct write_close *w = arg;
	uint64_t off = 0;

	w->err = stream_send_pattern(w->fd, 3, &off, w->len, 65536);
	if (close(w->fd) && !w->err)
		w->err = -errno;
	return NULL;
}

/*
 * close() right after the last write, with the data still queued: the
 * peer reads every byte, then EOF (not a reset).
 */
TEST_F_TIMEOUT(closing, orderly_close_delivers_all, 60)
{
	struct write_close w = { .fd = self->cfd, .len = 1 << 20 };
	uint64_t roff = 0;
	char buf[16];
	pthread_t t;

	self->cfd = -1;		/* the thread closes it */
	ASSERT_EQ(0, pthread_create(&t, NULL, write_then_close, &w));
	usleep(200000);		/* let the close come before most reads */
	EXPECT_EQ(0, stream_recv_pattern(self->afd, 3, &roff, w.len, 4093));
	EXPECT_EQ(w.len, roff);
	if (roff == w.len) {
		EXPECT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
		EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
		EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
	} else {
		stream_close(&self->afd);	/* reset: unblocks the writer */
	}
	pthread_join(t, NULL);
	EXPECT_EQ(0, w.err);
}

/* Small writes then close, many times over: never a byte lost. */
TEST_F_TIMEOUT(closing, orderly_close_repeated, 60)
{
	uint64_t off, roff;
	char buf[16];
	int i;

	for (i = 0; i < 20; i++) {
		off = roff = 0;
		ASSERT_EQ(0, stream_send_pattern(self->cfd, 4 + i, &off, 1 + i * 797, 0));
		stream_close(&self->cfd);
		ASSERT_EQ(0, stream_recv_pattern(self->afd, 4 + i, &roff, 1 + i * 797, 0));
		ASSERT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
		ASSERT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
		stream_close(&self->afd);
		ASSERT_EQ(0, stream_connect(variant->sdp, variant->family, self->lfd,
					    &self->b, self->blen, &self->cfd, &self->afd));
	}
}

/*
 * Closing with data unread resets the connection: the peer's next recv()
 * fails with ECONNRESET, once; after that it reads EOF and sends get EPIPE.
 */
TEST_F(closing, close_unread_resets_peer_recv)
{
	char buf[16];

	ASSERT_EQ(5, write(self->afd, "hello", 5));
	ASSERT_EQ(0, stream_wait_bytes(self->cfd, 5, STREAM_WAIT_MS));
	stream_close(&self->cfd);

	EXPECT_EQ(POLLERR, wait_err(self->afd) & POLLERR);
	EXPECT_EQ(-1, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(-1, send(self->afd, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	/* The error was reported once: SO_ERROR is clear. */
	EXPECT_EQ(0, so_error(self->afd));
}

/* The same reset seen first by a send(): ECONNRESET, then EPIPE. */
TEST_F(closing, close_unread_resets_peer_send)
{
	char buf[16];

	ASSERT_EQ(5, write(self->afd, "hello", 5));
	ASSERT_EQ(0, stream_wait_bytes(self->cfd, 5, STREAM_WAIT_MS));
	stream_close(&self->cfd);

	EXPECT_EQ(POLLERR, wait_err(self->afd) & POLLERR);
	EXPECT_EQ(-1, send(self->afd, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(-1, send(self->afd, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
}

/* SO_LINGER {1, 0}: close() resets at once, even with nothing unread. */
TEST_F(closing, linger_zero_resets)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };
	char buf[16];

	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	stream_close(&self->cfd);
	EXPECT_EQ(POLLERR, wait_err(self->afd) & POLLERR);
	EXPECT_EQ(-1, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
}

/*
 * Data that arrived before the reset is still read, in full; the reset
 * comes after it.
 */
TEST_F(closing, linger_zero_after_delivered_data)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };
	uint64_t off = 0, roff = 0;
	char buf[16];

	ASSERT_EQ(0, stream_send_pattern(self->cfd, 5, &off, 3000, 0));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 3000, STREAM_WAIT_MS));
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	stream_close(&self->cfd);
	EXPECT_EQ(POLLERR, wait_err(self->afd) & POLLERR);
	EXPECT_EQ(0, stream_recv_pattern(self->afd, 5, &roff, 3000, 1000));
	EXPECT_EQ(-1, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
}

/*
 * Writing to a peer that closed (having read everything): TCP takes the
 * first write, the peer's RST makes a later one fail with EPIPE, and
 * raise SIGPIPE once per failed write; with MSG_NOSIGNAL, no signal.
 */
TEST_F(closing, write_after_peer_close)
{
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	char buf[16];
	int i;

	catch_sigpipe();
	stream_close(&self->afd);
	ASSERT_EQ(POLLIN, stream_wait(self->cfd, POLLIN, STREAM_WAIT_MS));
	ASSERT_EQ(0, recv(self->cfd, buf, sizeof(buf), 0));
	for (i = 0; i < 200; i++) {
		if (write(self->cfd, "x", 1) < 0)
			break;
		usleep(10000);
	}
	ASSERT_GT(200, i);
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(1, sigpipes);
	EXPECT_EQ(-1, writev(self->cfd, &iov, 1));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(2, sigpipes);
	EXPECT_EQ(-1, send(self->cfd, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(2, sigpipes);
	/* Reading still says EOF. */
	EXPECT_EQ(0, recv(self->cfd, buf, sizeof(buf), MSG_DONTWAIT));
}

/* After our own SHUT_WR a write fails at once: EPIPE, with SIGPIPE. */
TEST_F(closing, write_after_own_shut_wr)
{
	char buf[16];

	catch_sigpipe();
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	EXPECT_EQ(-1, write(self->cfd, "x", 1));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(1, sigpipes);
	EXPECT_EQ(-1, send(self->cfd, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(1, sigpipes);
	/* A second SHUT_WR is no error. */
	EXPECT_EQ(0, shutdown(self->cfd, SHUT_WR));
	/* The peer got EOF and nothing else. */
	ASSERT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
}

TEST_F(closing, shutdown_unconnected_enotconn)
{
	int fd = stream_socket(variant->sdp, variant->family, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, shutdown(fd, SHUT_RD));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, shutdown(fd, SHUT_WR));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, shutdown(fd, SHUT_RDWR));
	EXPECT_EQ(ENOTCONN, errno);
	close(fd);
}

/* A bad @how is EINVAL, checked before the state, and changes nothing. */
TEST_F(closing, shutdown_bad_how)
{
	int fd = stream_socket(variant->sdp, variant->family, 0);
	char buf[4];

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, shutdown(fd, 7));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
	EXPECT_EQ(-1, shutdown(self->lfd, 7));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, shutdown(self->cfd, 7));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, shutdown(self->cfd, 3));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, shutdown(self->cfd, -1));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(2, write(self->cfd, "ok", 2));
	ASSERT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(2, read(self->afd, buf, sizeof(buf)));
	ASSERT_EQ(2, write(self->afd, "ok", 2));
	ASSERT_EQ(POLLIN, stream_wait(self->cfd, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(2, read(self->cfd, buf, sizeof(buf)));
}

/* A thread blocked in accept() on @lfd: its result and errno. */
struct blocked_accept {
	int lfd;
	int ret;
	int err;
};

static void *accept_blocked(void *arg)
{
	struct blocked_accept *a = arg;

	a->ret = accept(a->lfd, NULL, NULL);
	a->err = errno;
	return NULL;
}

/*
 * A listener ignores SHUT_WR; SHUT_RD stops it: a blocked accept() wakes
 * with EINVAL, later ones fail the same way, connections are refused.
 */
TEST_F(closing, shutdown_listener)
{
	struct blocked_accept a = { .lfd = self->lfd };
	int fd, afd;
	pthread_t t;

	stream_watchdog(20);
	EXPECT_EQ(0, shutdown(self->lfd, SHUT_WR));
	fd = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, stream_connect_fd(fd, self->lfd, &self->b, self->blen, &afd));
	close(afd);
	close(fd);

	ASSERT_EQ(0, pthread_create(&t, NULL, accept_blocked, &a));
	usleep(200000);		/* let it block */
	EXPECT_EQ(0, shutdown(self->lfd, SHUT_RD));
	pthread_join(t, NULL);
	EXPECT_EQ(-1, a.ret);
	EXPECT_EQ(EINVAL, a.err);
	EXPECT_EQ(-1, accept(self->lfd, NULL, NULL));
	EXPECT_EQ(EINVAL, errno);
	fd = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&self->b, self->blen));
	EXPECT_EQ(ECONNREFUSED, errno);
	close(fd);
	stream_watchdog(0);
}

/* A thread blocked in recv() on @fd: its result. */
struct blocked_recv {
	int fd;
	ssize_t ret;
	int err;
};

static void *recv_blocked(void *arg)
{
	struct blocked_recv *r = arg;
	char buf[16];

	r->ret = recv(r->fd, buf, sizeof(buf), 0);
	r->err = errno;
	return NULL;
}

/* shutdown() from another thread wakes a blocked recv() with EOF. */
TEST_F(closing, shutdown_wakes_blocked_recv)
{
	struct blocked_recv r = { .fd = self->cfd, .ret = -2 };
	char buf[16];
	pthread_t t;

	stream_watchdog(20);
	ASSERT_EQ(0, pthread_create(&t, NULL, recv_blocked, &r));
	usleep(200000);
	EXPECT_EQ(0, shutdown(self->cfd, SHUT_RD));
	pthread_join(t, NULL);
	EXPECT_EQ(0, r.ret);

	/* SHUT_RDWR does the same, and the peer reads EOF. */
	r = (struct blocked_recv){ .fd = self->afd, .ret = -2 };
	ASSERT_EQ(0, pthread_create(&t, NULL, recv_blocked, &r));
	usleep(200000);
	EXPECT_EQ(0, shutdown(self->afd, SHUT_RDWR));
	pthread_join(t, NULL);
	EXPECT_EQ(0, r.ret);
	ASSERT_EQ(POLLIN, stream_wait(self->cfd, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(0, recv(self->cfd, buf, sizeof(buf), 0));
	stream_watchdog(0);
}

/*
 * Once both ends have shut down and read EOF the connection is gone:
 * shutdown() then says ENOTCONN (soon: the last handshake may lag).
 */
TEST_F(closing, shutdown_after_full_close)
{
	char buf[4];
	int i, ret = 0;

	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	ASSERT_EQ(0, shutdown(self->afd, SHUT_WR));
	ASSERT_EQ(POLLIN | POLLHUP, stream_wait(self->cfd, POLLIN, STREAM_WAIT_MS));
	ASSERT_EQ(0, recv(self->cfd, buf, sizeof(buf), 0));
	ASSERT_EQ(POLLIN | POLLHUP, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
	ASSERT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
	for (i = 0; i < 500; i++) {
		ret = shutdown(self->cfd, SHUT_RDWR);
		if (ret)
			break;
		usleep(10000);
	}
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ENOTCONN, errno);
	for (i = 0; i < 500; i++) {
		ret = shutdown(self->afd, SHUT_RDWR);
		if (ret)
			break;
		usleep(10000);
	}
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ENOTCONN, errno);
}

TEST_HARNESS_MAIN
