// SPDX-License-Identifier: GPL-2.0
/*
 * stream_opts: socket options and ioctls of stream sockets, as TCP gives
 * them, over real TCP (the reference) and over SDP on IPv4, IPv6 and
 * v4-mapped IPv6: identity (SO_TYPE, SO_PROTOCOL, SO_DOMAIN,
 * SO_ACCEPTCONN, SO_ERROR), the boolean options, SO_LINGER, buffer sizes,
 * SO_RCVTIMEO and SO_SNDTIMEO at work, TCP_CORK, TCP_NODELAY, TCP_MAXSEG,
 * keepalive tuning, TCP_USER_TIMEOUT, bad lengths and unknown options,
 * SO_REUSEADDR and SO_REUSEPORT at bind time, what an accepted socket
 * inherits from its listener, SIOCINQ/FIONREAD and SIOCOUTQ, and the JDK's
 * conversion of a TCP socket into an SDP one (copy four options, dup2).
 */
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

static int get_linger(int fd, struct linger *l)
{
	socklen_t len = sizeof(*l);

	if (getsockopt(fd, SOL_SOCKET, SO_LINGER, l, &len))
		return -errno;
	return len == sizeof(*l) ? 0 : -EMSGSIZE;
}

static int set_timeo(int fd, int name, long usec)
{
	struct timeval tv = { .tv_sec = usec / 1000000, .tv_usec = usec % 1000000 };

	if (setsockopt(fd, SOL_SOCKET, name, &tv, sizeof(tv)))
		return -errno;
	return 0;
}

/* The timeout in µs, or -errno. */
static long get_timeo(int fd, int name)
{
	struct timeval tv;
	socklen_t len = sizeof(tv);

	if (getsockopt(fd, SOL_SOCKET, name, &tv, &len))
		return -errno;
	return tv.tv_sec * 1000000L + tv.tv_usec;
}

static int ioctl_int(int fd, unsigned long req)
{
	int val = -1;

	if (ioctl(fd, req, &val))
		return -errno;
	return val;
}


/* What SO_DOMAIN says for the variant: the family socket() was given. */
#define DOMAIN(v) ((v)->sdp ? AF_INET_SDP : (v)->family & ~SDP_MAPPED)

FIXTURE(opts)
{
	STREAM_CONN_FIELDS;
	int ufd;	/* a new, unconnected socket */
};

STREAM_VARIANTS(opts);

FIXTURE_SETUP(opts)
{
	STREAM_SETUP(self, variant);
	self->ufd = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, self->ufd);
}

FIXTURE_TEARDOWN(opts)
{
	stream_close(&self->ufd);
	STREAM_TEARDOWN(self);
}

TEST_F(opts, socket_identity)
{
	int fds[] = { self->ufd, self->lfd, self->cfd, self->afd };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		EXPECT_EQ(SOCK_STREAM, sockopt_get_int(fds[i], SOL_SOCKET, SO_TYPE));
		EXPECT_EQ(IPPROTO_TCP, sockopt_get_int(fds[i], SOL_SOCKET, SO_PROTOCOL));
		EXPECT_EQ(DOMAIN(variant), sockopt_get_int(fds[i], SOL_SOCKET, SO_DOMAIN));
		EXPECT_EQ(fds[i] == self->lfd, sockopt_get_int(fds[i], SOL_SOCKET, SO_ACCEPTCONN));
		EXPECT_EQ(0, sockopt_get_int(fds[i], SOL_SOCKET, SO_ERROR));
	}
}

/*
 * An on/off option: off by default, any non-zero value turns it on.
 * 0 if it behaves so on @fd, else the number of the step that did not.
 */
static int check_bool(int fd, int level, int name)
{
	if (sockopt_get_int(fd, level, name) != 0)
		return 1;
	if (sockopt_set_int(fd, level, name, 5) || sockopt_get_int(fd, level, name) != 1)
		return 2;
	if (sockopt_set_int(fd, level, name, 0) || sockopt_get_int(fd, level, name) != 0)
		return 3;
	if (sockopt_set_int(fd, level, name, 1) || sockopt_get_int(fd, level, name) != 1)
		return 4;
	return 0;
}

#define OPT(level, name) { level, name, #name }

TEST_F(opts, boolean_options)
{
	static const struct { int level, name; char str[16]; } o[] = {
		OPT(SOL_SOCKET, SO_REUSEADDR), OPT(SOL_SOCKET, SO_OOBINLINE),
		OPT(SOL_SOCKET, SO_KEEPALIVE), OPT(SOL_TCP, TCP_NODELAY),
		OPT(SOL_TCP, TCP_CORK),
	};
	int fds[] = { self->ufd, self->cfd, self->afd };
	static const char fdname[][12] = { "unconnected", "client", "accepted" };
	unsigned int i, j;

	/* (Braces: EXPECT_EQ() TH_LOG() is two statements.) */
	for (j = 0; j < ARRAY_SIZE(fds); j++) {
		for (i = 0; i < ARRAY_SIZE(o); i++) {
			EXPECT_EQ(0, check_bool(fds[j], o[i].level, o[i].name))
				TH_LOG("%s socket, %s", fdname[j], o[i].str);
		}
	}
}

/* SO_REUSEPORT, on/off as the others, on every kind of socket. */
TEST_F(opts, so_reuseport_boolean)
{
	int fds[] = { self->ufd, self->lfd, self->cfd, self->afd };
	unsigned int i;

	STREAM_SDP_NEEDS_REUSEPORT();
	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		EXPECT_EQ(0, check_bool(fds[i], SOL_SOCKET, SO_REUSEPORT))
			TH_LOG("socket %u", i);
	}
}

/*
 * What every kernel gives, the JDK's conversion included (it copies a TCP
 * socket's SO_REUSEPORT, 0 unless the program set it): reading it, and
 * setting it to 0.  Setting it to 1 either works or, where the core
 * refuses it to non-inet families (Linux 6.1), fails with EOPNOTSUPP and
 * changes nothing.
 */
TEST_F(opts, so_reuseport_off_everywhere)
{
	int fds[] = { self->ufd, self->lfd, self->cfd, self->afd };
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		EXPECT_EQ(0, sockopt_get_int(fds[i], SOL_SOCKET, SO_REUSEPORT));
		EXPECT_EQ(0, sockopt_set_int(fds[i], SOL_SOCKET, SO_REUSEPORT, 0));
		ret = sockopt_set_int(fds[i], SOL_SOCKET, SO_REUSEPORT, 1);
		if (ret) {
			EXPECT_TRUE(variant->sdp);
			EXPECT_EQ(-EOPNOTSUPP, ret);
			EXPECT_EQ(0, sockopt_get_int(fds[i], SOL_SOCKET, SO_REUSEPORT));
		} else {
			EXPECT_EQ(1, sockopt_get_int(fds[i], SOL_SOCKET, SO_REUSEPORT));
		}
	}
}

TEST_F(opts, so_linger)
{
	struct linger l = { -1, -1 };
	socklen_t len = 4;

	ASSERT_EQ(0, get_linger(self->cfd, &l));
	EXPECT_EQ(0, l.l_onoff);
	EXPECT_EQ(0, l.l_linger);
	l = (struct linger){ 1, 5 };
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	l = (struct linger){ -1, -1 };
	ASSERT_EQ(0, get_linger(self->cfd, &l));
	EXPECT_EQ(1, l.l_onoff);
	EXPECT_EQ(5, l.l_linger);
	l = (struct linger){ 1, 0 };
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	l = (struct linger){ -1, -1 };
	ASSERT_EQ(0, get_linger(self->cfd, &l));
	EXPECT_EQ(1, l.l_onoff);
	EXPECT_EQ(0, l.l_linger);
	l = (struct linger){ 0, 0 };
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	ASSERT_EQ(0, get_linger(self->cfd, &l));
	EXPECT_EQ(0, l.l_onoff);
	/* Shorter than struct linger: EINVAL. */
	EXPECT_EQ(-1, setsockopt(self->cfd, SOL_SOCKET, SO_LINGER, &l, len));
	EXPECT_EQ(EINVAL, errno);
	/* And it still works on an unconnected socket. */
	l = (struct linger){ 1, 7 };
	ASSERT_EQ(0, setsockopt(self->ufd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	l = (struct linger){ -1, -1 };
	ASSERT_EQ(0, get_linger(self->ufd, &l));
	EXPECT_EQ(1, l.l_onoff);
	EXPECT_EQ(7, l.l_linger);
}

/*
 * The kernel doubles what is asked for SO_RCVBUF/SO_SNDBUF (bookkeeping
 * overhead); data still flows with small buffers at both ends.  Not much
 * of it: TCP on 7.3 under TCG moves 1 MiB through such buffers in 25 s
 * alone and took over 60 s in the suite.
 */
#define SMALL_BUF_BYTES	(256 << 10)

TEST_F_TIMEOUT(opts, buffer_sizes, 60)
{
	uint64_t off = 0, roff = 0;
	int fds[] = { self->ufd, self->cfd, self->afd };
	unsigned int i;
	pid_t pid;
	int status;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		EXPECT_LT(0, sockopt_get_int(fds[i], SOL_SOCKET, SO_RCVBUF));
		EXPECT_LT(0, sockopt_get_int(fds[i], SOL_SOCKET, SO_SNDBUF));
		EXPECT_EQ(0, sockopt_set_int(fds[i], SOL_SOCKET, SO_RCVBUF, 65536));
		EXPECT_EQ(0, sockopt_set_int(fds[i], SOL_SOCKET, SO_SNDBUF, 65536));
		EXPECT_LE(65536, sockopt_get_int(fds[i], SOL_SOCKET, SO_RCVBUF));
		EXPECT_LE(65536, sockopt_get_int(fds[i], SOL_SOCKET, SO_SNDBUF));
	}
	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_SOCKET, SO_SNDBUF, 4096));
	ASSERT_EQ(0, sockopt_set_int(self->afd, SOL_SOCKET, SO_RCVBUF, 4096));
	EXPECT_LE(4096, sockopt_get_int(self->cfd, SOL_SOCKET, SO_SNDBUF));
	EXPECT_LE(4096, sockopt_get_int(self->afd, SOL_SOCKET, SO_RCVBUF));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		alarm(50);
		_exit(stream_send_pattern(self->cfd, 1, &off, SMALL_BUF_BYTES, 100000) ? 1 : 0);
	}
	EXPECT_EQ(0, stream_recv_pattern(self->afd, 1, &roff, SMALL_BUF_BYTES, 65536));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
}

/*
 * Both ends send small messages and neither reads, each into a receive
 * buffer with room for three SDP buffers: fewer than three stay posted
 * while data waits.  Once the data has stopped, so do the messages: a
 * credit update uses one of the peer's buffers, and an end with so few
 * must not answer the peer's update with its own, or the two would
 * bounce for as long as nobody reads.  Then all of it arrives intact.
 */
TEST_F_TIMEOUT(opts, unread_both_ways_goes_quiet, 60)
{
	enum { SIZE = 100 };
	long long ring = sdp_param("rx_ring_size");
	long long buf = sdp_param("rx_buf_size");
	int fds[2] = { self->cfd, self->afd };
	uint64_t off[2] = { 0, 0 }, roff[2] = { 0, 0 };
	long long before, after;
	char msg[SIZE];
	ssize_t n;
	int i, j;

	if (!variant->sdp)
		SKIP(return, "counts SDP's credit updates");
	ASSERT_LT(0, ring);
	ASSERT_LT(0, buf);
	for (j = 0; j < 2; j++) {
		/* doubled by the kernel: three buffers */
		ASSERT_EQ(0, sockopt_set_int(fds[j], SOL_SOCKET, SO_RCVBUF, buf * 3 / 2));
		ASSERT_EQ(0, sockopt_set_int(fds[j], SOL_TCP, TCP_NODELAY, 1));
	}
	/* More messages than the ring has buffers, each way, as they fit. */
	for (i = 0; i < 2 * ring; i++) {
		for (j = 0; j < 2; j++) {
			stream_fill(msg, SIZE, 40 + j, off[j]);
			n = send(fds[j], msg, SIZE, MSG_DONTWAIT);
			if (n < 0) {
				ASSERT_EQ(EAGAIN, errno);
			} else {
				off[j] += n;
			}
		}
		usleep(2000);
	}
	ASSERT_LT(0, off[0]);
	ASSERT_LT(0, off[1]);
	usleep(500000);		/* what is in flight arrives */
	before = sdp_stat("CreditUpdates");
	usleep(1000000);
	after = sdp_stat("CreditUpdates");
	TH_LOG("credit updates in a second without data: %lld", after - before);
	EXPECT_GE(2, after - before);

	for (j = 0; j < 2; j++)
		EXPECT_EQ(0, stream_recv_pattern(fds[1 - j], 40 + j, &roff[j],
						 off[j], 0)) TH_LOG("to end %d", 1 - j);
}

/* SO_RCVTIMEO: a recv() with nothing to read gives up with EAGAIN. */
TEST_F(opts, so_rcvtimeo)
{
	struct timeval tv;
	char buf[16];
	long t0, dt;

	EXPECT_EQ(0, get_timeo(self->afd, SO_RCVTIMEO));
	ASSERT_EQ(0, set_timeo(self->afd, SO_RCVTIMEO, 300000));
	EXPECT_EQ(300000, get_timeo(self->afd, SO_RCVTIMEO));

	stream_watchdog(20);
	t0 = now_ms();
	EXPECT_EQ(-1, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(EAGAIN, errno);
	dt = now_ms() - t0;
	EXPECT_LE(150, dt);
	/* Queued data is read as usual. */
	ASSERT_EQ(2, write(self->cfd, "ok", 2));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 2, STREAM_WAIT_MS));
	EXPECT_EQ(2, recv(self->afd, buf, sizeof(buf), 0));
	/* MSG_WAITALL gives up the same way, with what it got. */
	ASSERT_EQ(2, write(self->cfd, "ok", 2));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 2, STREAM_WAIT_MS));
	EXPECT_EQ(2, recv(self->afd, buf, sizeof(buf), MSG_WAITALL));
	stream_watchdog(0);

	/* Microseconds out of range: EDOM, and no change. */
	tv = (struct timeval){ .tv_usec = 1000000 };
	EXPECT_EQ(-1, setsockopt(self->afd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	EXPECT_EQ(EDOM, errno);
	EXPECT_EQ(300000, get_timeo(self->afd, SO_RCVTIMEO));
	/* Zero: blocking again. */
	ASSERT_EQ(0, set_timeo(self->afd, SO_RCVTIMEO, 0));
	EXPECT_EQ(0, get_timeo(self->afd, SO_RCVTIMEO));
	EXPECT_EQ(-1, setsockopt(self->afd, SOL_SOCKET, SO_RCVTIMEO, buf, 4));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * SO_SNDTIMEO: sending into a peer that does not read blocks until the
 * timeout, then returns what it took (a partial count), and the next send
 * fails with EAGAIN.
 */
TEST_F_TIMEOUT(opts, so_sndtimeo, 120)
{
	size_t chunk = 1 << 20;
	char *buf = calloc(1, chunk);
	long t0 = 0, dt;
	uint64_t sent = 0;
	ssize_t n = 0;
	int i;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, set_timeo(self->cfd, SO_SNDTIMEO, 300000));
	EXPECT_EQ(300000, get_timeo(self->cfd, SO_SNDTIMEO));
	stream_watchdog(100);
	for (i = 0; i < 512; i++) {
		t0 = now_ms();
		n = send(self->cfd, buf, chunk, MSG_NOSIGNAL);
		if (n < 0)
			break;
		sent += n;
	}
	dt = now_ms() - t0;
	stream_watchdog(0);
	TH_LOG("%llu bytes taken before EAGAIN", (unsigned long long)sent);
	ASSERT_EQ(-1, n);
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_LE(150, dt);
	EXPECT_LT(0, sent);
	free(buf);
}

/*
 * TCP_CORK holds small writes back, written but not sent (SIOCOUTQ and
 * SIOCOUTQNSD count them, the peer has nothing); uncorking sends them,
 * intact.
 */
TEST_F(opts, tcp_cork)
{
	uint64_t off = 0, roff = 0;

	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_TCP, TCP_CORK, 1));
	EXPECT_EQ(1, sockopt_get_int(self->cfd, SOL_TCP, TCP_CORK));
	ASSERT_EQ(0, stream_send_pattern(self->cfd, 2, &off, 10, 0));
	ASSERT_EQ(0, stream_send_pattern(self->cfd, 2, &off, 20, 0));
	ASSERT_EQ(0, stream_send_pattern(self->cfd, 2, &off, 3000, 0));
	EXPECT_EQ(3030, ioctl_int(self->cfd, SIOCOUTQNSD));
	EXPECT_EQ(3030, ioctl_int(self->cfd, SIOCOUTQ));
	EXPECT_EQ(0, ioctl_int(self->afd, SIOCINQ));
	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_TCP, TCP_CORK, 0));
	EXPECT_EQ(0, sockopt_get_int(self->cfd, SOL_TCP, TCP_CORK));
	EXPECT_EQ(0, ioctl_int(self->cfd, SIOCOUTQNSD));
	EXPECT_EQ(0, stream_recv_pattern(self->afd, 2, &roff, 3030, 0));
}

/* A cork holds data 200 ms at most (tcp(7)): it arrives, still corked. */
TEST_F(opts, tcp_cork_ceiling)
{
	uint64_t off = 0, roff = 0;

	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_TCP, TCP_CORK, 1));
	ASSERT_EQ(0, stream_send_pattern(self->cfd, 3, &off, 100, 0));
	EXPECT_EQ(100, ioctl_int(self->cfd, SIOCOUTQNSD));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 100, STREAM_WAIT_MS));
	EXPECT_EQ(0, ioctl_int(self->cfd, SIOCOUTQNSD));
	EXPECT_EQ(1, sockopt_get_int(self->cfd, SOL_TCP, TCP_CORK));
	EXPECT_EQ(0, stream_recv_pattern(self->afd, 3, &roff, 100, 0));
}

/*
 * Many small writes that the peer has not read yet fit in its buffers,
 * as with TCP: they hold receive space for their bytes, not a buffer or
 * a page each.  SO_SNDTIMEO makes a stall fail instead of hang.
 */
TEST_F(opts, small_writes_unread)
{
	enum { WRITES = 400, SIZE = 100 };
	uint64_t off = 0, roff = 0;
	int i;

	ASSERT_EQ(0, set_timeo(self->cfd, SO_SNDTIMEO, 5000000));
	for (i = 0; i < WRITES; i++)
		ASSERT_EQ(0, stream_send_pattern(self->cfd, 4, &off, SIZE, 0));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, WRITES * SIZE, STREAM_WAIT_MS));
	EXPECT_EQ(WRITES * SIZE, ioctl_int(self->afd, SIOCINQ));
	EXPECT_EQ(0, stream_recv_pattern(self->afd, 4, &roff, WRITES * SIZE, 0));
}

/*
 * Corked small writes fill whole Data messages: a few for many writes
 * (counted in /proc/net/sdpstats, where both hosts count: the receiver's
 * Data messages are credit updates), the stream intact.
 */
TEST_F(opts, tcp_cork_fills_messages)
{
	enum { WRITES = 400, SIZE = 100 };
	uint64_t off = 0, roff = 0;
	long long data0, updates0, msgs;
	int i;

	if (!variant->sdp)
		SKIP(return, "counts SDP's messages; TCP's segments are not counted here");
	data0 = sdp_stat("TxMsgData");
	updates0 = sdp_stat("CreditUpdates");
	ASSERT_LE(0, data0);
	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_TCP, TCP_CORK, 1));
	for (i = 0; i < WRITES; i++)
		ASSERT_EQ(0, stream_send_pattern(self->cfd, 4, &off, SIZE, 0));
	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_TCP, TCP_CORK, 0));
	ASSERT_EQ(0, stream_recv_pattern(self->afd, 4, &roff, WRITES * SIZE, 0));
	msgs = sdp_stat("TxMsgData") - data0 -
	       (sdp_stat("CreditUpdates") - updates0);
	TH_LOG("%d corked writes of %d bytes went in %lld Data messages",
	       WRITES, SIZE, msgs);
	/*
	 * 40000 bytes fill a few buffers (three of 16 KiB); the 200 ms
	 * ceiling may add one.
	 */
	EXPECT_LE(1, msgs);
	EXPECT_GE(8, msgs);
}

/* TCP_NODELAY: small request/response exchanges, all intact. */
TEST_F(opts, tcp_nodelay)
{
	char buf[64];
	int i;

	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_TCP, TCP_NODELAY, 1));
	ASSERT_EQ(0, sockopt_set_int(self->afd, SOL_TCP, TCP_NODELAY, 1));
	EXPECT_EQ(1, sockopt_get_int(self->cfd, SOL_TCP, TCP_NODELAY));
	for (i = 0; i < 100; i++) {
		snprintf(buf, sizeof(buf), "ping %d", i);
		ASSERT_EQ((ssize_t)strlen(buf), write(self->cfd, buf, strlen(buf)));
		ASSERT_EQ((ssize_t)strlen(buf), stream_read_full(self->afd, buf, strlen(buf), 0));
		buf[1] = 'o';
		ASSERT_EQ((ssize_t)strlen(buf), write(self->afd, buf, strlen(buf)));
		ASSERT_EQ((ssize_t)strlen(buf), stream_read_full(self->cfd, buf, strlen(buf), 0));
		snprintf(buf + 32, 32, "pong %d", i);
		ASSERT_EQ(0, strcmp(buf, buf + 32));
	}
}

/*
 * TCP_MAXSEG: before connect, get returns what was set; out of
 * [88, 32767] it is EINVAL; after connect the segment size is at most that.
 */
TEST_F(opts, tcp_maxseg)
{
	uint64_t off = 0, roff = 0;
	int afd, mss;

	ASSERT_EQ(0, sockopt_set_int(self->ufd, SOL_TCP, TCP_MAXSEG, 1000));
	EXPECT_EQ(1000, sockopt_get_int(self->ufd, SOL_TCP, TCP_MAXSEG));
	EXPECT_EQ(-EINVAL, sockopt_set_int(self->ufd, SOL_TCP, TCP_MAXSEG, 10));
	EXPECT_EQ(-EINVAL, sockopt_set_int(self->ufd, SOL_TCP, TCP_MAXSEG, 87));
	EXPECT_EQ(-EINVAL, sockopt_set_int(self->ufd, SOL_TCP, TCP_MAXSEG, 32768));
	EXPECT_EQ(-EINVAL, sockopt_set_int(self->ufd, SOL_TCP, TCP_MAXSEG, -1));
	EXPECT_EQ(1000, sockopt_get_int(self->ufd, SOL_TCP, TCP_MAXSEG));

	ASSERT_EQ(0, stream_connect_fd(self->ufd, self->lfd, &self->b, self->blen, &afd));
	mss = sockopt_get_int(self->ufd, SOL_TCP, TCP_MAXSEG);
	EXPECT_LT(0, mss);
	EXPECT_GE(1000, mss);
	ASSERT_EQ(0, stream_send_pattern(self->ufd, 3, &off, 16000, 0));
	EXPECT_EQ(0, stream_recv_pattern(afd, 3, &roff, 16000, 0));
	close(afd);
}

/*
 * A keepalive parameter: the default is @dflt (the sysctl); it takes 1 to
 * @max, and anything else is EINVAL and changes nothing.  0 if it
 * behaves so on @fd, else the number of the step that did not.
 */
static int check_keepalive(int fd, int name, int max, int dflt)
{
	if (sockopt_get_int(fd, SOL_TCP, name) != dflt)
		return 1;
	if (sockopt_set_int(fd, SOL_TCP, name, 3) || sockopt_get_int(fd, SOL_TCP, name) != 3)
		return 2;
	if (sockopt_set_int(fd, SOL_TCP, name, 0) != -EINVAL)
		return 3;
	if (sockopt_set_int(fd, SOL_TCP, name, -1) != -EINVAL)
		return 4;
	if (sockopt_set_int(fd, SOL_TCP, name, max + 1) != -EINVAL)
		return 5;
	if (sockopt_get_int(fd, SOL_TCP, name) != 3)
		return 6;
	if (sockopt_set_int(fd, SOL_TCP, name, max) || sockopt_get_int(fd, SOL_TCP, name) != max)
		return 7;
	if (sockopt_set_int(fd, SOL_TCP, name, 1) || sockopt_get_int(fd, SOL_TCP, name) != 1)
		return 8;
	return 0;
}

/*
 * The kernel's struct tcp_info goes on after glibc's, which stops at
 * tcpi_total_retrans (linux/tcp.h cannot be included beside
 * netinet/tcp.h): the uapi layout, up to tcpi_bytes_sent.
 */
struct tcp_info_ext {
	struct tcp_info base;
	uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
	uint32_t segs_out, segs_in, notsent_bytes, min_rtt, data_segs_in, data_segs_out;
	uint64_t delivery_rate, busy_time, rwnd_limited, sndbuf_limited;
	uint32_t delivered, delivered_ce;
	uint64_t bytes_sent;
};

/*
 * TCP_INFO: the state of a new, a listening and a connected socket; a
 * connected one's segment sizes, its messages and payload bytes each way;
 * a short buffer gets the start of the struct, a long one the whole.
 */
TEST_F(opts, tcp_info)
{
	unsigned char big[1024];
	struct tcp_info_ext info;
	uint64_t off = 0, roff = 0;
	socklen_t len = sizeof(info);
	int afd;

	ASSERT_EQ(0, getsockopt(self->ufd, SOL_TCP, TCP_INFO, &info, &len));
	EXPECT_EQ(TCP_CLOSE, info.base.tcpi_state);
	len = sizeof(info);
	ASSERT_EQ(0, getsockopt(self->lfd, SOL_TCP, TCP_INFO, &info, &len));
	EXPECT_EQ(TCP_LISTEN, info.base.tcpi_state);
	EXPECT_LT(0, info.base.tcpi_sacked);	/* the backlog's limit */

	ASSERT_EQ(0, stream_connect_fd(self->ufd, self->lfd, &self->b, self->blen, &afd));
	ASSERT_EQ(0, stream_send_pattern(self->ufd, 5, &off, 100000, 0));
	ASSERT_EQ(0, stream_recv_pattern(afd, 5, &roff, 100000, 0));
	len = sizeof(info);
	ASSERT_EQ(0, getsockopt(self->ufd, SOL_TCP, TCP_INFO, &info, &len));
	EXPECT_EQ(sizeof(info), len);
	EXPECT_EQ(TCP_ESTABLISHED, info.base.tcpi_state);
	EXPECT_EQ(sockopt_get_int(self->ufd, SOL_TCP, TCP_MAXSEG), (int)info.base.tcpi_snd_mss);
	EXPECT_LT(0, info.base.tcpi_rcv_mss);
	EXPECT_LE(100000, info.bytes_sent);
	EXPECT_LT(0, info.segs_out);
	if (variant->sdp)	/* the RC connection retransmits out of sight */
		EXPECT_EQ(0, info.base.tcpi_total_retrans);
	len = sizeof(info);
	ASSERT_EQ(0, getsockopt(afd, SOL_TCP, TCP_INFO, &info, &len));
	EXPECT_EQ(100000, info.bytes_received);
	EXPECT_LT(0, info.segs_in);

	len = 1;
	ASSERT_EQ(0, getsockopt(afd, SOL_TCP, TCP_INFO, big, &len));
	EXPECT_EQ(1, len);
	EXPECT_EQ(TCP_ESTABLISHED, big[0]);
	len = sizeof(big);
	ASSERT_EQ(0, getsockopt(afd, SOL_TCP, TCP_INFO, big, &len));
	EXPECT_LE(sizeof(info), len);
	EXPECT_GT(sizeof(big), len);
	close(afd);
}

/* Keepalive tuning: idle and interval up to 32767 s, up to 127 probes. */
TEST_F(opts, tcp_keepalive)
{
	static const struct { int name, max; char str[16]; const char *sysctl; } k[] = {
		{ TCP_KEEPIDLE, 32767, "TCP_KEEPIDLE",
		  "/proc/sys/net/ipv4/tcp_keepalive_time" },
		{ TCP_KEEPINTVL, 32767, "TCP_KEEPINTVL",
		  "/proc/sys/net/ipv4/tcp_keepalive_intvl" },
		{ TCP_KEEPCNT, 127, "TCP_KEEPCNT",
		  "/proc/sys/net/ipv4/tcp_keepalive_probes" },
	};
	int fds[] = { self->ufd, self->cfd };
	unsigned int i, j;

	for (j = 0; j < ARRAY_SIZE(fds); j++) {
		EXPECT_EQ(0, sockopt_set_int(fds[j], SOL_SOCKET, SO_KEEPALIVE, 1));
		EXPECT_EQ(1, sockopt_get_int(fds[j], SOL_SOCKET, SO_KEEPALIVE));
		for (i = 0; i < ARRAY_SIZE(k); i++) {
			EXPECT_EQ(0, check_keepalive(fds[j], k[i].name, k[i].max,
						     sdp_sysctl_int(k[i].sysctl)))
				TH_LOG("%s socket, %s", j ? "connected" : "unconnected",
				       k[i].str);
		}
	}
}

TEST_F(opts, tcp_user_timeout)
{
	EXPECT_EQ(0, sockopt_get_int(self->cfd, SOL_TCP, TCP_USER_TIMEOUT));
	EXPECT_EQ(0, sockopt_set_int(self->cfd, SOL_TCP, TCP_USER_TIMEOUT, 5000));
	EXPECT_EQ(5000, sockopt_get_int(self->cfd, SOL_TCP, TCP_USER_TIMEOUT));
	EXPECT_EQ(-EINVAL, sockopt_set_int(self->cfd, SOL_TCP, TCP_USER_TIMEOUT, -1));
	EXPECT_EQ(5000, sockopt_get_int(self->cfd, SOL_TCP, TCP_USER_TIMEOUT));
	EXPECT_EQ(0, sockopt_set_int(self->cfd, SOL_TCP, TCP_USER_TIMEOUT, 0));
	EXPECT_EQ(0, sockopt_get_int(self->cfd, SOL_TCP, TCP_USER_TIMEOUT));
	EXPECT_EQ(0, sockopt_set_int(self->ufd, SOL_TCP, TCP_USER_TIMEOUT, 1));
	EXPECT_EQ(1, sockopt_get_int(self->ufd, SOL_TCP, TCP_USER_TIMEOUT));
}

/* Short or missing values: EINVAL and EFAULT, at either level. */
TEST_F(opts, bad_lengths_and_pointers)
{
	socklen_t len;
	int val = 1;

	EXPECT_EQ(-1, setsockopt(self->cfd, SOL_SOCKET, SO_KEEPALIVE, &val, 2));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->cfd, SOL_TCP, TCP_NODELAY, &val, 2));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->cfd, SOL_SOCKET, SO_KEEPALIVE, NULL, 4));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, setsockopt(self->cfd, SOL_TCP, TCP_NODELAY, NULL, 4));
	EXPECT_EQ(EFAULT, errno);
	len = -1;
	EXPECT_EQ(-1, getsockopt(self->cfd, SOL_SOCKET, SO_KEEPALIVE, &val, &len));
	EXPECT_EQ(EINVAL, errno);
	len = -1;
	EXPECT_EQ(-1, getsockopt(self->cfd, SOL_TCP, TCP_NODELAY, &val, &len));
	EXPECT_EQ(EINVAL, errno);
	/* Too long is fine: the length comes back as sizeof(int). */
	len = 16;
	EXPECT_EQ(0, getsockopt(self->cfd, SOL_TCP, TCP_NODELAY, &val, &len));
	EXPECT_EQ(sizeof(int), len);
}

/* Options nobody knows: ENOPROTOOPT. */
TEST_F(opts, unknown_options)
{
	socklen_t len = sizeof(int);
	int val = 1;

	EXPECT_EQ(-ENOPROTOOPT, sockopt_get_int(self->cfd, SOL_TCP, 9999));
	EXPECT_EQ(-ENOPROTOOPT, sockopt_set_int(self->cfd, SOL_TCP, 9999, 1));
	EXPECT_EQ(-ENOPROTOOPT, sockopt_get_int(self->ufd, SOL_TCP, 9999));
	EXPECT_EQ(-ENOPROTOOPT, sockopt_set_int(self->ufd, SOL_TCP, 9999, 1));
	EXPECT_EQ(-ENOPROTOOPT, sockopt_get_int(self->cfd, SOL_SOCKET, 9999));
	EXPECT_EQ(-ENOPROTOOPT, sockopt_set_int(self->cfd, SOL_SOCKET, 9999, 1));
	/* An unknown level, to set (to get, IPv4 says EOPNOTSUPP). */
	EXPECT_EQ(-1, setsockopt(self->cfd, 9999, 1, &val, len));
	EXPECT_EQ(ENOPROTOOPT, errno);
}

/* SIOCINQ (= FIONREAD) counts the bytes queued to read, exactly. */
TEST_F(opts, siocinq)
{
	uint64_t off = 0, roff = 0;

	EXPECT_EQ(0, ioctl_int(self->afd, SIOCINQ));
	EXPECT_EQ(0, ioctl_int(self->ufd, SIOCINQ));
	EXPECT_EQ(-EINVAL, ioctl_int(self->lfd, SIOCINQ));

	ASSERT_EQ(0, stream_send_pattern(self->cfd, 4, &off, 1234, 0));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 1234, STREAM_WAIT_MS));
	EXPECT_EQ(1234, ioctl_int(self->afd, SIOCINQ));
	EXPECT_EQ(1234, ioctl_int(self->afd, FIONREAD));
	ASSERT_EQ(0, stream_recv_pattern(self->afd, 4, &roff, 234, 0));
	EXPECT_EQ(1000, ioctl_int(self->afd, SIOCINQ));

	/* Three more writes add up; the EOF after them counts nothing. */
	ASSERT_EQ(0, stream_send_pattern(self->cfd, 4, &off, 100, 0));
	ASSERT_EQ(0, stream_send_pattern(self->cfd, 4, &off, 200, 0));
	ASSERT_EQ(0, stream_send_pattern(self->cfd, 4, &off, 300, 0));
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 1600, STREAM_WAIT_MS));
	ASSERT_EQ(POLLRDHUP, stream_wait(self->afd, POLLRDHUP, STREAM_WAIT_MS));
	EXPECT_EQ(1600, ioctl_int(self->afd, FIONREAD));
	ASSERT_EQ(0, stream_recv_pattern(self->afd, 4, &roff, 1600, 0));
	EXPECT_EQ(0, ioctl_int(self->afd, SIOCINQ));
}

/* SIOCOUTQ: 0 when idle, and again once the peer has everything. */
TEST_F(opts, siocoutq)
{
	uint64_t off = 0, roff = 0;
	int i, q = -1;

	EXPECT_EQ(0, ioctl_int(self->cfd, SIOCOUTQ));
	EXPECT_EQ(0, ioctl_int(self->ufd, SIOCOUTQ));
	EXPECT_EQ(-EINVAL, ioctl_int(self->lfd, SIOCOUTQ));

	ASSERT_EQ(0, stream_send_pattern(self->cfd, 5, &off, 16000, 0));
	ASSERT_EQ(0, stream_recv_pattern(self->afd, 5, &roff, 16000, 0));
	for (i = 0; i < 500; i++) {
		q = ioctl_int(self->cfd, SIOCOUTQ);
		if (q <= 0)
			break;
		usleep(10000);
	}
	EXPECT_EQ(0, q);
}

/*
 * An accepted socket starts with its listener's options: keepalive and
 * its tuning, SO_OOBINLINE, SO_LINGER, TCP_NODELAY, TCP_CORK,
 * TCP_USER_TIMEOUT, SO_REUSEADDR, buffer sizes and timeouts.
 */
TEST_F(opts, accepted_inherits_listener_options)
{
	static const struct { int level, name, val; } o[] = {
		{ SOL_SOCKET, SO_KEEPALIVE, 1 }, { SOL_SOCKET, SO_OOBINLINE, 1 },
		{ SOL_SOCKET, SO_REUSEADDR, 1 }, { SOL_TCP, TCP_NODELAY, 1 },
		{ SOL_TCP, TCP_CORK, 1 }, { SOL_TCP, TCP_KEEPIDLE, 77 },
		{ SOL_TCP, TCP_KEEPINTVL, 7 }, { SOL_TCP, TCP_KEEPCNT, 4 },
		{ SOL_TCP, TCP_USER_TIMEOUT, 4321 },
	};
	struct linger l = { 1, 4 };
	struct sockaddr_storage b;
	socklen_t blen;
	int lfd, cfd, afd, rcvbuf, sndbuf;
	unsigned int i;

	lfd = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, lfd);
	for (i = 0; i < ARRAY_SIZE(o); i++)
		ASSERT_EQ(0, sockopt_set_int(lfd, o[i].level, o[i].name, o[i].val));
	ASSERT_EQ(0, setsockopt(lfd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	ASSERT_EQ(0, sockopt_set_int(lfd, SOL_SOCKET, SO_RCVBUF, 65536));
	ASSERT_EQ(0, sockopt_set_int(lfd, SOL_SOCKET, SO_SNDBUF, 65536));
	rcvbuf = sockopt_get_int(lfd, SOL_SOCKET, SO_RCVBUF);
	sndbuf = sockopt_get_int(lfd, SOL_SOCKET, SO_SNDBUF);
	ASSERT_EQ(0, set_timeo(lfd, SO_RCVTIMEO, 400000));
	ASSERT_EQ(0, set_timeo(lfd, SO_SNDTIMEO, 500000));
	ASSERT_EQ(0, stream_listen(lfd, variant->family, &b, &blen));
	ASSERT_EQ(0, stream_connect(variant->sdp, variant->family, lfd, &b, blen,
				    &cfd, &afd));

	for (i = 0; i < ARRAY_SIZE(o); i++) {
		EXPECT_EQ(o[i].val, sockopt_get_int(afd, o[i].level, o[i].name))
			TH_LOG("option %u", i);
	}
	l = (struct linger){ -1, -1 };
	ASSERT_EQ(0, get_linger(afd, &l));
	EXPECT_EQ(1, l.l_onoff);
	EXPECT_EQ(4, l.l_linger);
	EXPECT_EQ(rcvbuf, sockopt_get_int(afd, SOL_SOCKET, SO_RCVBUF));
	EXPECT_EQ(sndbuf, sockopt_get_int(afd, SOL_SOCKET, SO_SNDBUF));
	EXPECT_EQ(400000, get_timeo(afd, SO_RCVTIMEO));
	EXPECT_EQ(500000, get_timeo(afd, SO_SNDTIMEO));
	/* The client was never told any of it. */
	EXPECT_EQ(0, sockopt_get_int(cfd, SOL_TCP, TCP_NODELAY));
	EXPECT_EQ(0, sockopt_get_int(cfd, SOL_SOCKET, SO_KEEPALIVE));
	close(afd);
	close(cfd);
	close(lfd);
}

/*
 * SO_REUSEADDR, set on the old listener and on the new one, lets the new
 * one bind the port of the old at once, even though the server closed
 * its connection first (TCP keeps that in TIME_WAIT); and lets two
 * sockets bind one port, though only one may listen.
 */
TEST_F(opts, so_reuseaddr_bind)
{
	struct sockaddr_storage b;
	int fd, fd2, cfd, afd;
	socklen_t blen;
	char buf[4];

	fd = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sockopt_set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1));
	ASSERT_EQ(0, stream_listen(fd, variant->family, &b, &blen));
	ASSERT_EQ(0, stream_connect(variant->sdp, variant->family, fd, &b, blen,
				    &cfd, &afd));
	/* The server side closes first, then the client, then the listener. */
	close(afd);
	ASSERT_EQ(POLLIN, stream_wait(cfd, POLLIN, STREAM_WAIT_MS));
	ASSERT_EQ(0, recv(cfd, buf, sizeof(buf), 0));
	close(cfd);
	close(fd);

	fd = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sockopt_set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1));
	EXPECT_EQ(0, bind(fd, (struct sockaddr *)&b, blen));
	EXPECT_EQ(0, listen(fd, 4));
	ASSERT_EQ(0, stream_connect(variant->sdp, variant->family, fd, &b, blen,
				    &cfd, &afd));
	close(afd);
	close(cfd);
	close(fd);

	/* Two sockets on one port, neither listening yet. */
	fd = stream_socket(variant->sdp, variant->family, 0);
	fd2 = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, sockopt_set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1));
	ASSERT_EQ(0, sockopt_set_int(fd2, SOL_SOCKET, SO_REUSEADDR, 1));
	blen = sdp_host_addr(&b, variant->family, 'B', 0);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&b, blen));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&b, &blen));
	EXPECT_EQ(0, bind(fd2, (struct sockaddr *)&b, blen));
	EXPECT_EQ(0, listen(fd, 4));
	EXPECT_EQ(-1, listen(fd2, 4));
	EXPECT_EQ(EADDRINUSE, errno);
	close(fd);
	close(fd2);
}

/* SO_REUSEPORT: two listeners on one port, both serving; not a third without. */
TEST_F(opts, so_reuseport_listeners)
{
	struct sockaddr_storage b;
	int l1, l2, l3, cfd, afd, i, got1 = 0, got2 = 0;
	socklen_t blen;

	STREAM_SDP_NEEDS_REUSEPORT();

	l1 = stream_socket(variant->sdp, variant->family, 0);
	l2 = stream_socket(variant->sdp, variant->family, 0);
	l3 = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, l1);
	ASSERT_LE(0, l2);
	ASSERT_LE(0, l3);
	ASSERT_EQ(0, sockopt_set_int(l1, SOL_SOCKET, SO_REUSEPORT, 1));
	ASSERT_EQ(0, sockopt_set_int(l2, SOL_SOCKET, SO_REUSEPORT, 1));
	ASSERT_EQ(0, stream_listen(l1, variant->family, &b, &blen));
	ASSERT_EQ(0, bind(l2, (struct sockaddr *)&b, blen));
	ASSERT_EQ(0, listen(l2, 16));
	EXPECT_EQ(-1, bind(l3, (struct sockaddr *)&b, blen));
	EXPECT_EQ(EADDRINUSE, errno);

	/* Connections go to one or the other; every one is accepted. */
	for (i = 0; i < 16; i++) {
		struct pollfd pfd[2] = { { .fd = l1, .events = POLLIN },
					 { .fd = l2, .events = POLLIN } };

		cfd = stream_socket(variant->sdp, variant->family, 0);
		ASSERT_LE(0, cfd);
		ASSERT_EQ(0, connect(cfd, (struct sockaddr *)&b, blen));
		ASSERT_LT(0, poll(pfd, 2, STREAM_WAIT_MS));
		if (pfd[0].revents & POLLIN) {
			afd = accept(l1, NULL, NULL);
			got1++;
		} else {
			afd = accept(l2, NULL, NULL);
			got2++;
		}
		ASSERT_LE(0, afd);
		close(afd);
		close(cfd);
	}
	TH_LOG("first listener %d, second %d", got1, got2);
	EXPECT_EQ(16, got1 + got2);
	close(l1);
	close(l2);
	close(l3);
}

/* The wildcard of the variant at @port: 0.0.0.0, ::, or ::ffff:0.0.0.0. */
static socklen_t any_addr(struct sockaddr_storage *ss, int family, int port)
{
	socklen_t len = sdp_host_addr(ss, family, 'B', port);
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (family & SDP_MAPPED)
		memset(&sin6->sin6_addr.s6_addr[12], 0, 4);
	else
		memset(&sin6->sin6_addr, 0, sizeof(sin6->sin6_addr));
	return len;
}

/*
 * SO_REUSEADDR lets a socket bind beside sockets that do not listen, not
 * beside a listener, at its address or at the wildcard; once the
 * listener is closed, the port is free.
 */
TEST_F(opts, so_reuseaddr_not_beside_listener)
{
	struct sockaddr_storage b, w;
	socklen_t blen, wlen;
	int fd, fd2;

	fd = stream_socket(variant->sdp, variant->family, 0);
	fd2 = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, sockopt_set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1));
	ASSERT_EQ(0, sockopt_set_int(fd2, SOL_SOCKET, SO_REUSEADDR, 1));
	ASSERT_EQ(0, stream_listen(fd, variant->family, &b, &blen));
	EXPECT_EQ(-1, bind(fd2, (struct sockaddr *)&b, blen));
	EXPECT_EQ(EADDRINUSE, errno);
	wlen = any_addr(&w, variant->family, sdp_addr_port(&b));
	EXPECT_EQ(-1, bind(fd2, (struct sockaddr *)&w, wlen));
	EXPECT_EQ(EADDRINUSE, errno);
	close(fd);
	EXPECT_EQ(0, bind(fd2, (struct sockaddr *)&b, blen));
	EXPECT_EQ(0, listen(fd2, 4));
	close(fd2);
}

/*
 * Without options: two addresses of the host share a port, each with
 * its listener; the wildcard does not join them.  A connection to one
 * address reaches that address's listener.
 */
TEST_F(opts, bind_specific_beside_specific_not_wildcard)
{
	struct sockaddr_storage b, a, w;
	socklen_t blen, alen, wlen;
	int lb, la, lw, cfd, afd;

	lb = stream_socket(variant->sdp, variant->family, 0);
	la = stream_socket(variant->sdp, variant->family, 0);
	lw = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, lb);
	ASSERT_LE(0, la);
	ASSERT_LE(0, lw);
	ASSERT_EQ(0, stream_listen(lb, variant->family, &b, &blen));
	alen = sdp_host_addr(&a, variant->family, 'A', sdp_addr_port(&b));
	ASSERT_EQ(0, bind(la, (struct sockaddr *)&a, alen));
	ASSERT_EQ(0, listen(la, 4));
	wlen = any_addr(&w, variant->family, sdp_addr_port(&b));
	EXPECT_EQ(-1, bind(lw, (struct sockaddr *)&w, wlen));
	EXPECT_EQ(EADDRINUSE, errno);

	ASSERT_EQ(0, stream_connect(variant->sdp, variant->family, lb, &b, blen,
				    &cfd, &afd));
	EXPECT_EQ(0, stream_wait(la, POLLIN, 0));
	close(afd);
	close(cfd);
	close(lw);
	close(la);
	close(lb);
}

/*
 * SO_REUSEPORT listeners: one closes, the other serves every connection
 * from then on; when it closes too, connections are refused.
 */
TEST_F(opts, so_reuseport_listener_closes)
{
	struct sockaddr_storage b;
	int l1, l2, cfd, afd, i;
	socklen_t blen;

	STREAM_SDP_NEEDS_REUSEPORT();

	l1 = stream_socket(variant->sdp, variant->family, 0);
	l2 = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, l1);
	ASSERT_LE(0, l2);
	ASSERT_EQ(0, sockopt_set_int(l1, SOL_SOCKET, SO_REUSEPORT, 1));
	ASSERT_EQ(0, sockopt_set_int(l2, SOL_SOCKET, SO_REUSEPORT, 1));
	ASSERT_EQ(0, stream_listen(l1, variant->family, &b, &blen));
	ASSERT_EQ(0, bind(l2, (struct sockaddr *)&b, blen));
	ASSERT_EQ(0, listen(l2, 16));
	close(l1);

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, stream_connect(variant->sdp, variant->family, l2,
					    &b, blen, &cfd, &afd));
		close(afd);
		close(cfd);
	}
	close(l2);
	cfd = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, cfd);
	EXPECT_EQ(-1, connect(cfd, (struct sockaddr *)&b, blen));
	EXPECT_EQ(ECONNREFUSED, errno);
	close(cfd);
}

/* SO_REUSEPORT shares a port between sockets of one user only. */
TEST_F(opts, so_reuseport_other_user_refused)
{
	struct sockaddr_storage b;
	int l1, status;
	socklen_t blen;
	pid_t pid;

	STREAM_SDP_NEEDS_REUSEPORT();
	if (geteuid())
		SKIP(return, "needs root, to take another user's identity");

	l1 = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, l1);
	ASSERT_EQ(0, sockopt_set_int(l1, SOL_SOCKET, SO_REUSEPORT, 1));
	ASSERT_EQ(0, stream_listen(l1, variant->family, &b, &blen));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd;

		/* Exit codes: 0 refused as TCP refuses it, else the step. */
		if (setegid(65534) || seteuid(65534))
			_exit(1);
		fd = stream_socket(variant->sdp, variant->family, 0);
		if (fd < 0 || sockopt_set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1))
			_exit(2);
		if (!bind(fd, (struct sockaddr *)&b, blen))
			_exit(3);
		_exit(errno == EADDRINUSE ? 0 : 4);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(l1);
}

/*
 * The JDK's conversion (SdpSupport.convert0): a new SDP socket gets
 * SO_REUSEADDR, SO_REUSEPORT, SO_OOBINLINE and SO_LINGER as read from the
 * TCP socket, with the lengths getsockopt() gave, and is dup2()ed over
 * it.  Here the TCP socket is of the variant's address family, the new
 * one of the variant (TCP again for tcp4).
 */
static void jdk_convert(struct __test_metadata *_metadata, int fd, int sdp,
			int family)
{
	static const int names[] = { SO_REUSEADDR, SO_REUSEPORT, SO_OOBINLINE };
	struct linger l;
	socklen_t len;
	unsigned int i;
	int s, val;

	s = stream_socket(sdp, family, 0);
	ASSERT_LE(0, s);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		len = sizeof(val);
		ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, names[i], &val, &len));
		ASSERT_EQ(0, setsockopt(s, SOL_SOCKET, names[i], &val, len));
	}
	len = sizeof(l);
	ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_LINGER, &l, &len));
	ASSERT_EQ(0, setsockopt(s, SOL_SOCKET, SO_LINGER, &l, len));
	ASSERT_EQ(fd, dup2(s, fd));
	ASSERT_EQ(0, close(s));
}

static int tcp_socket(int family)
{
	return socket(family & ~SDP_MAPPED, SOCK_STREAM, 0);
}

static void set_jdk_options(struct __test_metadata *_metadata, int fd)
{
	struct linger l = { 1, 3 };

	ASSERT_EQ(0, sockopt_set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1));
	ASSERT_EQ(0, sockopt_set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1));
	ASSERT_EQ(0, sockopt_set_int(fd, SOL_SOCKET, SO_OOBINLINE, 1));
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
}

static void check_jdk_options(struct __test_metadata *_metadata, int fd,
			      const FIXTURE_VARIANT(opts) *variant)
{
	struct linger l = { -1, -1 };

	EXPECT_EQ(DOMAIN(variant), sockopt_get_int(fd, SOL_SOCKET, SO_DOMAIN));
	EXPECT_EQ(1, sockopt_get_int(fd, SOL_SOCKET, SO_REUSEADDR));
	EXPECT_EQ(1, sockopt_get_int(fd, SOL_SOCKET, SO_REUSEPORT));
	EXPECT_EQ(1, sockopt_get_int(fd, SOL_SOCKET, SO_OOBINLINE));
	ASSERT_EQ(0, get_linger(fd, &l));
	EXPECT_EQ(1, l.l_onoff);
	EXPECT_EQ(3, l.l_linger);
}

TEST_F(opts, jdk_conversion_client)
{
	uint64_t off = 0, roff = 0;
	int fd, afd;

	STREAM_SDP_NEEDS_REUSEPORT();

	fd = tcp_socket(variant->family);
	ASSERT_LE(0, fd);
	set_jdk_options(_metadata, fd);
	jdk_convert(_metadata, fd, variant->sdp, variant->family);
	check_jdk_options(_metadata, fd, variant);

	ASSERT_EQ(0, stream_connect_fd(fd, self->lfd, &self->b, self->blen, &afd));
	ASSERT_EQ(0, stream_send_pattern(fd, 6, &off, 16000, 0));
	EXPECT_EQ(0, stream_recv_pattern(afd, 6, &roff, 16000, 0));
	off = roff = 0;
	ASSERT_EQ(0, stream_send_pattern(afd, 7, &off, 16000, 0));
	EXPECT_EQ(0, stream_recv_pattern(fd, 7, &roff, 16000, 0));
	close(afd);
	close(fd);
}

/* The same for a server socket, converted before bind and listen. */
TEST_F(opts, jdk_conversion_listener)
{
	uint64_t off = 0, roff = 0;
	struct sockaddr_storage b;
	int fd, cfd, afd;
	socklen_t blen;

	STREAM_SDP_NEEDS_REUSEPORT();

	fd = tcp_socket(variant->family);
	ASSERT_LE(0, fd);
	set_jdk_options(_metadata, fd);
	jdk_convert(_metadata, fd, variant->sdp, variant->family);
	check_jdk_options(_metadata, fd, variant);

	ASSERT_EQ(0, stream_listen(fd, variant->family, &b, &blen));
	ASSERT_EQ(0, stream_connect(variant->sdp, variant->family, fd, &b, blen,
				    &cfd, &afd));
	ASSERT_EQ(0, stream_send_pattern(cfd, 8, &off, 16000, 0));
	EXPECT_EQ(0, stream_recv_pattern(afd, 8, &roff, 16000, 0));
	close(afd);
	close(cfd);
	close(fd);
}

TEST_HARNESS_MAIN
