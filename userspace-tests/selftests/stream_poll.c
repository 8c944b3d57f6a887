// SPDX-License-Identifier: GPL-2.0
/*
 * stream_poll: readiness of stream sockets through poll, select and epoll,
 * over real TCP (the reference) and over SDP on IPv4, IPv6 and v4-mapped
 * IPv6.  Exact poll masks for each state: unconnected, listening (idle and
 * with a connection pending), connected, data queued, send buffer full,
 * the peer's shutdown(SHUT_WR), one's own SHUT_RD and SHUT_RDWR, both
 * directions shut, reset by the peer.  Blocking poll/select/epoll_wait
 * wake on arrival; epoll level- and edge-triggered; select agrees with
 * poll in every state.  SO_RCVLOWAT: what is readable below it, wake-ups
 * when the rest comes or it is lowered, its cap at half the receive buffer.
 * Writable means room: under TCP_CORK, pages handed over (splice()) and
 * bytes copied in turns, to a peer that does not read, each call after
 * POLLOUT takes bytes, until POLLOUT stops; the peer then gets them all.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

/* Everything a stream socket can report that poll() must be asked for. */
#define ALL (POLLIN | POLLPRI | POLLOUT | POLLRDHUP)

/* The poll mask of @fd right now. */
static int mask(int fd)
{
	return stream_wait(fd, ALL, 0);
}

/* Waits, at most STREAM_WAIT_MS, until @fd reports all of @bits. */
static int wait_bits(int fd, int bits)
{
	return stream_wait_bits(fd, bits, STREAM_WAIT_MS);
}

/* One event from epoll @ep within @ms: its mask, 0 if none, -1 on error. */
static int epoll_one(int ep, int ms)
{
	struct epoll_event ev[2];
	int n = epoll_wait(ep, ev, 2, ms);

	if (n < 0 || n > 1)
		return -1;
	return n ? (int)ev[0].events : 0;
}

static int epoll_for(int fd, unsigned int events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		close(ep);
		return -1;
	}
	return ep;
}

/* A thread that writes @len bytes of stream 1 from @off to @fd after @delay_us. */
struct late_write {
	int fd;
	unsigned int delay_us;
	size_t len;
	uint64_t off;
	int err;
};

static void *late_write(void *arg)
{
	struct late_write *w = arg;

	usleep(w->delay_us);
	w->err = stream_send_pattern(w->fd, 1, &w->off, w->len, 0);
	return NULL;
}

/* A thread that sets SO_RCVLOWAT of @fd to @val after @delay_us. */
struct late_lowat {
	int fd;
	unsigned int delay_us;
	int val;
	int err;
};

static void *late_lowat(void *arg)
{
	struct late_lowat *l = arg;

	usleep(l->delay_us);
	l->err = sockopt_set_int(l->fd, SOL_SOCKET, SO_RCVLOWAT, l->val);
	return NULL;
}

FIXTURE(ready)
{
	STREAM_CONN_FIELDS;
};

STREAM_VARIANTS(ready);

FIXTURE_SETUP(ready)
{
	STREAM_SETUP(self, variant);
}

FIXTURE_TEARDOWN(ready)
{
	STREAM_TEARDOWN(self);
}

/* A new connection: writable, not readable, at both ends. */
TEST_F(ready, connected_writable_not_readable)
{
	EXPECT_EQ(POLLOUT, mask(self->cfd));
	EXPECT_EQ(POLLOUT, mask(self->afd));
	/* The *NORM bits come with the plain ones when asked for. */
	EXPECT_EQ(POLLOUT | POLLWRNORM,
		  stream_wait(self->cfd, POLLOUT | POLLWRNORM | POLLIN | POLLRDNORM, 0));
}

/* Never connected: TCP reports POLLOUT | POLLHUP, not POLLIN. */
TEST_F(ready, unconnected_socket)
{
	int fd = stream_socket(variant->sdp, variant->family, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(POLLOUT | POLLHUP, mask(fd));
	close(fd);
}

/* A listener is readable exactly while a connection waits in its queue. */
TEST_F(ready, listener_readable_when_pending)
{
	int fd, afd, ep;

	EXPECT_EQ(0, mask(self->lfd));
	ep = epoll_for(self->lfd, EPOLLIN | EPOLLOUT | EPOLLRDHUP);
	ASSERT_LE(0, ep);
	EXPECT_EQ(0, epoll_one(ep, 0));

	fd = stream_socket(variant->sdp, variant->family, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, connect(fd, (struct sockaddr *)&self->b, self->blen));
	EXPECT_EQ(EPOLLIN, epoll_one(ep, STREAM_WAIT_MS));
	EXPECT_EQ(POLLIN, mask(self->lfd));
	EXPECT_EQ(POLLIN | POLLRDNORM, stream_wait(self->lfd, POLLIN | POLLRDNORM, 0));

	afd = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, afd);
	EXPECT_EQ(0, mask(self->lfd));
	EXPECT_EQ(0, epoll_one(ep, 0));
	close(afd);
	close(fd);
	close(ep);
}

/* A poll() asleep on an empty socket wakes when data comes: POLLIN. */
TEST_F(ready, readable_after_peer_write)
{
	struct late_write w = { .fd = self->afd, .delay_us = 200000, .len = 10 };
	char buf[16];
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, late_write, &w));
	EXPECT_EQ(POLLIN, stream_wait(self->cfd, POLLIN | POLLRDHUP | POLLPRI,
				      STREAM_WAIT_MS));
	pthread_join(t, NULL);
	ASSERT_EQ(0, w.err);
	EXPECT_EQ(POLLIN | POLLOUT, mask(self->cfd));
	EXPECT_EQ(POLLIN | POLLRDNORM, stream_wait(self->cfd, POLLIN | POLLRDNORM, 0));
	/* Part read: still readable; all read: not. */
	EXPECT_EQ(4, read(self->cfd, buf, 4));
	EXPECT_EQ(POLLIN | POLLOUT, mask(self->cfd));
	EXPECT_EQ(6, read(self->cfd, buf, sizeof(buf)));
	EXPECT_EQ(POLLOUT, mask(self->cfd));
}

/* The same wake-up through select() and epoll_wait(). */
TEST_F(ready, select_and_epoll_wake_on_arrival)
{
	struct late_write w = { .fd = self->afd, .delay_us = 200000, .len = 10 };
	struct timeval tv = { .tv_sec = STREAM_WAIT_MS / 1000 };
	char buf[32];
	pthread_t t;
	fd_set rd;
	int ep;

	FD_ZERO(&rd);
	FD_SET(self->cfd, &rd);
	ASSERT_EQ(0, pthread_create(&t, NULL, late_write, &w));
	EXPECT_EQ(1, select(self->cfd + 1, &rd, NULL, NULL, &tv));
	EXPECT_TRUE(FD_ISSET(self->cfd, &rd));
	pthread_join(t, NULL);
	ASSERT_EQ(10, read(self->cfd, buf, sizeof(buf)));

	ep = epoll_for(self->cfd, EPOLLIN | EPOLLRDHUP);
	ASSERT_LE(0, ep);
	EXPECT_EQ(0, epoll_one(ep, 0));
	ASSERT_EQ(0, pthread_create(&t, NULL, late_write, &w));
	EXPECT_EQ(EPOLLIN, epoll_one(ep, STREAM_WAIT_MS));
	pthread_join(t, NULL);
	close(ep);
}

/* The peer's SHUT_WR: readable (EOF) and POLLRDHUP, still writable. */
TEST_F(ready, peer_shut_wr_rdhup)
{
	char buf[16];

	ASSERT_EQ(5, write(self->afd, "hello", 5));
	ASSERT_EQ(0, shutdown(self->afd, SHUT_WR));
	EXPECT_EQ(POLLRDHUP, wait_bits(self->cfd, POLLRDHUP));
	EXPECT_EQ(POLLIN | POLLOUT | POLLRDHUP, mask(self->cfd));
	/* The end that shut its sending side stays writable (to fail). */
	EXPECT_EQ(POLLOUT, mask(self->afd));
	EXPECT_EQ(5, read(self->cfd, buf, sizeof(buf)));
	EXPECT_EQ(POLLIN | POLLOUT | POLLRDHUP, mask(self->cfd));
	EXPECT_EQ(0, read(self->cfd, buf, sizeof(buf)));
	/* EOF stays readable. */
	EXPECT_EQ(POLLIN | POLLOUT | POLLRDHUP, mask(self->cfd));
}

/* Both directions shut: POLLHUP at both ends, and no POLLERR. */
TEST_F(ready, both_shut_hup)
{
	ASSERT_EQ(0, shutdown(self->afd, SHUT_WR));
	EXPECT_EQ(POLLRDHUP, wait_bits(self->cfd, POLLRDHUP));
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	/* Ours had both shut as soon as it sent its FIN. */
	EXPECT_EQ(POLLIN | POLLOUT | POLLRDHUP | POLLHUP, mask(self->cfd));
	EXPECT_EQ(POLLHUP, wait_bits(self->afd, POLLHUP));
	EXPECT_EQ(POLLIN | POLLOUT | POLLRDHUP | POLLHUP, mask(self->afd));
}

/* Our own SHUT_RD reads as EOF here; the peer sees nothing of it. */
TEST_F(ready, own_shut_rd)
{
	char buf[4];

	ASSERT_EQ(0, shutdown(self->cfd, SHUT_RD));
	EXPECT_EQ(POLLIN | POLLOUT | POLLRDHUP, mask(self->cfd));
	EXPECT_EQ(0, read(self->cfd, buf, sizeof(buf)));
	EXPECT_EQ(0, stream_wait(self->afd, POLLIN | POLLRDHUP, 200));
	EXPECT_EQ(POLLOUT, mask(self->afd));
	/* Sending still works. */
	ASSERT_EQ(2, write(self->cfd, "ok", 2));
	ASSERT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(2, read(self->afd, buf, sizeof(buf)));
}

/* Our own SHUT_RDWR: POLLHUP at once here, EOF at the peer. */
TEST_F(ready, own_shut_rdwr)
{
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_RDWR));
	EXPECT_EQ(POLLIN | POLLOUT | POLLRDHUP | POLLHUP, mask(self->cfd));
	EXPECT_EQ(POLLRDHUP, wait_bits(self->afd, POLLRDHUP));
	EXPECT_EQ(POLLIN | POLLOUT | POLLRDHUP, mask(self->afd));
}

/*
 * Reset by the peer (it closed with our data unread): everything, with
 * POLLERR until the error is read; then the rest stays.
 */
TEST_F(ready, reset_by_peer)
{
	char buf[8];

	ASSERT_EQ(1, write(self->afd, "x", 1));
	ASSERT_EQ(0, stream_wait_bytes(self->cfd, 1, STREAM_WAIT_MS));
	stream_close(&self->cfd);
	EXPECT_EQ(POLLERR, wait_bits(self->afd, POLLERR) & POLLERR);
	EXPECT_EQ(POLLIN | POLLOUT | POLLRDHUP | POLLHUP | POLLERR, mask(self->afd));
	EXPECT_EQ(-1, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(POLLIN | POLLOUT | POLLRDHUP | POLLHUP, mask(self->afd));
}

/* A full send buffer is not writable; writable again once drained. */
TEST_F_TIMEOUT(ready, writable_again_after_drain, 120)
{
	uint64_t sent = 0, rcvd = 0;

	ASSERT_EQ(0, stream_fill_sndbuf(self->cfd, 2, &sent, 256ull << 20));
	EXPECT_EQ(0, mask(self->cfd) & POLLOUT);
	EXPECT_EQ(0, stream_wait(self->cfd, POLLOUT, 200));
	EXPECT_EQ(0, stream_recv_pattern(self->afd, 2, &rcvd, sent, 65536));
	EXPECT_EQ(POLLOUT, stream_wait(self->cfd, POLLOUT, STREAM_WAIT_MS));
}

/* The most the cork test sends before the peer's window must have closed. */
#define CORK_MAX	(64u << 20)
#define CORK_SPLICE_BYTES	4096

/*
 * Splices the @inpipe bytes in pipe @p to @fd, each call after POLLOUT;
 * advances *@sent.  0 once all went, 1 if POLLOUT did not come in 500 ms
 * (the window closed), or -errno: EAGAIN is a writable socket that took
 * nothing.
 */
static int splice_when_writable(int p, int fd, size_t inpipe, uint64_t *sent)
{
	ssize_t n;

	while (inpipe) {
		if (stream_wait(fd, POLLOUT, 500) <= 0)
			return 1;
		n = splice(p, NULL, fd, NULL, inpipe, SPLICE_F_NONBLOCK);
		if (n <= 0)
			return n ? -errno : -EIO;
		inpipe -= n;
		*sent += n;
	}
	return 0;
}

/*
 * Writable means room for bytes: held bytes that the next ones cannot
 * join (pages handed over, then a copied byte, then pages again) go as a
 * message of their own first, and must not leave a socket that poll()
 * calls writable with no room for the next (SunRPC's client takes a
 * writable socket that takes nothing for a memory shortage and waits).
 * A peer that does not read closes the window; what was taken arrives.
 */
TEST_F_TIMEOUT(ready, writable_takes_bytes_under_cork, 120)
{
	uint64_t sent = 0, rcvd = 0;
	char *buf = malloc(CORK_SPLICE_BYTES);
	int p[2], ret = 0;
	ssize_t n;
	char c;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, sockopt_set_int(self->cfd, IPPROTO_TCP, TCP_CORK, 1));
	while (!ret && sent < CORK_MAX) {
		stream_fill(buf, CORK_SPLICE_BYTES, 5, sent);
		ASSERT_EQ(CORK_SPLICE_BYTES, write(p[1], buf, CORK_SPLICE_BYTES));
		ret = splice_when_writable(p[0], self->cfd, CORK_SPLICE_BYTES, &sent);
		if (ret)
			break;
		if (stream_wait(self->cfd, POLLOUT, 500) <= 0) {
			ret = 1;
			break;
		}
		stream_fill(&c, 1, 5, sent);
		n = send(self->cfd, &c, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n != 1) {
			ret = n ? -errno : -EIO;
			break;
		}
		sent++;
	}
	EXPECT_EQ(1, ret) TH_LOG("after %llu bytes: %s", (unsigned long long)sent,
				 ret ? strerror(-ret) : "the window never closed");
	ASSERT_EQ(0, sockopt_set_int(self->cfd, IPPROTO_TCP, TCP_CORK, 0));
	EXPECT_EQ(0, stream_recv_pattern(self->afd, 5, &rcvd, sent, 65536));
	EXPECT_EQ(sent, rcvd);
	close(p[0]);
	close(p[1]);
	free(buf);
}

/* Level-triggered epoll: reported on every call until read. */
TEST_F(ready, epoll_level_triggered)
{
	char buf[16];
	int ep;

	ep = epoll_for(self->cfd, EPOLLIN | EPOLLRDHUP);
	ASSERT_LE(0, ep);
	EXPECT_EQ(0, epoll_one(ep, 0));
	ASSERT_EQ(3, write(self->afd, "abc", 3));
	EXPECT_EQ(EPOLLIN, epoll_one(ep, STREAM_WAIT_MS));
	EXPECT_EQ(EPOLLIN, epoll_one(ep, 0));
	EXPECT_EQ(EPOLLIN, epoll_one(ep, 0));
	EXPECT_EQ(3, read(self->cfd, buf, sizeof(buf)));
	EXPECT_EQ(0, epoll_one(ep, 0));
	/* The peer's SHUT_WR: EPOLLIN | EPOLLRDHUP, and it stays. */
	ASSERT_EQ(0, shutdown(self->afd, SHUT_WR));
	EXPECT_EQ(EPOLLIN | EPOLLRDHUP, epoll_one(ep, STREAM_WAIT_MS));
	EXPECT_EQ(EPOLLIN | EPOLLRDHUP, epoll_one(ep, 0));
	/* Then our own: EPOLLHUP too. */
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	EXPECT_EQ(EPOLLIN | EPOLLRDHUP | EPOLLHUP, epoll_one(ep, 0));
	close(ep);
}

/*
 * Edge-triggered epoll: one event per arrival, however many writes it
 * brought, and none again until more data comes, read or not.
 */
TEST_F(ready, epoll_edge_triggered)
{
	char buf[64];
	int ep;

	ep = epoll_for(self->cfd, EPOLLIN | EPOLLRDHUP | EPOLLET);
	ASSERT_LE(0, ep);
	EXPECT_EQ(0, epoll_one(ep, 0));

	ASSERT_EQ(3, write(self->afd, "abc", 3));
	EXPECT_EQ(EPOLLIN, epoll_one(ep, STREAM_WAIT_MS));
	EXPECT_EQ(0, epoll_one(ep, 200));

	/* Three writes, all arrived before we look: one event. */
	ASSERT_EQ(3, write(self->afd, "def", 3));
	ASSERT_EQ(3, write(self->afd, "ghi", 3));
	ASSERT_EQ(3, write(self->afd, "jkl", 3));
	ASSERT_EQ(0, stream_wait_bytes(self->cfd, 12, STREAM_WAIT_MS));
	EXPECT_EQ(EPOLLIN, epoll_one(ep, STREAM_WAIT_MS));
	EXPECT_EQ(0, epoll_one(ep, 200));

	/* Reading part of it does not re-arm; new data does. */
	EXPECT_EQ(5, read(self->cfd, buf, 5));
	EXPECT_EQ(0, epoll_one(ep, 200));
	ASSERT_EQ(3, write(self->afd, "mno", 3));
	EXPECT_EQ(EPOLLIN, epoll_one(ep, STREAM_WAIT_MS));
	EXPECT_EQ(0, epoll_one(ep, 200));
	ASSERT_EQ(0, stream_wait_bytes(self->cfd, 10, STREAM_WAIT_MS));
	EXPECT_EQ(10, read(self->cfd, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "fghijklmno", 10));

	/* The peer's SHUT_WR is an edge too. */
	ASSERT_EQ(0, shutdown(self->afd, SHUT_WR));
	EXPECT_EQ(EPOLLIN | EPOLLRDHUP, epoll_one(ep, STREAM_WAIT_MS));
	EXPECT_EQ(0, epoll_one(ep, 200));
	close(ep);
}

/* Edge-triggered EPOLLOUT: once when added, then with the next arrival. */
TEST_F(ready, epoll_edge_triggered_out)
{
	int ep;

	ep = epoll_for(self->cfd, EPOLLIN | EPOLLOUT | EPOLLET);
	ASSERT_LE(0, ep);
	EXPECT_EQ(EPOLLOUT, epoll_one(ep, 0));
	EXPECT_EQ(0, epoll_one(ep, 200));
	ASSERT_EQ(1, write(self->afd, "x", 1));
	EXPECT_EQ(EPOLLIN | EPOLLOUT, epoll_one(ep, STREAM_WAIT_MS));
	EXPECT_EQ(0, epoll_one(ep, 200));
	close(ep);
}

/*
 * select() says what poll() says: readable for POLLIN, POLLHUP or POLLERR,
 * writable for POLLOUT or POLLERR, exceptional for POLLPRI.
 */
static void check_select(struct __test_metadata *_metadata, int fd,
			 int want_r, int want_w)
{
	struct timeval tv = { 0 };
	fd_set r, w, e;
	int ev = stream_wait(fd, POLLIN | POLLPRI | POLLOUT, 0);

	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_ZERO(&e);
	FD_SET(fd, &r);
	FD_SET(fd, &w);
	FD_SET(fd, &e);
	ASSERT_LE(0, select(fd + 1, &r, &w, &e, &tv));
	EXPECT_EQ(!!(ev & (POLLIN | POLLHUP | POLLERR)), !!FD_ISSET(fd, &r));
	EXPECT_EQ(!!(ev & (POLLOUT | POLLERR)), !!FD_ISSET(fd, &w));
	EXPECT_EQ(!!(ev & POLLPRI), !!FD_ISSET(fd, &e));
	EXPECT_EQ(want_r, !!FD_ISSET(fd, &r));
	EXPECT_EQ(want_w, !!FD_ISSET(fd, &w));
	EXPECT_EQ(0, !!FD_ISSET(fd, &e));
}

TEST_F(ready, select_agrees_with_poll)
{
	char buf[8];
	int fd = stream_socket(variant->sdp, variant->family, 0);

	ASSERT_LE(0, fd);
	check_select(_metadata, fd, 1, 1);		/* unconnected: HUP */
	close(fd);
	check_select(_metadata, self->lfd, 0, 0);	/* idle listener */
	check_select(_metadata, self->cfd, 0, 1);	/* connected */
	ASSERT_EQ(1, write(self->afd, "x", 1));
	ASSERT_EQ(POLLIN, stream_wait(self->cfd, POLLIN, STREAM_WAIT_MS));
	check_select(_metadata, self->cfd, 1, 1);	/* data */
	ASSERT_EQ(1, read(self->cfd, buf, sizeof(buf)));
	ASSERT_EQ(0, shutdown(self->afd, SHUT_WR));
	ASSERT_EQ(POLLRDHUP, wait_bits(self->cfd, POLLRDHUP));
	check_select(_metadata, self->cfd, 1, 1);	/* EOF */
	check_select(_metadata, self->afd, 0, 1);	/* shut for writing */
	ASSERT_EQ(1, write(self->cfd, "y", 1));
	stream_close(&self->afd);			/* unread data: reset */
	ASSERT_EQ(POLLERR, wait_bits(self->cfd, POLLERR) & POLLERR);
	check_select(_metadata, self->cfd, 1, 1);	/* reset */
}

/*
 * SO_RCVLOWAT: below it, queued data is not readable to poll and epoll; a
 * poll asleep wakes once the rest comes, or once the mark is lowered.
 */
TEST_F(ready, rcvlowat_gates_readable)
{
	struct late_write w = { .fd = self->afd, .delay_us = 200000, .len = 40,
				.off = 60 };
	struct late_lowat l = { .fd = self->cfd, .delay_us = 200000, .val = 50 };
	uint64_t off = 0, rcvd = 0;
	pthread_t t;
	int ep;

	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_SOCKET, SO_RCVLOWAT, 100));
	EXPECT_EQ(100, sockopt_get_int(self->cfd, SOL_SOCKET, SO_RCVLOWAT));
	ASSERT_EQ(0, stream_send_pattern(self->afd, 1, &off, 60, 0));
	ASSERT_EQ(0, stream_wait_bytes(self->cfd, 60, STREAM_WAIT_MS));
	EXPECT_EQ(POLLOUT, mask(self->cfd));
	ep = epoll_for(self->cfd, EPOLLIN);
	ASSERT_LE(0, ep);
	EXPECT_EQ(0, epoll_one(ep, 0));

	/* Lowered below what is queued: the sleeper wakes. */
	ASSERT_EQ(0, pthread_create(&t, NULL, late_lowat, &l));
	EXPECT_EQ(EPOLLIN, epoll_one(ep, STREAM_WAIT_MS));
	pthread_join(t, NULL);
	ASSERT_EQ(0, l.err);
	EXPECT_EQ(POLLIN | POLLOUT, mask(self->cfd));

	/* Raised again: not readable until the rest comes. */
	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_SOCKET, SO_RCVLOWAT, 100));
	EXPECT_EQ(POLLOUT, mask(self->cfd));
	ASSERT_EQ(0, pthread_create(&t, NULL, late_write, &w));
	EXPECT_EQ(POLLIN, stream_wait(self->cfd, POLLIN, STREAM_WAIT_MS));
	pthread_join(t, NULL);
	ASSERT_EQ(0, w.err);
	EXPECT_EQ(0, stream_recv_pattern(self->cfd, 1, &rcvd, 100, 0));
	EXPECT_EQ(POLLOUT, mask(self->cfd));
	close(ep);
}

/* A blocking recv() that took part of its low-water mark wakes for the rest. */
TEST_F(ready, rcvlowat_blocking_recv)
{
	struct late_write w = { .fd = self->afd, .delay_us = 200000, .len = 40,
				.off = 60 };
	/*
	 * Linux TCP's reader sleeps out this bound: the late bytes alone are
	 * below the mark, and tcp_data_ready() does not count the bytes the
	 * reader took already.  SDP's is woken by them.  5 s, not
	 * STREAM_WAIT_MS, so that the TCP reference costs no more.
	 */
	struct timeval tv = { .tv_sec = 5 };
	uint64_t off = 0;
	char buf[128];
	pthread_t t;

	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_SOCKET, SO_RCVLOWAT, 100));
	ASSERT_EQ(0, stream_send_pattern(self->afd, 1, &off, 60, 0));
	ASSERT_EQ(0, stream_wait_bytes(self->cfd, 60, STREAM_WAIT_MS));
	ASSERT_EQ(0, pthread_create(&t, NULL, late_write, &w));
	EXPECT_EQ(100, recv(self->cfd, buf, sizeof(buf), 0));
	pthread_join(t, NULL);
	ASSERT_EQ(0, w.err);
	EXPECT_EQ(-1, stream_mismatch(buf, 100, 1, 0));
}

/*
 * A low-water mark beyond what the receive buffer holds is cut to half of
 * it, as TCP cuts it; and a reader is never left waiting for bytes the
 * peer cannot send: once the buffer is full, what it holds is readable.
 */
TEST_F_TIMEOUT(ready, rcvlowat_capped_and_full_buffer_readable, 120)
{
	int rcvbuf = 64 << 10, rcvbuf_now;
	uint64_t sent = 0, rcvd = 0;

	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				sizeof(rcvbuf)));
	rcvbuf_now = sockopt_get_int(self->cfd, SOL_SOCKET, SO_RCVBUF);
	ASSERT_LT(0, rcvbuf_now);
	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_SOCKET, SO_RCVLOWAT, INT_MAX));
	EXPECT_EQ(rcvbuf_now / 2, sockopt_get_int(self->cfd, SOL_SOCKET, SO_RCVLOWAT));
	ASSERT_EQ(0, stream_fill_sndbuf(self->afd, 4, &sent, 256ull << 20));
	EXPECT_EQ(POLLIN, stream_wait(self->cfd, POLLIN, STREAM_WAIT_MS));
	/* The tail may be shorter than the mark: drained with it at 1. */
	ASSERT_EQ(0, sockopt_set_int(self->cfd, SOL_SOCKET, SO_RCVLOWAT, 1));
	EXPECT_EQ(0, stream_recv_pattern(self->cfd, 4, &rcvd, sent, 65536));
}

TEST_HARNESS_MAIN
