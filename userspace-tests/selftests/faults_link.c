// SPDX-License-Identifier: GPL-2.0
/*
 * faults_link: what an SDP connection does when the path to its peer
 * fails in the middle of a transfer: the link taken down, an RDMA device
 * deleted; and keepalive telling a peer that went away.  Runs as root in
 * the test bed: it takes links down and brings them back.
 *
 * Not in `make check` yet: after a link flap Soft-RoCE and the bed's
 * policy routes do not reliably come back (IPv6 routes of a downed link
 * are deleted), so the tests after it fail; run it alone:
 *   userspace-tests/bed/vm-run $PWD/build/selftests/faults_link
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"
#include "sdp_faults.h"

static int recv_errno(int fd)
{
	char buf[65536];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0)
			return errno;
		if (n == 0)
			return 0;
	}
}


/*
 * Host B's link goes down: the sends stop completing, and the connection
 * times out (after the module's tx_stall_timeout_ms).
 */
TEST_F_TIMEOUT(pair, link_down, 180)
{
	struct sender s = { .fd = self->cfd };
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, send_until_error, &s));
	sleep(1);
	ASSERT_EQ(0, run("ip link set vb down"));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(ETIMEDOUT, s.err);
}

/* Host B's RDMA device is deleted: both ends of the connection end. */
TEST_F_TIMEOUT(pair, rdma_device_deleted, 180)
{
	struct sender s = { .fd = self->cfd };
	pthread_t t;
	int err;

	ASSERT_EQ(0, pthread_create(&t, NULL, send_until_error, &s));
	sleep(1);
	ASSERT_EQ(0, run("rdma link delete rxeB"));
	err = recv_errno(self->afd);
	EXPECT_EQ(ECONNRESET, err);
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_TRUE(s.err == ECONNRESET || s.err == ETIMEDOUT) {
		TH_LOG("sender: %s", strerror(s.err));
	}
	/* The bed recovers and connects again. */
	ASSERT_EQ(0, restore_bed());
	EXPECT_EQ(0, run(sdp_pair_cmd));
}

/* An idle connection whose peer went away: keepalive tells. */
TEST_F_TIMEOUT(pair, keepalive_detects_dead_peer, 180)
{
	int one = 1, idle = 1, intvl = 1, cnt = 2;

	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)));
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)));
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)));
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)));
	/* Alive: probes are answered and the connection stays up. */
	sleep(4);
	{
		struct pollfd pfd = { .fd = self->cfd, .events = POLLIN };

		EXPECT_EQ(0, poll(&pfd, 1, 0));
	}
	ASSERT_EQ(0, run("ip link set vb down"));
	EXPECT_EQ(ETIMEDOUT, recv_errno(self->cfd));
}

TEST_HARNESS_MAIN
