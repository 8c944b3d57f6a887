// SPDX-License-Identifier: GPL-2.0
/*
 * stream_zcopy: large blocking sends, which SDP posts from the caller's
 * own pages (sdp.ko's zcopy_thresh, 64 KiB unless set) instead of copying
 * them, over TCP (the reference) and SDP.  Every byte is checked at the
 * reader against a position-keyed pattern.  The cases: such a send goes
 * from the pages (TxZcopyBytes in /proc/net/sdpstats), a non-blocking one
 * or one below the threshold is copied, and so is one whose device raises
 * completions in process context (unless zcopy_task_cq); with zcopy_adapt
 * (the default; the other cases turn it off) a connection tries both
 * ways and keeps trying the one it does not prefer; the buffer is
 * the program's again once send() returned (overwritten at once, the
 * peer still gets what was sent), also when the transport has to send it
 * again; many odd iovecs; a read-only mapping as the source; a bad
 * address part way; signals while a send waits.
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
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

#define KiB 1024ul

/* A reader thread: @len bytes of stream @seed, checked, in @chunk reads. */
struct check {
	int fd;
	uint64_t seed;
	size_t len, chunk;
	unsigned int delay_us;	/* a pause after each read: a slow reader */
	int err;
	uint64_t off;
};

static void *check_stream(void *arg)
{
	struct check *c = arg;
	size_t left = c->len, n;

	while (left && !c->err) {
		n = c->chunk < left ? c->chunk : left;
		c->err = stream_recv_pattern(c->fd, c->seed, &c->off, n, 0);
		left -= n;
		if (c->delay_us)
			usleep(c->delay_us);
	}
	return NULL;
}

static long long zcopy_bytes(void)
{
	long long v = sdp_stat("TxZcopyBytes");

	return v < 0 ? 0 : v;
}

FIXTURE(zc)
{
	STREAM_CONN_FIELDS;
	long long thresh;	/* as found, to restore; -1 for TCP */
	long long read_zcopy;	/* the same */
	long long task_cq;	/* the same */
	long long adapt;	/* the same */
};

STREAM_VARIANTS(zc);

FIXTURE_SETUP(zc)
{
	self->thresh = -1;
	self->read_zcopy = -1;
	self->task_cq = -1;
	self->adapt = -1;
	/* Data messages from the pages: read zero-copy is stream_rzcopy's. */
	if (variant->sdp && sdp_param("read_zcopy") >= 0) {
		self->read_zcopy = sdp_param("read_zcopy");
		ASSERT_EQ(0, sdp_set_param("read_zcopy", "0"));
	}
	STREAM_SETUP(self, variant);
	if (variant->sdp) {
		self->thresh = sdp_param("zcopy_thresh");
		ASSERT_LE(0, self->thresh);
		ASSERT_EQ(0, sdp_set_param("zcopy_thresh", "65536"));
		/* From the pages on every kernel's Soft-RoCE, but where told */
		self->task_cq = sdp_param("zcopy_task_cq");
		ASSERT_LE(0, self->task_cq);
		ASSERT_EQ(0, sdp_set_param("zcopy_task_cq", "1"));
		/* Every such send from the pages, whatever it costs */
		self->adapt = sdp_param("zcopy_adapt");
		ASSERT_LE(0, self->adapt);
		ASSERT_EQ(0, sdp_set_param("zcopy_adapt", "0"));
	}
}

FIXTURE_TEARDOWN(zc)
{
	char text[32];

	if (self->thresh >= 0) {
		snprintf(text, sizeof(text), "%lld", self->thresh);
		sdp_set_param("zcopy_thresh", text);
	}
	if (self->read_zcopy >= 0)
		sdp_set_param("read_zcopy", self->read_zcopy ? "1" : "0");
	if (self->task_cq >= 0)
		sdp_set_param("zcopy_task_cq", self->task_cq ? "1" : "0");
	if (self->adapt >= 0)
		sdp_set_param("zcopy_adapt", self->adapt ? "1" : "0");
	STREAM_TEARDOWN(self);
}

/*
 * Sends @len bytes of stream @seed from @buf (filled here) in one send()
 * with @flags, and checks what it sent at the reader: alongside a
 * blocking send, after a non-blocking one.  Returns what send() returned.
 */
static ssize_t send_checked(struct __test_metadata *_metadata,
			    FIXTURE_DATA(zc) * self, char *buf, size_t len,
			    int flags, uint64_t seed)
{
	struct check c = { .fd = self->afd, .seed = seed, .len = len,
			   .chunk = 65536 };
	bool dontwait = flags & MSG_DONTWAIT;
	pthread_t t;
	ssize_t n;

	stream_fill(buf, len, seed, 0);
	if (!dontwait)
		ASSERT_EQ(0, pthread_create(&t, NULL, check_stream, &c));
	n = send(self->cfd, buf, len, flags);
	if (dontwait) {
		c.len = n > 0 ? n : 0;
		ASSERT_EQ(0, pthread_create(&t, NULL, check_stream, &c));
	}
	pthread_join(t, NULL);
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(c.len, c.off);
	return n;
}

/*
 * A blocking send of 1 MiB goes from the caller's pages: all of it but a
 * last piece smaller than a message.  The reader runs alongside, as a
 * blocking send of that much needs.
 */
TEST_F_TIMEOUT(zc, blocking_send_goes_from_pages, 60)
{
	const size_t len = 1024 * KiB;
	char *buf = malloc(len);
	long long before = zcopy_bytes(), sent;

	ASSERT_NE(NULL, buf);
	EXPECT_EQ((ssize_t)len, send_checked(_metadata, self, buf, len, 0, 1));
	sent = zcopy_bytes() - before;
	TH_LOG("%lld of %zu bytes from the caller's pages", sent, len);
	if (variant->sdp) {
		EXPECT_LE(len - 64 * KiB, sent);
		EXPECT_GE(len, sent);
	}
	free(buf);
}

/*
 * Copied instead: a non-blocking send, one below the threshold, and any
 * once the threshold is 0.  (A non-blocking send takes what fits.)
 */
TEST_F_TIMEOUT(zc, other_sends_are_copied, 60)
{
	const size_t len = 256 * KiB;
	char *buf = malloc(len);
	long long before = zcopy_bytes();
	ssize_t n;

	ASSERT_NE(NULL, buf);
	n = send_checked(_metadata, self, buf, len, MSG_DONTWAIT, 2);
	EXPECT_LT(0, n);
	n = send_checked(_metadata, self, buf, 60 * KiB, 0, 3);
	EXPECT_EQ(60 * KiB, n);
	if (variant->sdp)
		ASSERT_EQ(0, sdp_set_param("zcopy_thresh", "0"));
	n = send_checked(_metadata, self, buf, len, 0, 4);
	EXPECT_EQ((ssize_t)len, n);
	EXPECT_EQ(before, zcopy_bytes());
	free(buf);
}

/* Whether the running kernel is @major.@minor or newer. */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/*
 * A connection whose device raised a completion event in process context
 * copies such sends (TxZcopyDeclined counts them), unless zcopy_task_cq
 * is set: the bed's Soft-RoCE raises them from a kworker on 6.12 and
 * later, from a tasklet on 6.1.  The first send, more than the send ring
 * holds, waits for completions: the connection sees an event.
 */
TEST_F_TIMEOUT(zc, task_completions_copied, 60)
{
	const size_t len = 1024 * KiB;
	bool task_cq = kernel_at_least(6, 12);
	char *buf = malloc(len);
	long long zc0, declined0;

	if (!variant->sdp)
		SKIP(return, "zcopy_task_cq is SDP's");
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, sdp_set_param("zcopy_task_cq", "0"));
	EXPECT_EQ((ssize_t)len, send_checked(_metadata, self, buf, len, 0, 20));
	zc0 = zcopy_bytes();
	declined0 = sdp_stat("TxZcopyDeclined");
	ASSERT_LE(0, declined0);
	EXPECT_EQ((ssize_t)len, send_checked(_metadata, self, buf, len, 0, 21));
	TH_LOG("%s: %lld bytes from the pages, %lld sends declined",
	       task_cq ? "completions in process context" : "in interrupt context",
	       zcopy_bytes() - zc0, sdp_stat("TxZcopyDeclined") - declined0);
	if (task_cq) {
		EXPECT_EQ(zc0, zcopy_bytes());
		EXPECT_EQ(declined0 + 1, sdp_stat("TxZcopyDeclined"));
	} else {
		EXPECT_LE(zc0 + (long long)(len - 64 * KiB), zcopy_bytes());
		EXPECT_EQ(declined0, sdp_stat("TxZcopyDeclined"));
	}
	free(buf);
}

/*
 * zcopy_adapt: a connection's first eight large sends go from the pages
 * and are copied (TxZcopyDeclined) in turns, and after them it takes the
 * way that cost it less, trying the other first at the 16th send, and
 * after a try that confirmed the choice at the 32nd after it: both ways
 * show in the next 48.  Which way wins is the link's; every byte is
 * checked.
 */
TEST_F_TIMEOUT(zc, adapt_tries_both_ways, 120)
{
	const size_t len = 128 * KiB, first = 8, more = 48;
	char *buf = malloc(len);
	long long zc_sends = 0, copied = 0;
	size_t i;

	if (!variant->sdp)
		SKIP(return, "zcopy_adapt is SDP's");
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, sdp_set_param("zcopy_adapt", "1"));
	for (i = 0; i < first + more; i++) {
		long long zc0 = zcopy_bytes(), zc;
		long long declined0 = sdp_stat("TxZcopyDeclined"), declined;

		ASSERT_LE(0, declined0);
		ASSERT_EQ((ssize_t)len,
			  send_checked(_metadata, self, buf, len, 0, 30 + i));
		zc = zcopy_bytes() - zc0;
		declined = sdp_stat("TxZcopyDeclined") - declined0;
		if (i < first)
			EXPECT_EQ((long long)(i % 2), declined);
		if (!declined) {
			/* From the pages: all but a piece smaller than a message */
			EXPECT_LE((long long)(len - 64 * KiB), zc);
			EXPECT_GE((long long)len, zc);
			zc_sends += i >= first;
		} else {
			EXPECT_EQ(1, declined);
			EXPECT_EQ(0, zc);
			copied += i >= first;
		}
	}
	TH_LOG("of %zu sends after the first %zu: %lld from the pages, %lld copied",
	       more, first, zc_sends, copied);
	EXPECT_LE(1, zc_sends);
	EXPECT_LE(1, copied);
	free(buf);
}

/*
 * Once send() returned, the buffer is the program's: each 256 KiB is
 * overwritten the moment its send returns, and the reader still gets the
 * bytes as they were when sent.
 */
TEST_F_TIMEOUT(zc, buffer_reused_after_send, 60)
{
	const size_t len = 256 * KiB, rounds = 16;
	struct check c = { .fd = self->afd, .seed = 5, .len = len * rounds,
			   .chunk = 65536 };
	char *buf = malloc(len);
	uint64_t off = 0;
	pthread_t t;
	size_t i;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, pthread_create(&t, NULL, check_stream, &c));
	for (i = 0; i < rounds; i++) {
		stream_fill(buf, len, 5, off);
		EXPECT_EQ((ssize_t)len, send(self->cfd, buf, len, 0));
		memset(buf, 0xa5, len);
		off += len;
	}
	pthread_join(t, NULL);
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(off, c.off);
	free(buf);
}

/*
 * Brings host A's egress back after @arg ms of loss.  The netem qdisc
 * stays, lossless: deleting it swaps in the noop qdisc for a moment, and
 * Soft-RoCE on 7.x takes a packet that qdisc refuses for a fatal send
 * error and kills the QP.
 */
static void *end_loss_later(void *arg)
{
	usleep(*(int *)arg * 1000);
	if (system("tc qdisc change dev " SDP_A_IF " parent 1:3 handle 30: netem loss 0%"))
		fprintf(stderr, "# could not end the loss\n");
	return NULL;
}

/*
 * Host A's egress loses every request of the connections' transports:
 * RoCEv2 (UDP port 4791) packets other than acknowledgements (BTH opcode
 * 0x11, right after the UDP header), and TCP, IPv4 and IPv6.  Host A's
 * RoCE acknowledgements pass, so host B's own messages (credit updates)
 * are acknowledged as they arrive and only host A retransmits: on 7.3,
 * host B once resent a message whose acknowledgement had been lost and
 * got no answer until its QP gave up.  The rest (neighbour discovery,
 * ARP) goes on too, so that the path is still there when the loss ends.
 */
#define ROCE_ACK_PASSES(proto, match, at, pref)			\
	"tc filter add dev " SDP_A_IF " parent 1: protocol " proto " pref " pref " u32 " \
	"match " match " protocol 17 0xff match " match " dport 4791 0xffff " \
	"match u8 0x11 0xff at " at " flowid 1:2 && "
#define LOSE_TRANSPORT							\
	"tc qdisc add dev " SDP_A_IF " root handle 1: prio && "	\
	"tc qdisc add dev " SDP_A_IF " parent 1:3 handle 30: netem loss 100% && " \
	ROCE_ACK_PASSES("ip", "ip", "28", "10")				\
	ROCE_ACK_PASSES("ipv6", "ip6", "48", "20")				\
	"tc filter add dev " SDP_A_IF " parent 1: protocol ip pref 50 u32 " \
	"match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:3 && " \
	"tc filter add dev " SDP_A_IF " parent 1: protocol ip pref 50 u32 " \
	"match ip protocol 6 0xff flowid 1:3 && "			\
	"tc filter add dev " SDP_A_IF " parent 1: protocol ipv6 pref 60 u32 " \
	"match ip6 protocol 17 0xff match ip6 dport 4791 0xffff flowid 1:3 && " \
	"tc filter add dev " SDP_A_IF " parent 1: protocol ipv6 pref 60 u32 " \
	"match ip6 protocol 6 0xff flowid 1:3"

/*
 * The same across a retransmission: host A's egress loses every packet
 * of the transport for 300 ms from before the send, so the transport
 * sends the bytes again from where they lie after the loss ends, long
 * after a send that did not wait for its completion would have returned
 * and let the buffer be overwritten.
 */
TEST_F_TIMEOUT(zc, buffer_reused_across_retransmit, 60)
{
	const size_t len = 256 * KiB;
	struct check c = { .fd = self->afd, .seed = 10, .len = len,
			   .chunk = 65536 };
	char *buf = malloc(len);
	int loss_ms = 300;
	pthread_t t, tl;

	ASSERT_NE(NULL, buf);
	stream_fill(buf, len, 10, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, check_stream, &c));
	ASSERT_EQ(0, system(LOSE_TRANSPORT));
	ASSERT_EQ(0, pthread_create(&tl, NULL, end_loss_later, &loss_ms));
	EXPECT_EQ((ssize_t)len, send(self->cfd, buf, len, 0));
	memset(buf, 0xa5, len);
	pthread_join(tl, NULL);
	pthread_join(t, NULL);
	/* host A has nothing left to send: the swap cannot hit a packet */
	EXPECT_EQ(0, system("tc qdisc del dev " SDP_A_IF " root"));
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(len, c.off);
	free(buf);
}

/*
 * writev() of 70 iovecs of 4099 bytes, each starting at another offset
 * in its page: messages of many pieces, more than one message's worth of
 * pages.
 */
TEST_F_TIMEOUT(zc, writev_many_odd_iovecs, 60)
{
	const size_t piece = 4099, count = 70;
	struct check c = { .fd = self->afd, .seed = 6, .len = piece * count,
			   .chunk = 65536 };
	char *buf = malloc((piece + 64) * count);
	struct iovec iov[70];
	uint64_t off = 0;
	long long before = zcopy_bytes();
	pthread_t t;
	size_t i;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < count; i++) {
		iov[i].iov_base = buf + i * (piece + 64) + i % 61;
		iov[i].iov_len = piece;
		stream_fill(iov[i].iov_base, piece, 6, off);
		off += piece;
	}
	ASSERT_EQ(0, pthread_create(&t, NULL, check_stream, &c));
	EXPECT_EQ((ssize_t)(piece * count), writev(self->cfd, iov, count));
	pthread_join(t, NULL);
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(off, c.off);
	if (variant->sdp)
		EXPECT_LT(before, zcopy_bytes());
	free(buf);
}

/* A read-only mapping of a file is a source like any other. */
TEST_F_TIMEOUT(zc, send_from_readonly_mapping, 60)
{
	const size_t len = 512 * KiB;
	long long before = zcopy_bytes();
	char *buf = malloc(len), *map;
	FILE *f = tmpfile();

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, f);
	stream_fill(buf, len, 7, 0);
	ASSERT_EQ(len, fwrite(buf, 1, len, f));
	ASSERT_EQ(0, fflush(f));
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fileno(f), 0);
	ASSERT_NE(MAP_FAILED, map);
	{
		struct check c = { .fd = self->afd, .seed = 7, .len = len,
				   .chunk = 65536 };
		pthread_t t;

		ASSERT_EQ(0, pthread_create(&t, NULL, check_stream, &c));
		EXPECT_EQ((ssize_t)len, send(self->cfd, map, len, 0));
		pthread_join(t, NULL);
		EXPECT_EQ(0, c.err);
		EXPECT_EQ(len, c.off);
	}
	if (variant->sdp)
		EXPECT_LT(before, zcopy_bytes());
	munmap(map, len);
	fclose(f);
	free(buf);
}

/*
 * A send of 512 KiB whose last 128 KiB are not readable returns the
 * bytes before them (TCP may return fewer: it copies in pieces of its
 * own), the peer gets exactly those, and the stream goes on.  All bad:
 * EFAULT.
 */
TEST_F_TIMEOUT(zc, bad_address_part_way, 60)
{
	const size_t len = 512 * KiB, good = 384 * KiB;
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t off, roff = 0;
	ssize_t n;

	ASSERT_NE(MAP_FAILED, buf);
	stream_fill(buf, good, 8, 0);
	ASSERT_EQ(0, mprotect(buf + good, len - good, PROT_NONE));
	{
		struct check c = { .fd = self->afd, .seed = 8,
				   .chunk = 65536 };
		pthread_t t;

		n = send(self->cfd, buf, len, 0);
		ASSERT_LT(0, n);
		EXPECT_GE((ssize_t)good, n);
		if (variant->sdp)
			EXPECT_EQ((ssize_t)good, n);
		c.len = n;
		ASSERT_EQ(0, pthread_create(&t, NULL, check_stream, &c));
		pthread_join(t, NULL);
		EXPECT_EQ(0, c.err);
		roff = c.off;
	}
	off = n;
	EXPECT_EQ(-1, send(self->cfd, buf + good, len - good, 0));
	EXPECT_EQ(EFAULT, errno);

	ASSERT_EQ(0, stream_send_pattern(self->cfd, 8, &off, 5000, 0));
	ASSERT_EQ(0, stream_recv_pattern(self->afd, 8, &roff, 5000, 0));
	EXPECT_EQ(off, roff);
	munmap(buf, len);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * Signals every 5 ms while large sends wait for a slow reader: a send
 * cut short by one returns what it sent (or EINTR if nothing), and the
 * program sends the rest; the reader gets every byte once, in order.
 */
TEST_F_TIMEOUT(zc, signals_while_sending, 90)
{
	const size_t len = 256 * KiB, total = 4096 * KiB;
	struct check c = { .fd = self->afd, .seed = 9, .len = total,
			   .chunk = 32 * KiB, .delay_us = 2000 };
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
	struct itimerval off_timer = { 0 };
	char *buf = malloc(len);
	uint64_t off = 0;
	long shorts = 0;
	sigset_t alrm;
	pthread_t t;
	ssize_t n;
	size_t n_want;

	ASSERT_NE(NULL, buf);
	/* The reader takes no signal: it starts with SIGALRM blocked. */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	ASSERT_EQ(0, pthread_sigmask(SIG_BLOCK, &alrm, NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, check_stream, &c));
	ASSERT_EQ(0, pthread_sigmask(SIG_UNBLOCK, &alrm, NULL));
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	while (off < total) {
		n_want = total - off < len ? total - off : len;
		stream_fill(buf, n_want, 9, off);
		n = send(self->cfd, buf, n_want, 0);
		if (n < 0) {
			ASSERT_EQ(EINTR, errno);
			continue;
		}
		if ((size_t)n < n_want)
			shorts++;
		off += n;
	}
	setitimer(ITIMER_REAL, &off_timer, NULL);
	pthread_join(t, NULL);
	TH_LOG("%ld sends cut short by a signal", shorts);
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(total, c.off);
	free(buf);
}

TEST_HARNESS_MAIN
