// SPDX-License-Identifier: GPL-2.0
/*
 * stream_events: the completion events a connection takes.  Both ends
 * mark their messages solicited (the module's solicit parameter, read
 * when a socket is made), so a reader that sleeps for the peer's answer
 * is woken by the answer alone, not first by the completion of its own
 * request: a ping-pong takes about one event per message received
 * (CqEvents against RxMsgData of /proc/net/sdpstats), where an event for
 * every completion is close to two.  A connection whose listener or
 * client does not solicit (an older peer) takes an event for every
 * completion and carries the same bytes: a ping-pong, then a stream each
 * way, checked.  Over SDP on IPv4.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

#define MSG_LEN		64
#define ROUNDS		300
#define STREAM_LEN	(1 << 20)

FIXTURE(ev)
{
	long long solicit;	/* as found, to restore */
};

FIXTURE_SETUP(ev)
{
	self->solicit = sdp_param("solicit");
	if (self->solicit < 0)
		SKIP(return, "sdp.ko not loaded");
	ASSERT_EQ(1, self->solicit);	/* the default */
}

FIXTURE_TEARDOWN(ev)
{
	if (self->solicit >= 0)
		sdp_set_param("solicit", self->solicit ? "1" : "0");
}

/* Reads exactly @len bytes with blocking read()s: 0 or -errno (-EIO: EOF). */
static int read_exact(int fd, char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = read(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EIO;
		buf += n;
		len -= n;
	}
	return 0;
}

/* The far end of a ping-pong: each message goes back as it came. */
struct echo {
	int fd, rounds, err;
};

static void *echo(void *arg)
{
	struct echo *e = arg;
	char buf[MSG_LEN];
	int i;

	for (i = 0; i < e->rounds && !e->err; i++) {
		e->err = read_exact(e->fd, buf, sizeof(buf));
		if (!e->err)
			e->err = stream_write_all(e->fd, buf, sizeof(buf), 0);
	}
	return NULL;
}

/*
 * @rounds messages of MSG_LEN bytes from @cfd, each echoed by @afd and
 * read back, with blocking calls (a reader that sleeps).  0, or the
 * round that went wrong, plus one.
 */
static int ping_pong(struct __test_metadata *_metadata, int cfd, int afd,
		     int rounds)
{
	struct echo e = { .fd = afd, .rounds = rounds };
	char out[MSG_LEN], in[MSG_LEN];
	pthread_t t;
	int i, bad = 0;

	stream_watchdog(60);
	if (pthread_create(&t, NULL, echo, &e))
		return -1;
	for (i = 0; i < rounds && !bad; i++) {
		stream_fill(out, sizeof(out), 7, (uint64_t)i * MSG_LEN);
		if (stream_write_all(cfd, out, sizeof(out), 0) ||
		    read_exact(cfd, in, sizeof(in)) ||
		    memcmp(in, out, sizeof(in)))
			bad = i + 1;
	}
	if (bad)
		shutdown(cfd, SHUT_RDWR);	/* the echo thread ends */
	pthread_join(t, NULL);
	stream_watchdog(0);
	EXPECT_EQ(0, e.err);
	return bad;
}

/* A stream of @len bytes from @from to @to, checked, by a second thread. */
struct sink {
	int fd, err;
	uint64_t off;
	size_t len;
};

static void *sink(void *arg)
{
	struct sink *s = arg;

	s->err = stream_recv_pattern(s->fd, 9, &s->off, s->len, 65536);
	return NULL;
}

static void stream_one_way(struct __test_metadata *_metadata, int from,
			   int to)
{
	struct sink s = { .fd = to, .len = STREAM_LEN };
	uint64_t off = 0;
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, sink, &s));
	EXPECT_EQ(0, stream_send_pattern(from, 9, &off, STREAM_LEN, 65536));
	pthread_join(t, NULL);
	EXPECT_EQ(0, s.err);
	EXPECT_EQ((uint64_t)STREAM_LEN, s.off);
}

/*
 * A connection whose listener was made with solicit at @listener and
 * whose client with solicit at @client: *@lfd, *@cfd, *@afd.
 */
static void connect_with(struct __test_metadata *_metadata, int listener,
			 int client, int *lfd, int *cfd, int *afd)
{
	struct sockaddr_storage b;
	socklen_t blen;

	ASSERT_EQ(0, sdp_set_param("solicit", listener ? "1" : "0"));
	*lfd = stream_socket(1, AF_INET, 0);
	ASSERT_LE(0, *lfd);
	ASSERT_EQ(0, sdp_set_param("solicit", client ? "1" : "0"));
	*cfd = stream_socket(1, AF_INET, 0);
	ASSERT_LE(0, *cfd);
	ASSERT_EQ(0, sdp_set_param("solicit", "1"));
	ASSERT_EQ(0, stream_listen(*lfd, AF_INET, &b, &blen));
	ASSERT_EQ(0, stream_connect_fd(*cfd, *lfd, &b, blen, afd));
}

/*
 * Both ends solicit: fewer than 1.5 events per message received, counted
 * at both ends (both are in this namespace); an event for every
 * completion comes to about 1.8 on Soft-RoCE.
 */
TEST_F_TIMEOUT(ev, ping_pong_wakes_for_answers, 90)
{
	long long ev0, rx0, events, msgs;
	int lfd, cfd, afd;

	connect_with(_metadata, 1, 1, &lfd, &cfd, &afd);
	ev0 = sdp_stat("CqEvents");
	rx0 = sdp_stat("RxMsgData");
	ASSERT_LE(0, ev0);
	ASSERT_LE(0, rx0);
	EXPECT_EQ(0, ping_pong(_metadata, cfd, afd, ROUNDS));
	events = sdp_stat("CqEvents") - ev0;
	msgs = sdp_stat("RxMsgData") - rx0;
	TH_LOG("%lld completion events for %lld messages received", events,
	       msgs);
	EXPECT_LE(2 * ROUNDS, msgs);
	EXPECT_GT(msgs * 3, events * 2);
	stream_one_way(_metadata, cfd, afd);
	stream_one_way(_metadata, afd, cfd);
	close(afd);
	close(cfd);
	close(lfd);
}

/*
 * One end does not solicit: every completion raises an event at both
 * ends (2 per message received on 6.1's Soft-RoCE, 1.9 on 7.x), and the
 * bytes are the same.
 */
static void older_peer(struct __test_metadata *_metadata, int listener,
		       int client)
{
	long long ev0, rx0, events, msgs;
	int lfd, cfd, afd;

	connect_with(_metadata, listener, client, &lfd, &cfd, &afd);
	ev0 = sdp_stat("CqEvents");
	rx0 = sdp_stat("RxMsgData");
	EXPECT_EQ(0, ping_pong(_metadata, cfd, afd, ROUNDS));
	events = sdp_stat("CqEvents") - ev0;
	msgs = sdp_stat("RxMsgData") - rx0;
	TH_LOG("%lld completion events for %lld messages received", events,
	       msgs);
	EXPECT_LE(2 * ROUNDS, msgs);
	EXPECT_LT(msgs * 5, events * 4);
	stream_one_way(_metadata, cfd, afd);
	stream_one_way(_metadata, afd, cfd);
	close(afd);
	close(cfd);
	close(lfd);
}

TEST_F_TIMEOUT(ev, listener_does_not_solicit, 90)
{
	older_peer(_metadata, 0, 1);
}

TEST_F_TIMEOUT(ev, client_does_not_solicit, 90)
{
	older_peer(_metadata, 1, 0);
}

TEST_HARNESS_MAIN
