// SPDX-License-Identifier: GPL-2.0
/*
 * stream_rzcopy: read zero-copy.  A blocking send of at least
 * read_zcopy_thresh bytes (64 KiB here, as zcopy_thresh) to a peer that
 * offers it goes as a SrcAvail: the receiving end
 * RDMA-Reads the sender's pages, straight into a reader's buffer when one
 * waits with room (RxReadZcopyDirectBytes), otherwise into its receive
 * queue.  Over TCP (the reference) and SDP; every byte is checked at the
 * reader against a position-keyed pattern.  The cases: sizes and buffer
 * alignments that cross pages, with large and small reads; a reader that
 * comes late; a reader that never comes (SO_SNDTIMEO and a signal end
 * the send with the bytes read, SrcAvailCancel and SendSM under the
 * hood); the buffer rewritten and unmapped once send() returned; a peer
 * that does not offer it (SDP_READ_ZCOPY 0 at either end: buffered copy);
 * the socket option; a reset in the middle of a read.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

#define KiB 1024ul
#define MiB (1024 * KiB)

/*
 * A reader thread: @len bytes of stream @seed, checked, in @chunk reads;
 * @blocking: each a blocking read() that waits in the socket, as a
 * program's loop does, rather than after poll() said there was data.
 */
struct reader {
	int fd;
	uint64_t seed;
	size_t len, chunk;
	bool blocking;
	int err;
	uint64_t off;
};

static int read_blocking(struct reader *r)
{
	char *buf = malloc(r->chunk);
	size_t left = r->len;
	ssize_t n, bad;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (left && !err) {
		n = read(r->fd, buf, r->chunk < left ? r->chunk : left);
		if (n <= 0) {
			err = n ? -errno : -ENODATA;
			break;
		}
		bad = stream_mismatch(buf, n, r->seed, r->off);
		if (bad >= 0) {
			r->off += bad;
			err = -EBADMSG;
			break;
		}
		r->off += n;
		left -= n;
	}
	free(buf);
	return err;
}

static void *read_stream(void *arg)
{
	struct reader *r = arg;

	if (r->blocking)
		r->err = read_blocking(r);
	else
		r->err = stream_recv_pattern(r->fd, r->seed, &r->off, r->len,
					     r->chunk);
	return NULL;
}

/* A counter of /proc/net/sdpstats, 0 when there is none (TCP). */
static long long stat0(const char *name)
{
	long long v = sdp_stat(name);

	return v < 0 ? 0 : v;
}

FIXTURE(rz)
{
	STREAM_CONN_FIELDS;
	long long thresh, rthresh;	/* as found, to restore; -1 for TCP */
	long long task_cq;		/* the same */
	long long adapt;		/* the same */
};

STREAM_VARIANTS(rz);

static void restore_param(const char *name, long long v)
{
	char text[32];

	if (v < 0)
		return;
	snprintf(text, sizeof(text), "%lld", v);
	sdp_set_param(name, text);
}

FIXTURE_SETUP(rz)
{
	self->thresh = self->rthresh = self->task_cq = self->adapt = -1;
	if (variant->sdp && sdp_param("zcopy_thresh") >= 0) {
		self->thresh = sdp_param("zcopy_thresh");
		self->rthresh = sdp_param("read_zcopy_thresh");
		self->task_cq = sdp_param("zcopy_task_cq");
		self->adapt = sdp_param("zcopy_adapt");
		ASSERT_LE(0, self->rthresh);
		ASSERT_LE(0, self->task_cq);
		ASSERT_LE(0, self->adapt);
		ASSERT_EQ(0, sdp_set_param("zcopy_thresh", "65536"));
		/* Data messages from the pages on every kernel's Soft-RoCE */
		ASSERT_EQ(0, sdp_set_param("zcopy_task_cq", "1"));
		ASSERT_EQ(0, sdp_set_param("zcopy_adapt", "0"));
		ASSERT_EQ(0, sdp_set_param("read_zcopy_thresh", "65536"));
		ASSERT_EQ(1, sdp_param("read_zcopy"));
	}
	STREAM_SETUP(self, variant);
}

FIXTURE_TEARDOWN(rz)
{
	STREAM_TEARDOWN(self);
	restore_param("zcopy_thresh", self->thresh);
	restore_param("read_zcopy_thresh", self->rthresh);
	restore_param("zcopy_task_cq", self->task_cq);
	restore_param("zcopy_adapt", self->adapt);
}

/*
 * Sends @len bytes of stream @seed, from offset @off, out of a buffer
 * @align bytes past a page boundary, in one send(), while a reader thread
 * reads them in @chunk reads; both must see all of it, intact.
 */
static void send_and_check(struct __test_metadata *_metadata, int cfd,
			   int afd, size_t len, size_t align, size_t chunk,
			   uint64_t seed)
{
	struct reader r = { .fd = afd, .seed = seed, .len = len,
			    .chunk = chunk, .blocking = chunk > 64 * KiB };
	size_t map = len + align + 4096;
	char *base, *buf;
	pthread_t t;

	base = mmap(NULL, map, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	buf = base + align;
	stream_fill(buf, len, seed, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, read_stream, &r));
	EXPECT_EQ((ssize_t)len, send(cfd, buf, len, 0));
	pthread_join(t, NULL);
	EXPECT_EQ(0, r.err) TH_LOG("%zu bytes at +%zu in %zu reads: error %d at %llu",
				   len, align, chunk, r.err,
				   (unsigned long long)r.off);
	EXPECT_EQ(len, r.off);
	munmap(base, map);
}

/*
 * Sizes around the threshold, odd ones, and one over a SrcAvail's 1 MiB;
 * buffers that start on a page, one byte past it, and three bytes short
 * of the next; read in reads larger than the send (straight into the
 * reader's pages: blocking reads) and of 1000 bytes (through the receive
 * queue: after poll()).
 */
TEST_F_TIMEOUT(rz, sizes_and_alignments, 120)
{
	static const size_t sizes[] = { 64 * KiB, 64 * KiB + 1, 200003,
					MiB + 4095 };
	static const size_t aligns[] = { 0, 1, 4093 };
	static const size_t chunks[] = { 2 * MiB, 1000 };
	long long rz0 = stat0("RxReadZcopyBytes");
	long long direct0 = stat0("RxReadZcopyDirectBytes");
	long long direct_big = 0, total = 0;
	unsigned int s, a, c, seed = 100;

	for (c = 0; c < 2; c++) {
		long long d0 = stat0("RxReadZcopyDirectBytes");

		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			for (a = 0; a < 3; a++) {
				send_and_check(_metadata, self->cfd, self->afd,
					       sizes[s], aligns[a], chunks[c],
					       seed++);
				total += sizes[s];
			}
		if (c == 0)
			direct_big = stat0("RxReadZcopyDirectBytes") - d0;
	}
	TH_LOG("%lld bytes: %lld read by RDMA, %lld of them into the reader's pages",
	       total, stat0("RxReadZcopyBytes") - rz0,
	       stat0("RxReadZcopyDirectBytes") - direct0);
	/* (a tail shorter than the threshold is copied) */
	if (variant->sdp) {
		EXPECT_LE(total * 99 / 100, stat0("RxReadZcopyBytes") - rz0);
		EXPECT_GE(total, stat0("RxReadZcopyBytes") - rz0);
		EXPECT_LT(0, direct_big);
	}
}

/*
 * Nobody reads yet: the receiving end reads the SrcAvail into its receive
 * queue, and the send returns before the reader comes.
 */
TEST_F_TIMEOUT(rz, reader_comes_late, 60)
{
	const size_t len = 256 * KiB;
	struct reader r = { .fd = self->afd, .seed = 7, .len = len,
			    .chunk = 64 * KiB };
	long long direct0 = stat0("RxReadZcopyDirectBytes");
	char *buf = malloc(len);
	pthread_t t;

	ASSERT_NE(NULL, buf);
	stream_fill(buf, len, 7, 0);
	stream_watchdog(30);
	EXPECT_EQ((ssize_t)len, send(self->cfd, buf, len, 0));
	stream_watchdog(0);
	ASSERT_EQ(0, pthread_create(&t, NULL, read_stream, &r));
	pthread_join(t, NULL);
	EXPECT_EQ(0, r.err);
	EXPECT_EQ(len, r.off);
	if (variant->sdp)
		EXPECT_EQ(direct0, stat0("RxReadZcopyDirectBytes"));
	free(buf);
}

/*
 * A reader that never comes: the accepted end gets receive space for 64
 * KiB, and @buf @len bytes of stream @seed to send.
 */
static void never_read_setup(struct __test_metadata *_metadata,
			     FIXTURE_DATA(rz) * self, char *buf, size_t len,
			     uint64_t seed)
{
	int rcvbuf = 64 * KiB;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, setsockopt(self->afd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				sizeof(rcvbuf)));
	stream_fill(buf, len, seed, 0);
}

/*
 * After a send that ended early with @n bytes (or -1): an SDP send got
 * there by one SrcAvailCancel (@cancels0: the counter before); the reader
 * gets exactly those bytes and nothing more, and the connection goes on:
 * 100 KiB more arrive intact.
 */
static void check_after_short_send(struct __test_metadata *_metadata,
				   FIXTURE_DATA(rz) * self,
				   const FIXTURE_VARIANT(rz) * variant,
				   long long cancels0, char *buf, ssize_t n,
				   size_t len, uint64_t seed)
{
	uint64_t off = 0;
	struct reader r;
	pthread_t t;

	TH_LOG("send returned %zd", n);
	if (variant->sdp)
		EXPECT_EQ(cancels0 + 1, stat0("SrcAvailCancels"));
	ASSERT_LT(0, n) TH_LOG("send: %s", strerror(errno));
	ASSERT_GT((ssize_t)len, n);
	EXPECT_EQ(0, stream_recv_pattern(self->afd, seed, &off, n, 0));
	EXPECT_EQ(0, stream_wait(self->afd, POLLIN, 300));

	r = (struct reader){ .fd = self->afd, .seed = seed, .len = 100 * KiB,
			     .off = n };
	stream_fill(buf, 100 * KiB, seed, n);
	ASSERT_EQ(0, pthread_create(&t, NULL, read_stream, &r));
	EXPECT_EQ((ssize_t)(100 * KiB), send(self->cfd, buf, 100 * KiB, 0));
	pthread_join(t, NULL);
	EXPECT_EQ(0, r.err);
	EXPECT_EQ(n + 100 * KiB, r.off);
}

/*
 * A reader that never comes, receive space for 64 KiB: a 4 MiB send with
 * SO_SNDTIMEO returns the bytes the receiving end took, as TCP's does; an
 * SDP send cancels its SrcAvail to get there.
 */
TEST_F_TIMEOUT(rz, peer_never_reads_sndtimeo, 60)
{
	const size_t len = 4 * MiB;
	struct timeval tv = { .tv_usec = 500000 };
	long long cancels0 = stat0("SrcAvailCancels");
	char *buf = malloc(len);
	ssize_t n;

	never_read_setup(_metadata, self, buf, len, 8);
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_SNDTIMEO, &tv,
				sizeof(tv)));
	stream_watchdog(30);
	n = send(self->cfd, buf, len, 0);
	stream_watchdog(0);
	tv.tv_usec = 0;
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_SNDTIMEO, &tv,
				sizeof(tv)));
	check_after_short_send(_metadata, self, variant, cancels0, buf, n, len,
			       8);
	free(buf);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* The same, ended by a signal: the send returns the bytes taken. */
TEST_F_TIMEOUT(rz, peer_never_reads_signal, 60)
{
	const size_t len = 4 * MiB;
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct itimerval it = { .it_value = { .tv_usec = 400000 } };
	long long cancels0 = stat0("SrcAvailCancels");
	char *buf = malloc(len);
	ssize_t n;

	never_read_setup(_metadata, self, buf, len, 9);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	n = send(self->cfd, buf, len, 0);
	signal(SIGALRM, SIG_DFL);
	check_after_short_send(_metadata, self, variant, cancels0, buf, n, len,
			       9);
	free(buf);
}

/*
 * Once send() returned, the pages are the program's: each 512 KiB send's
 * buffer is overwritten, and every other one unmapped, the moment the send
 * returns; the reader gets the bytes as they were when sent.
 */
TEST_F_TIMEOUT(rz, buffer_changed_or_unmapped_after_send, 60)
{
	const size_t len = 512 * KiB, rounds = 8;
	struct reader r = { .fd = self->afd, .seed = 10, .len = len * rounds,
			    .chunk = 256 * KiB };
	uint64_t off = 0;
	pthread_t t;
	size_t i;

	ASSERT_EQ(0, pthread_create(&t, NULL, read_stream, &r));
	for (i = 0; i < rounds; i++) {
		char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ASSERT_NE(MAP_FAILED, buf);
		stream_fill(buf, len, 10, off);
		EXPECT_EQ((ssize_t)len, send(self->cfd, buf, len, 0));
		if (i % 2)
			munmap(buf, len);
		else
			memset(buf, 0xa5, len);
		off += len;
		if (!(i % 2))
			munmap(buf, len);
	}
	pthread_join(t, NULL);
	EXPECT_EQ(0, r.err);
	EXPECT_EQ(off, r.off);
}

/*
 * A new connection whose listener (@listener) or client end does not
 * offer read zero-copy: large sends go as Data messages, from the
 * sender's pages, and arrive intact.
 */
static void without_read_zcopy(struct __test_metadata *_metadata,
			       const FIXTURE_VARIANT(rz) * variant,
			       bool listener)
{
	long long avails0 = stat0("SrcAvails"), zc0 = stat0("TxZcopyBytes");
	struct sockaddr_storage b;
	int off = 0, lfd, cfd, afd;
	socklen_t blen;

	lfd = stream_socket(1, variant->family, 0);
	cfd = stream_socket(1, variant->family, 0);
	ASSERT_LE(0, lfd);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, setsockopt(listener ? lfd : cfd, SOL_SDP, SDP_READ_ZCOPY,
				&off, sizeof(off)));
	ASSERT_EQ(0, stream_listen(lfd, variant->family, &b, &blen));
	ASSERT_EQ(0, stream_connect_fd(cfd, lfd, &b, blen, &afd));
	send_and_check(_metadata, cfd, afd, MiB, 1, 2 * MiB, 11);
	EXPECT_EQ(avails0, stat0("SrcAvails"));
	EXPECT_LT(zc0 + (long long)(MiB / 2), stat0("TxZcopyBytes"));
	close(afd);
	close(cfd);
	close(lfd);
}

TEST_F_TIMEOUT(rz, listener_without_read_zcopy, 60)
{
	if (!variant->sdp)
		SKIP(return, "SDP_READ_ZCOPY is SDP's");
	without_read_zcopy(_metadata, variant, true);
}

TEST_F_TIMEOUT(rz, client_without_read_zcopy, 60)
{
	if (!variant->sdp)
		SKIP(return, "SDP_READ_ZCOPY is SDP's");
	without_read_zcopy(_metadata, variant, false);
}

/*
 * SDP_READ_ZCOPY: the module's read_zcopy by default, 0 or 1 as set,
 * taken by accepted sockets from their listener; an int or more, or
 * EINVAL.
 */
TEST_F(rz, sockopt)
{
	socklen_t len = sizeof(int);
	int val = -1, zero = 0, five = 5;
	char c = 1;

	if (!variant->sdp)
		SKIP(return, "SDP_READ_ZCOPY is SDP's");
	ASSERT_EQ(0, getsockopt(self->afd, SOL_SDP, SDP_READ_ZCOPY, &val, &len));
	EXPECT_EQ(1, val);
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SDP, SDP_READ_ZCOPY, &zero,
				sizeof(zero)));
	ASSERT_EQ(0, getsockopt(self->cfd, SOL_SDP, SDP_READ_ZCOPY, &val, &len));
	EXPECT_EQ(0, val);
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SDP, SDP_READ_ZCOPY, &five,
				sizeof(five)));
	ASSERT_EQ(0, getsockopt(self->cfd, SOL_SDP, SDP_READ_ZCOPY, &val, &len));
	EXPECT_EQ(1, val);
	EXPECT_EQ(-1, setsockopt(self->cfd, SOL_SDP, SDP_READ_ZCOPY, &c,
				 sizeof(c)));
	EXPECT_EQ(EINVAL, errno);
}

/* A sender thread: one send() of @len bytes of @buf. */
struct sender {
	int fd;
	const char *buf;
	size_t len;
	ssize_t n;
	int err;
};

static void *send_once(void *arg)
{
	struct sender *s = arg;

	s->n = send(s->fd, s->buf, s->len, 0);
	s->err = errno;
	return NULL;
}

/*
 * The reader takes 100 KiB of a 4 MiB send, then resets the connection
 * (SO_LINGER 0): the send ends, with the bytes taken or ECONNRESET or
 * EPIPE, and the bytes the reader got were intact.
 */
TEST_F_TIMEOUT(rz, reset_in_the_middle, 60)
{
	const size_t len = 4 * MiB;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct sender snd = { .fd = self->cfd, .len = len };
	char *buf = malloc(len);
	uint64_t off = 0;
	pthread_t t;

	ASSERT_NE(NULL, buf);
	stream_fill(buf, len, 12, 0);
	snd.buf = buf;
	ASSERT_EQ(0, pthread_create(&t, NULL, send_once, &snd));
	EXPECT_EQ(0, stream_recv_pattern(self->afd, 12, &off, 100 * KiB,
					 32 * KiB));
	ASSERT_EQ(0, setsockopt(self->afd, SOL_SOCKET, SO_LINGER, &lg,
				sizeof(lg)));
	stream_close(&self->afd);
	stream_watchdog(30);
	pthread_join(t, NULL);
	stream_watchdog(0);
	TH_LOG("send returned %zd (%s)", snd.n, snd.n < 0 ? strerror(snd.err) : "");
	if (snd.n < 0) {
		EXPECT_TRUE(snd.err == ECONNRESET || snd.err == EPIPE);
	} else {
		EXPECT_LE((ssize_t)(100 * KiB), snd.n);
	}
	free(buf);
}

/*
 * shutdown(SHUT_WR) while another thread's send waits on its SrcAvail (a
 * reader that never comes, SO_SNDTIMEO 500 ms): the send returns the
 * bytes the receiving end took; the reader gets exactly those, then EOF.
 * Our DisConn waits for the SrcAvail's end: before it, the SrcAvailCancel
 * went behind the DisConn, and the receiving end, taking that for a
 * protocol error, reset the connection.
 */
TEST_F_TIMEOUT(rz, shutdown_beside_a_send, 60)
{
	const size_t len = 4 * MiB;
	struct timeval tv = { .tv_usec = 500000 };
	struct sender snd = { .fd = self->cfd, .len = len };
	long long proto0 = stat0("AbortOnProtocolError");
	char *buf = malloc(len), end;
	uint64_t off = 0;
	pthread_t t;

	never_read_setup(_metadata, self, buf, len, 13);
	snd.buf = buf;
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_SNDTIMEO, &tv,
				sizeof(tv)));
	stream_watchdog(30);
	ASSERT_EQ(0, pthread_create(&t, NULL, send_once, &snd));
	usleep(200000);
	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	pthread_join(t, NULL);
	TH_LOG("send returned %zd (%s)", snd.n, snd.n < 0 ? strerror(snd.err) : "");
	ASSERT_LT(0, snd.n);
	ASSERT_GT((ssize_t)len, snd.n);
	EXPECT_EQ(0, stream_recv_pattern(self->afd, 13, &off, snd.n, 0));
	EXPECT_EQ(0, recv(self->afd, &end, 1, 0)) TH_LOG("after %zd bytes: %s",
							  snd.n, strerror(errno));
	stream_watchdog(0);
	if (variant->sdp)
		EXPECT_EQ(proto0, stat0("AbortOnProtocolError"));
	free(buf);
}

/*
 * Two threads send 1 MiB each at once on one socket, one of 'a's, one of
 * 'b's, behind 64 KiB of 'p's nobody read yet: both sends take all, and
 * the reader gets exactly that much of each and nothing else (a connection has one SrcAvail out at a time: a second
 * sender took over the first one's registration, its pages pinned for
 * good).
 */
TEST_F_TIMEOUT(rz, two_senders_at_once, 60)
{
	const size_t len = 1 * MiB;
	struct sender snd[2] = { { .fd = self->cfd, .len = len },
				 { .fd = self->cfd, .len = len } };
	size_t got = 0, count[256] = { 0 };
	char *buf[2], *rbuf = malloc(64 * KiB);
	pthread_t t[2];
	ssize_t n, i;
	int k;

	ASSERT_NE(NULL, rbuf);
	for (k = 0; k < 2; k++) {
		buf[k] = malloc(len);
		ASSERT_NE(NULL, buf[k]);
		memset(buf[k], 'a' + k, len);
		snd[k].buf = buf[k];
	}
	/* the ring busy first, so that both senders wait for it together */
	memset(rbuf, 'p', 4 * KiB);
	for (k = 0; k < 16; k++)
		ASSERT_EQ((ssize_t)(4 * KiB), send(self->cfd, rbuf, 4 * KiB, 0));
	stream_watchdog(50);
	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, pthread_create(&t[k], NULL, send_once, &snd[k]));
	usleep(200000);
	while (got < 2 * len + 64 * KiB) {
		n = read(self->afd, rbuf, 64 * KiB);
		ASSERT_LT(0, n) TH_LOG("read after %zu bytes: %s", got,
				       n ? strerror(errno) : "EOF");
		for (i = 0; i < n; i++)
			count[(unsigned char)rbuf[i]]++;
		got += n;
	}
	for (k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	stream_watchdog(0);
	for (k = 0; k < 2; k++) {
		EXPECT_EQ((ssize_t)len, snd[k].n) TH_LOG("sender %d: %s", k,
			  snd[k].n < 0 ? strerror(snd[k].err) : "short");
		EXPECT_EQ(len, count['a' + k]);
		free(buf[k]);
	}
	EXPECT_EQ(64 * KiB, count['p']);
	EXPECT_EQ(2 * len + 64 * KiB, count['a'] + count['b'] + count['p']);
	free(rbuf);
}

/*
 * read_zcopy_thresh: a send below it goes as Data messages from the
 * sender's pages, one at it by SrcAvail.
 */
TEST_F_TIMEOUT(rz, read_zcopy_thresh, 60)
{
	long long avails0 = stat0("SrcAvails"), zc0 = stat0("TxZcopyBytes");

	if (!variant->sdp)
		SKIP(return, "read_zcopy_thresh is SDP's");
	ASSERT_EQ(0, sdp_set_param("read_zcopy_thresh", "262144"));
	send_and_check(_metadata, self->cfd, self->afd, 256 * KiB - 1, 0,
		       MiB, 13);
	EXPECT_EQ(avails0, stat0("SrcAvails"));
	EXPECT_LT(zc0, stat0("TxZcopyBytes"));
	send_and_check(_metadata, self->cfd, self->afd, 256 * KiB, 0, MiB, 14);
	EXPECT_EQ(avails0 + 1, stat0("SrcAvails"));
}

TEST_HARNESS_MAIN
