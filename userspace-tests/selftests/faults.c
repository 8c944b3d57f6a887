// SPDX-License-Identifier: GPL-2.0
/*
 * faults: what an SDP connection does when its peer fails in the middle
 * of a transfer: the peer process killed; and TCP_USER_TIMEOUT ending a
 * sender the peer no longer reads from.  The survivor's blocked calls must
 * return an error in bounded time (the harness's time limit bounds them).
 * The faults of the path itself are in faults_link.c.
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

/* The receiving process dies with data unread: its kernel resets. */
TEST_F_TIMEOUT(pair, peer_killed, 120)
{
	struct sender s = { .fd = self->cfd };
	pthread_t t;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char buf[4096];

		for (;;)	/* a slow reader, until killed */
			if (read(self->afd, buf, sizeof(buf)) > 0)
				usleep(10000);
	}
	close(self->afd);
	self->afd = -1;

	ASSERT_EQ(0, pthread_create(&t, NULL, send_until_error, &s));
	sleep(1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(ECONNRESET, s.err);
	EXPECT_LT(0, s.sent);
}

/* The receiver stops reading; TCP_USER_TIMEOUT ends the stalled sender. */
TEST_F_TIMEOUT(pair, user_timeout_bounds_stalled_send, 120)
{
	struct sender s = { .fd = self->cfd };
	unsigned int ms = 2000;
	pthread_t t;

	ASSERT_EQ(0, setsockopt(self->cfd, SOL_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms)));
	ASSERT_EQ(0, pthread_create(&t, NULL, send_until_error, &s));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(ETIMEDOUT, s.err);
	EXPECT_LT(0, s.sent);
}

TEST_HARNESS_MAIN
