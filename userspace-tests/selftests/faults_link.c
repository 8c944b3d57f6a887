// SPDX-License-Identifier: GPL-2.0
/*
 * faults_link: what SDP connections do when the path to the peer fails in
 * the middle of a transfer: a link taken down, an RDMA device deleted
 * (either end's); keepalive telling a peer that went away; and after all
 * that, nothing of ours left on the devices and the module unloads.  The
 * blocked calls of both ends must return an error (the harness's time
 * limit bounds them).  Runs as root in the test bed: it takes links and
 * devices away, and bed/net-setup brings them back (restore_bed()).
 *
 * A send that does not complete times the connection out after the
 * module's tx_stall_timeout_ms; the test lowers it to STALL_MS while it
 * runs, so that a downed link takes seconds, not the default 15.  It
 * lowers read_zcopy_thresh to the transfers' 64 KiB sends too, so that
 * they go by read zero-copy.
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

#define STALL_PARAM	"/sys/module/sdp/parameters/tx_stall_timeout_ms"
#define STALL_MS	"3000"

static char stall_saved[32];
static long long rzc_saved = -1;

static void __attribute__((constructor)) lower_stall_timeout(void)
{
	FILE *f = fopen(STALL_PARAM, "r");

	if (!f)
		return;		/* the SDP tests skip or fail, saying why */
	if (fgets(stall_saved, sizeof(stall_saved), f))
		sdp_set_param("tx_stall_timeout_ms", STALL_MS);
	fclose(f);
	rzc_saved = sdp_param("read_zcopy_thresh");
	sdp_set_param("read_zcopy_thresh", "65536");
}

static void __attribute__((destructor)) restore_stall_timeout(void)
{
	char text[32];

	if (stall_saved[0])
		sdp_set_param("tx_stall_timeout_ms", stall_saved);
	if (rzc_saved >= 0) {
		snprintf(text, sizeof(text), "%lld", rzc_saved);
		sdp_set_param("read_zcopy_thresh", text);
	}
}

struct receiver {
	int fd;
	int err;	/* errno of the call that failed; 0 at EOF */
	long got;
};

/* Reads until a read fails or the stream ends. */
static void *recv_until_error(void *arg)
{
	struct receiver *r = arg;
	static char buf[65536];

	for (;;) {
		ssize_t n = recv(r->fd, buf, sizeof(buf), 0);

		if (n <= 0) {
			r->err = n ? errno : 0;
			return NULL;
		}
		r->got += n;
	}
}

struct acceptor {
	int fd;
	int err;	/* errno of accept(); 0 if it returned a socket */
};

static void *accept_once(void *arg)
{
	struct acceptor *a = arg;
	int fd = accept(a->fd, NULL, NULL);

	a->err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* A listener bound to host @host's address, with an unused port. */
static int listener_on(char host)
{
	struct sockaddr_storage ss;
	socklen_t len = sdp_host_addr(&ss, AF_INET, host, 0);
	int fd = sdp_socket();

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 4)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int keepalive(int fd, int idle, int intvl, int cnt)
{
	int one = 1;

	return setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) ||
	       setsockopt(fd, SOL_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) ||
	       setsockopt(fd, SOL_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) ||
	       setsockopt(fd, SOL_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

/*
 * Host B's link goes down under a transfer from A to B: A's sends stop
 * completing and the connection times out (tx_stall_timeout_ms).  B only
 * reads: like a TCP receiver, it learns of the dead path by keepalive, or
 * sooner: Soft-RoCE fails a send (a credit update, a probe) at once with
 * "local QP operation error" when the link's routes are gone, which
 * aborts the connection as a reset.  On 7.x Soft-RoCE does the same to
 * A's sends (the veth pair loses its carrier at both ends), and moves the
 * QP to the error state, flushing them: a reset at A too.
 */
TEST_F_TIMEOUT(pair, link_down, 120)
{
	struct sender s = { .fd = self->cfd };
	struct receiver r = { .fd = self->afd };
	pthread_t ts, tr;

	ASSERT_EQ(0, keepalive(self->afd, 1, 1, 2));
	ASSERT_EQ(0, pthread_create(&ts, NULL, send_until_error, &s));
	ASSERT_EQ(0, pthread_create(&tr, NULL, recv_until_error, &r));
	sleep(1);
	rxe_wedged = true;
	ASSERT_EQ(0, run("ip link set vb down"));
	ASSERT_EQ(0, pthread_join(ts, NULL));
	ASSERT_EQ(0, pthread_join(tr, NULL));
	EXPECT_TRUE(s.err == ETIMEDOUT || s.err == ECONNRESET) {
		TH_LOG("sender: %s", s.err ? strerror(s.err) : "no error");
	}
	EXPECT_TRUE(r.err == ETIMEDOUT || r.err == ECONNRESET) {
		TH_LOG("receiver: %s", r.err ? strerror(r.err) : "EOF");
	}
	EXPECT_LT(0, r.got);
}

/*
 * An RDMA device is deleted under a transfer from A to B, and under a
 * listener bound to that device's address: `rdma link delete` returns,
 * the connection is reset at both ends, accept() fails, and the bed
 * connects again once the device is back.  The transfer's 64 KiB sends
 * go by read zero-copy (B RDMA-Reads A's pages straight into its
 * reader's), so the device goes in the middle of reads.
 */
static void device_deleted(struct __test_metadata *_metadata,
			   FIXTURE_DATA(pair) *self, char host)
{
	struct sender s = { .fd = self->cfd };
	struct receiver r = { .fd = self->afd };
	struct acceptor a = { .fd = -1 };
	long long rz0 = sdp_stat("RxReadZcopyDirectBytes");
	char cmd[64];
	pthread_t ts, tr, ta;
	int lfd = -1;

	/* B's listener is the fixture's; A gets one. */
	if (host == 'A') {
		lfd = listener_on('A');
		ASSERT_LE(0, lfd);
	}
	a.fd = lfd >= 0 ? lfd : self->lfd;
	ASSERT_EQ(0, pthread_create(&ts, NULL, send_until_error, &s));
	ASSERT_EQ(0, pthread_create(&tr, NULL, recv_until_error, &r));
	ASSERT_EQ(0, pthread_create(&ta, NULL, accept_once, &a));
	sleep(1);
	EXPECT_LT(rz0, sdp_stat("RxReadZcopyDirectBytes"));
	snprintf(cmd, sizeof(cmd), "timeout 60 rdma link delete rxe%c", host);
	ASSERT_EQ(0, run(cmd));

	ASSERT_EQ(0, pthread_join(ts, NULL));
	ASSERT_EQ(0, pthread_join(tr, NULL));
	ASSERT_EQ(0, pthread_join(ta, NULL));
	EXPECT_EQ(ECONNRESET, s.err) {
		TH_LOG("sender: %s", strerror(s.err));
	}
	EXPECT_EQ(ECONNRESET, r.err) {
		TH_LOG("receiver: %s", strerror(r.err));
	}
	EXPECT_LT(0, r.got);
	EXPECT_EQ(ECONNRESET, a.err) {
		TH_LOG("accept: %s", a.err ? strerror(a.err) : "a connection");
	}
	if (lfd >= 0)
		close(lfd);

	ASSERT_EQ(0, restore_bed());
}

TEST_F_TIMEOUT(pair, receiver_device_deleted, 120)
{
	device_deleted(_metadata, self, 'B');
}

TEST_F_TIMEOUT(pair, sender_device_deleted, 120)
{
	device_deleted(_metadata, self, 'A');
}

/* An idle connection whose peer went away: keepalive tells. */
TEST_F_TIMEOUT(pair, keepalive_detects_dead_peer, 120)
{
	struct pollfd pfd = { .fd = self->cfd, .events = POLLIN };
	struct receiver r = { .fd = self->cfd };

	ASSERT_EQ(0, keepalive(self->cfd, 1, 1, 2));
	/* Alive: probes are answered and the connection stays up. */
	sleep(4);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	rxe_wedged = true;
	ASSERT_EQ(0, run("ip link set vb down"));
	recv_until_error(&r);
	EXPECT_EQ(ETIMEDOUT, r.err) {
		TH_LOG("recv: %s", strerror(r.err));
	}
}

/*
 * After the faults above: once the closed connections are gone, and the
 * devices' receive pools after them, no QP, CQ, PD, SRQ or CM id of ours
 * is left on the devices, and the module unloads.
 * It is loaded again (SDP_MODULE_FILE, from vm-run --module, or modprobe)
 * for the tests that follow.
 */
FIXTURE(after_faults) {};
FIXTURE_SETUP(after_faults) {}
FIXTURE_TEARDOWN(after_faults) {}

/* The QPs, CQs, PDs, SRQs and CM ids of ours; fails if there is none. */
#define SDP_OBJECTS_LEFT						\
	"{ rdma resource show qp; rdma resource show cq; "		\
	"rdma resource show pd; rdma resource show srq; "		\
	"rdma resource show cm_id; } 2>/dev/null | grep '\\[sdp\\]'"

/* (A fixture of its own: the harness runs global tests first.) */
TEST_F_TIMEOUT(after_faults, nothing_left_and_module_unloads, 120)
{
	char reload[PATH_MAX + 16];
	const char *ko = getenv("SDP_MODULE_FILE");
	int i;

	/* Orphaned connections close on their own time (close_timeout_ms). */
	for (i = 0; i < 600; i++) {
		if (!run("grep -qx 0 /sys/module/sdp/refcnt"))
			break;
		usleep(100000);
	}
	EXPECT_EQ(0, run("grep -qx 0 /sys/module/sdp/refcnt")) {
		run("cat /sys/module/sdp/refcnt; cat /proc/net/sdp");
	}
	/* The devices' receive pools go 5 s after their last connection. */
	for (i = 0; i < 100; i++) {
		if (run(SDP_OBJECTS_LEFT))
			break;
		usleep(100000);
	}
	EXPECT_NE(0, run(SDP_OBJECTS_LEFT));
	ASSERT_EQ(0, run("rmmod sdp"));
	snprintf(reload, sizeof(reload), ko && *ko ? "insmod %s" : "modprobe sdp",
		 ko);
	ASSERT_EQ(0, run(reload));
}

TEST_HARNESS_MAIN
