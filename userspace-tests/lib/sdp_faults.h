/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture the fault tests share (faults.c, faults_link.c): a listener
 * on host B, a client connected to it from host A and the accepted end;
 * a sender thread that writes until a write fails; and the bed restored
 * after a test took a link or a device away.  Include after
 * kselftest_harness.h and sdp_hosts.h.
 */
#ifndef SDP_FAULTS_H
#define SDP_FAULTS_H

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * build/tools/sdp_pair -q (with a time limit), found from this program's
 * build/selftests/, and bed/net-setup (its output kept in a log), found
 * from SDP_TESTS_DIR (run-tests sets it: the build folder of a root is
 * not always beside userspace-tests/).
 */
static char sdp_pair_cmd[PATH_MAX + 64];
static char net_setup_cmd[2 * PATH_MAX + 64];

static void find_sdp_pair(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *dir;

	self[n > 0 ? n : 0] = 0;
	dir = dirname(self);
	snprintf(sdp_pair_cmd, sizeof(sdp_pair_cmd),
		 "timeout 20 %s/../tools/sdp_pair -q -s 65536", dir);
	snprintf(net_setup_cmd, sizeof(net_setup_cmd),
		 "%s/bed/net-setup >/tmp/sdp-net-setup.log 2>&1 || "
		 "{ cat /tmp/sdp-net-setup.log; false; }",
		 getenv("SDP_TESTS_DIR") ? : "userspace-tests");
}

static int run(const char *cmd)
{
	int ret = system(cmd);

	return WIFEXITED(ret) ? WEXITSTATUS(ret) : -1;
}

/*
 * Set by a test that took a link down under traffic: Soft-RoCE then stops
 * sending on the device's management QP (the RDMA CM's requests go
 * nowhere, rping fails too) until the device is made anew.
 */
static bool rxe_wedged;

/*
 * Brings the bed back after a test took a link down or deleted an rxe
 * device: net-setup again (it is idempotent: links up, the addresses,
 * routes, rules and devices that went missing made anew), then a
 * connection must go through.  The rxe devices are made anew first when
 * rxe_wedged says so, and when no connection goes through (said on
 * stderr, so that the log shows how often).
 */
static int restore_bed(void)
{
	int i;

	if (!sdp_pair_cmd[0])
		find_sdp_pair();
	for (i = 0; i < 3; i++) {
		if (i)
			fprintf(stderr, "restore_bed: no connection after net-setup; "
				"the rxe devices are made anew\n");
		if (i || rxe_wedged)
			run("rdma link delete rxeA; rdma link delete rxeB");
		rxe_wedged = false;
		if (!run(net_setup_cmd) && !run(sdp_pair_cmd))
			return 0;
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

#endif /* SDP_FAULTS_H */
