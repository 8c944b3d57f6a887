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

static int sdp_socket(void)
{
	return socket(AF_INET_SDP, SOCK_STREAM, 0);
}

/* build/tools/sdp_pair -q, found from this program's build/selftests/. */
static char sdp_pair_cmd[PATH_MAX + 32];

static void find_sdp_pair(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = 0;
	snprintf(sdp_pair_cmd, sizeof(sdp_pair_cmd),
		 "%s/../tools/sdp_pair -q -s 65536", dirname(self));
}

static int run(const char *cmd)
{
	int ret = system(cmd);

	return WIFEXITED(ret) ? WEXITSTATUS(ret) : -1;
}

/* Brings the bed back: both links up, both rxe devices there and ACTIVE. */
static int restore_bed(void)
{
	int i;

	run("ip link set va up; ip link set vb up; ip neigh flush dev va; "
	    "ip neigh flush dev vb; ip -6 neigh flush dev va; ip -6 neigh flush dev vb");
	run("rdma link show rxeA/1 >/dev/null 2>&1 || rdma link add rxeA type rxe netdev va");
	run("rdma link show rxeB/1 >/dev/null 2>&1 || rdma link add rxeB type rxe netdev vb");
	for (i = 0; i < 300; i++) {
		if (!run("rdma link show rxeA/1 | grep -q 'state ACTIVE' && "
			 "rdma link show rxeB/1 | grep -q 'state ACTIVE'"))
			break;
		usleep(100000);
	}
	/*
	 * Up again once a connection goes through.  Soft-RoCE does not always
	 * come back from a link flap: then the devices are made anew.
	 */
	for (i = 0; i < 6; i++) {
		if (!run(sdp_pair_cmd))
			return 0;
		if (i == 2)
			run("rdma link delete rxeA; rdma link delete rxeB; "
			    "rdma link add rxeA type rxe netdev va; "
			    "rdma link add rxeB type rxe netdev vb; sleep 1");
	}
	return -1;
}

struct sender {
	int fd;
	int err;	/* errno of the call that failed */
	long sent;
};

/* Writes until a write fails; a blocked write is what the fault ends. */
static void *send_until_error(void *arg)
{
	struct sender *s = arg;
	static char buf[65536];

	for (;;) {
		ssize_t n = send(s->fd, buf, sizeof(buf), MSG_NOSIGNAL);

		if (n < 0) {
			s->err = errno;
			return NULL;
		}
		s->sent += n;
	}
}

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

FIXTURE(pair)
{
	int lfd, cfd, afd;
};

FIXTURE_SETUP(pair)
{
	struct sockaddr_storage b;
	socklen_t len;

	find_sdp_pair();
	ASSERT_EQ(0, restore_bed());
	self->lfd = sdp_socket();
	ASSERT_LE(0, self->lfd);
	len = sdp_host_addr(&b, AF_INET, 'B', 0);
	ASSERT_EQ(0, bind(self->lfd, (struct sockaddr *)&b, len));
	ASSERT_EQ(0, listen(self->lfd, 4));
	ASSERT_EQ(0, getsockname(self->lfd, (struct sockaddr *)&b, &len));
	self->cfd = sdp_socket();
	ASSERT_LE(0, self->cfd);
	ASSERT_EQ(0, connect(self->cfd, (struct sockaddr *)&b, len)) {
		TH_LOG("connect: %s", strerror(errno));
	}
	self->afd = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, self->afd);
}

FIXTURE_TEARDOWN(pair)
{
	close(self->cfd);
	if (self->afd >= 0)
		close(self->afd);
	close(self->lfd);
	restore_bed();
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
