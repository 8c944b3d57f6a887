// SPDX-License-Identifier: GPL-2.0
/*
 * listen_backlog: a listener with a backlog of BACKLOG that nobody
 * accepts from, and BACKLOG + EXCESS connects from host A at once.
 *
 * TCP, the reference: the accept queue holds BACKLOG + 1; a handshake
 * that finds it full is dropped, not refused, and the client's SYN (or
 * the server's SYN-ACK) is sent again later, so no connect fails and every
 * connection gets accepted in the end, once accept() makes room.
 *
 * SDP keeps the same accept queue, BACKLOG + 1, counting the requests
 * still being set up.  A request that finds it full is refused at once:
 * the connect fails with ECONNREFUSED and ListenDrops in
 * /proc/net/sdpstats counts it.  (Dropping it to be sent again would hold
 * a QP and its rings on the client for the RDMA CM's long REQ timeouts.)
 * Host B holds exactly the listener and BACKLOG + 1 children, however
 * many connects come; after an accept, a connect works again.
 *
 * The memory of children nobody accepts: an SDP child posts only a few
 * receive buffers until accept() takes it, then gets its full rings, as
 * the ring column of /proc/net/sdp shows.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

#define BACKLOG	4
#define EXCESS	4
#define NCONN	(BACKLOG + EXCESS)

FIXTURE(backlog)
{
	int lfd;
	int cfd[NCONN + 1];
	int afd[NCONN + 1];
	socklen_t blen;
	struct sockaddr_storage b;
};

STREAM_VARIANTS(backlog);

FIXTURE_SETUP(backlog)
{
	int i;

	for (i = 0; i <= NCONN; i++)
		self->cfd[i] = self->afd[i] = -1;
	self->lfd = stream_socket(variant->sdp, variant->family, SOCK_NONBLOCK);
	STREAM_SKIP_WITHOUT_SDP(variant->sdp, self->lfd);
	ASSERT_LE(0, self->lfd);
	self->blen = sdp_host_addr(&self->b, variant->family, 'B', 0);
	ASSERT_EQ(0, bind(self->lfd, (struct sockaddr *)&self->b, self->blen));
	ASSERT_EQ(0, listen(self->lfd, BACKLOG));
	ASSERT_EQ(0, getsockname(self->lfd, (struct sockaddr *)&self->b,
				 &self->blen));
}

FIXTURE_TEARDOWN(backlog)
{
	int i;

	for (i = 0; i <= NCONN; i++) {
		stream_close(&self->cfd[i]);
		stream_close(&self->afd[i]);
	}
	stream_close(&self->lfd);
}

/* Lines of /proc/net/sdp whose local port is @port: the sockets there. */
static int sdp_sockets_at(int port)
{
	FILE *f = fopen("/proc/net/sdp", "r");
	char line[256], want[8];
	int n = 0;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), ":%04X ", port);
	if (!fgets(line, sizeof(line), f))	/* the header */
		n = -1;
	while (n >= 0 && fgets(line, sizeof(line), f)) {
		char *local = strchr(line, ':') + 1;	/* after "sl:" */

		local += strspn(local, " ");
		local = strchr(local, ':');
		if (local && !strncmp(local, want, strlen(want)))
			n++;
	}
	fclose(f);
	return n;
}

/*
 * Whether host B has a connection to the listener at @port in SYN_RECV:
 * a request taken and answered, its handshake not yet done.
 */
static int sdp_syn_recv_at(int port)
{
	FILE *f = fopen("/proc/net/sdp", "r");
	char line[256], local[64];
	unsigned int st, lport;
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *colon;

		if (sscanf(line, "%*s %63s %*s %x", local, &st) != 2)
			continue;
		colon = strrchr(local, ':');
		found = colon && sscanf(colon + 1, "%x", &lport) == 1 &&
			lport == (unsigned int)port && st == 3;	/* TCP_SYN_RECV */
	}
	fclose(f);
	return found;
}

/* A non-blocking connect to the listener; 0 or -errno (-EINPROGRESS). */
static int start_connect(FIXTURE_DATA(backlog) *self, int sdp, int family,
			 int i)
{
	self->cfd[i] = stream_socket(sdp, family, SOCK_NONBLOCK);
	if (self->cfd[i] < 0)
		return -errno;
	if (connect(self->cfd[i], (struct sockaddr *)&self->b, self->blen))
		return -errno;
	return 0;
}

/* Waits for the connect on @fd to end: 0 (connected) or the errno. */
static int connect_result(int fd)
{
	socklen_t len = sizeof(int);
	int err, ev;

	ev = stream_wait(fd, POLLOUT, STREAM_WAIT_MS);
	if (ev <= 0)
		return ev ? -ev : ETIMEDOUT;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return errno;
	return err;
}

/*
 * Accepts until *@n reaches @want, into afd[]: a client can see its
 * connect done before the server has the connection queued, so this waits.
 * Returns 0 or -errno.
 */
static int accept_until(FIXTURE_DATA(backlog) *self, int want, int *n)
{
	int fd, ev;

	while (*n < want) {
		ev = stream_wait(self->lfd, POLLIN, STREAM_WAIT_MS);
		if (ev <= 0)
			return ev ? ev : -ETIMEDOUT;
		fd = accept(self->lfd, NULL, NULL);
		if (fd < 0 && errno != EAGAIN)
			return -errno;
		if (fd >= 0)
			self->afd[(*n)++] = fd;
	}
	return 0;
}

/* Nothing more is queued: accept() says EAGAIN. */
static int queue_empty(FIXTURE_DATA(backlog) *self)
{
	int fd = accept(self->lfd, NULL, NULL);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == EAGAIN;
}

TEST_F_TIMEOUT(backlog, excess_connects, 120)
{
	int i, err, port, up = 0, refused = 0, accepted = 0;
	long long drops0 = sdp_stat("ListenDrops");

	port = sdp_addr_port(&self->b);
	if (variant->sdp)
		ASSERT_LE(0, drops0);

	/* All of them under way at once. */
	for (i = 0; i < NCONN; i++) {
		err = start_connect(self, variant->sdp, variant->family, i);
		ASSERT_TRUE(err == 0 || err == -EINPROGRESS) TH_LOG("connect %d: %s", i,
								      strerror(-err));
	}
	if (!variant->sdp) {
		/*
		 * TCP drops what does not fit and lets it come again: every
		 * connection gets accepted as accept() makes room, and no
		 * connect fails.
		 */
		ASSERT_EQ(0, accept_until(self, NCONN, &accepted))
			TH_LOG("%d of %d accepted", accepted, NCONN);
		for (i = 0; i < NCONN; i++)
			EXPECT_EQ(0, connect_result(self->cfd[i])) TH_LOG("connect %d", i);
		return;
	}

	for (i = 0; i < NCONN; i++) {
		err = connect_result(self->cfd[i]);
		if (!err)
			up++;
		else if (err == ECONNREFUSED)
			refused++;
		else
			ASSERT_EQ(0, err) TH_LOG("connect %d: %s", i, strerror(err));
	}
	TH_LOG("%d connects: %d connected, %d refused", NCONN, up, refused);

	/* SDP: the queue's worth connected, the rest refused and counted. */
	EXPECT_EQ(BACKLOG + 1, up);
	EXPECT_EQ(NCONN - BACKLOG - 1, refused);
	EXPECT_EQ(drops0 + refused, sdp_stat("ListenDrops"));
	/* On host B: the listener and its BACKLOG + 1 children, no more. */
	EXPECT_EQ(1 + BACKLOG + 1, sdp_sockets_at(port));

	ASSERT_EQ(0, accept_until(self, BACKLOG + 1, &accepted));
	EXPECT_TRUE(queue_empty(self));

	/* Room again: a new connect gets through, and is accepted. */
	stream_close(&self->cfd[NCONN - 1]);
	ASSERT_EQ(-EINPROGRESS, start_connect(self, 1, variant->family, NCONN - 1));
	ASSERT_EQ(0, connect_result(self->cfd[NCONN - 1]));
	ASSERT_EQ(0, accept_until(self, BACKLOG + 2, &accepted));
	EXPECT_TRUE(queue_empty(self));
	EXPECT_EQ(drops0 + refused, sdp_stat("ListenDrops"));
}

/* Refused ones leave nothing behind, and the queue refills to its size. */
TEST_F_TIMEOUT(backlog, refill_after_accept, 120)
{
	int i, round, err, up, accepted = 0;

	if (!variant->sdp)
		SKIP(return, "TCP refuses nothing: excess_connects covers it");
	for (round = 0; round < 2; round++) {
		up = 0;
		for (i = 0; i < NCONN; i++) {
			stream_close(&self->cfd[i]);
			err = start_connect(self, 1, variant->family, i);
			ASSERT_EQ(-EINPROGRESS, err);
		}
		for (i = 0; i < NCONN; i++)
			up += !connect_result(self->cfd[i]);
		EXPECT_EQ(BACKLOG + 1, up) TH_LOG("round %d", round);
		/* Empty the queue for the next round. */
		ASSERT_EQ(0, accept_until(self, BACKLOG + 1, &accepted));
		EXPECT_TRUE(queue_empty(self));
		for (i = 0; i < accepted; i++)
			stream_close(&self->afd[i]);
		accepted = 0;
	}
}

/*
 * A listener shut down (SHUT_RD, as TCP's disconnect) while requests are
 * mid-handshake, and listening again at once: the children of the old
 * listen that end later, in the new accept queue or aborted, must not
 * upset the count of the new one.  Rounds until one shuts the listener
 * down with a child in SYN_RECV; then the listener must still take a
 * connection once its queue is drained.
 */
TEST_F_TIMEOUT(backlog, relisten_mid_handshake, 120)
{
	int i, round, hits = 0, accepted, fd, port = sdp_addr_port(&self->b);

	if (!variant->sdp)
		SKIP(return, "about SDP's own accounting of its queue");
	for (round = 0; round < 20 && hits < 3; round++) {
		for (i = 0; i < NCONN; i++) {
			stream_close(&self->cfd[i]);
			ASSERT_EQ(-EINPROGRESS, start_connect(self, 1, variant->family, i));
		}
		/* Until a child is in SYN_RECV, or every connect has ended. */
		for (;;) {
			if (sdp_syn_recv_at(port)) {
				hits++;
				break;
			}
			for (i = 0; i < NCONN; i++)
				if (stream_wait(self->cfd[i], POLLOUT, 0) == 0)
					break;
			if (i == NCONN)
				break;
		}
		ASSERT_EQ(0, shutdown(self->lfd, SHUT_RD));
		ASSERT_EQ(0, listen(self->lfd, BACKLOG));
		for (i = 0; i < NCONN; i++)
			connect_result(self->cfd[i]);	/* whatever it is */
		while ((fd = accept(self->lfd, NULL, NULL)) >= 0)
			close(fd);
	}
	TH_LOG("%d rounds, %d with a child in SYN_RECV at the shutdown", round, hits);
	if (!hits)
		SKIP(return, "no round caught a handshake under way");

	/* Drained (children of the old listen may still come): room again. */
	for (i = 0; i < NCONN; i++)
		stream_close(&self->cfd[i]);
	for (round = 0; round < 100; round++) {
		while ((fd = accept(self->lfd, NULL, NULL)) >= 0)
			close(fd);
		stream_close(&self->cfd[0]);
		ASSERT_EQ(-EINPROGRESS, start_connect(self, 1, variant->family, 0));
		if (!connect_result(self->cfd[0]))
			break;
		usleep(100000);
	}
	EXPECT_GT(100, round) TH_LOG("the listener refuses every connect");
	accepted = 0;
	ASSERT_EQ(0, accept_until(self, 1, &accepted));
}

/*
 * The queued fixture: an SDP listener on host B that takes QUEUED
 * children and accepts none until the test says so, and QUEUED clients
 * from host A.
 */
#define QUEUED		16
/* Credits (receive buffers) a child that nobody accepted gives, at most. */
#define CHILD_BUFS	8
/* A send slot's headers: the BSDH and room for an extended header. */
#define SLOT_HDR_BYTES	32
/* What each client sends before its child is accepted. */
#define FIRST_BURST	20000

FIXTURE(queued)
{
	int lfd;
	int cfd[QUEUED];
	int afd[QUEUED];
	socklen_t blen;
	struct sockaddr_storage b;
};

FIXTURE_SETUP(queued)
{
	int i;

	for (i = 0; i < QUEUED; i++)
		self->cfd[i] = self->afd[i] = -1;
	self->lfd = stream_socket(1, AF_INET, 0);
	STREAM_SKIP_WITHOUT_SDP(1, self->lfd);
	ASSERT_LE(0, self->lfd);
	ASSERT_EQ(0, stream_listen(self->lfd, AF_INET, &self->b, &self->blen));
	ASSERT_EQ(0, listen(self->lfd, QUEUED));	/* not stream_listen()'s */
}

FIXTURE_TEARDOWN(queued)
{
	int i;

	for (i = 0; i < QUEUED; i++) {
		stream_close(&self->cfd[i]);
		stream_close(&self->afd[i]);
	}
	stream_close(&self->lfd);
}

/*
 * The mem column (bytes of buffers) and the rx_queue of the ESTABLISHED
 * sockets of /proc/net/sdp whose local port (@remote: remote port) is
 * @port, into @mem and @rxq (either may be NULL), at most @max of them.
 * Returns how many there are.
 */
static int socks_at(int port, int remote, long long *mem, long long *rxq,
		    int max)
{
	FILE *f = fopen("/proc/net/sdp", "r");
	char line[512], addr[2][64];
	unsigned int st, p, rq;
	long long r;
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *colon;

		if (sscanf(line, "%*s %63s %63s %x %*x:%x %*s %*s %lld", addr[0],
			   addr[1], &st, &rq, &r) != 5 || st != 1)
			continue;
		colon = strrchr(addr[remote], ':');
		if (!colon || sscanf(colon + 1, "%x", &p) != 1 ||
		    p != (unsigned int)port)
			continue;
		if (n < max && mem)
			mem[n] = r;
		if (n < max && rxq)
			rxq[n] = rq;
		n++;
	}
	fclose(f);
	return n;
}

/* Waits until host B has @n children of the listener at @port up. */
static int children_up(int port, int n)
{
	int i;

	for (i = 0; i < STREAM_WAIT_MS / 10; i++) {
		if (socks_at(port, 0, NULL, NULL, QUEUED) == n)
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/*
 * QUEUED children that nobody accepts, each after a first burst of data
 * from its client: each holds that burst in its receive queue and no
 * buffer of its own (the mem column of /proc/net/sdp: it has no send
 * ring, and the receive buffers are the device's).  Once accepted, each
 * child has its send ring's headers, its client can send far more than
 * the CHILD_BUFS buffers' worth it had credits for before it reads, and
 * every byte arrives, the first burst first; the child's sends arrive
 * too.
 */
TEST_F_TIMEOUT(queued, children_hold_little_until_accepted, 180)
{
	long long mem[QUEUED], rxq[QUEUED], buf = sdp_param("rx_buf_size");
	long long tx_ring = sdp_param("tx_ring_size");
	long long rx_ring = sdp_param("rx_ring_size");
	int i, n, port = sdp_addr_port(&self->b);

	ASSERT_LT(0, buf);
	ASSERT_LT(0, tx_ring);
	ASSERT_LT(0, rx_ring);

	for (i = 0; i < QUEUED; i++) {
		uint64_t off = 0;

		self->cfd[i] = stream_socket(1, AF_INET, 0);
		ASSERT_LE(0, self->cfd[i]);
		ASSERT_EQ(0, connect(self->cfd[i], (struct sockaddr *)&self->b,
				     self->blen)) TH_LOG("connect %d: %s", i,
							 strerror(errno));
		ASSERT_EQ(0, stream_send_pattern(self->cfd[i], 30 + i, &off,
						 FIRST_BURST, 0));
	}
	ASSERT_EQ(0, children_up(port, QUEUED));

	/* Each child that nobody accepted holds its first burst, and no buffer. */
	for (n = 0; n < STREAM_WAIT_MS / 10; n++) {
		ASSERT_EQ(QUEUED, socks_at(port, 0, mem, rxq, QUEUED));
		for (i = 0; i < QUEUED && rxq[i] == FIRST_BURST; i++)
			;
		if (i == QUEUED)
			break;
		usleep(10000);
	}
	for (i = 0; i < QUEUED; i++) {
		EXPECT_EQ(FIRST_BURST, rxq[i]) TH_LOG("child %d", i);
		EXPECT_EQ(0, mem[i]) TH_LOG("child %d", i);
	}

	/* Accepted: a send ring's headers, and data at the full window. */
	for (i = 0; i < QUEUED; i++) {
		self->afd[i] = accept(self->lfd, NULL, NULL);
		ASSERT_LE(0, self->afd[i]);
	}
	ASSERT_EQ(QUEUED, socks_at(port, 0, mem, NULL, QUEUED));
	for (i = 0; i < QUEUED; i++)
		EXPECT_EQ(tx_ring * SLOT_HDR_BYTES, mem[i]) TH_LOG("child %d", i);

	for (i = 0; i < QUEUED; i++) {
		uint64_t off = FIRST_BURST, roff = 0;

		/* The children were queued in the order the clients came. */
		if (i == 0 || i == QUEUED - 1) {
			/* (the limit: far above the window, credits and all) */
			ASSERT_EQ(0, stream_fill_sndbuf(self->cfd[i], 30 + i,
							&off, 4 * rx_ring * buf));
			EXPECT_LT(CHILD_BUFS * buf, (long long)off - FIRST_BURST)
				TH_LOG("client %d", i);
		}
		n = off;
		ASSERT_EQ(0, stream_recv_pattern(self->afd[i], 30 + i, &roff,
						 n, 0)) TH_LOG("child %d", i);
		off = roff = 0;
		ASSERT_EQ(0, stream_send_pattern(self->afd[i], 60 + i, &off,
						 100000, 0));
		ASSERT_EQ(0, stream_recv_pattern(self->cfd[i], 60 + i, &roff,
						 100000, 0));
	}
}

TEST_HARNESS_MAIN
