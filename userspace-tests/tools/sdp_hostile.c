// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_hostile: a malicious SDP peer.  Opens an SDP listener on host B,
 * then, from host A, connects to it with its own RDMA CM id, PD, CQ and
 * RC QP (librdmacm, libibverbs), not through the SDP module, so it can
 * send what the module must refuse, and checks that the module does.
 *
 *   sdp_hostile -c CASE [-p PORT]
 *
 * CASE, and what is expected of the SDP side:
 *   hello-version       Hello with MajV/MinV 0x11
 *   hello-maxadverts0   Hello with MaxAdverts 0
 *   hello-short         a 20-byte Hello (the CM pads the REQ's private
 *                       data with zeros to 56 bytes, so the module sees
 *                       a Hello with LocalRcvSz 0)
 *       -> the connection is rejected, nothing to accept on the listener
 *   short-len           BSDH len 8 in a 16-byte message
 *   long-len            BSDH len 100000 in a 26-byte message
 *   oversize            a message 16 bytes larger than a receive buffer
 *   unknown-mid         message id 0x42
 *   credit-overflow     (listener SO_RCVBUF 4096, so the SDP side returns
 *                       no credits) one 1-byte Data message per credit of
 *                       the HelloAck: the last uses the last credit for
 *                       payload
 *   data-after-disconn  DisConn, then Data with payload
 *   disconn-payload     a DisConn of 17 bytes: one byte after its header
 *   seq-order           Data "x" with MSeq 1, then Data "y" with MSeq 3
 *   srcavail-not-offered  a SrcAvail, though our Hello did not offer read
 *                       zero-copy
 *   srcavail-bad-rkey   (read zero-copy offered) a SrcAvail of 64 KiB with
 *                       a key of no MR of ours: the RDMA Read fails
 *   rdcompl-unsolicited (read zero-copy offered) an RdmaRdCompl for a
 *                       SrcAvail never sent
 *       -> the accepted socket reads the payload of the valid messages,
 *          then ECONNRESET (data-after-disconn: EOF, as the DisConn came
 *          first, then the socket reports the error: POLLERR and
 *          SO_ERROR ECONNRESET); the RDMA CM id is disconnected
 *   no-rtu              (listener backlog 0: one request at a time) a
 *                       valid Hello, then, with its own QP moved to RTS
 *                       by itself and the RTU never sent, a message of
 *                       an unknown id before the SDP side's child is
 *                       established
 *       -> the child is aborted: its CM id destroyed (our id sees
 *          REJECTED), nothing to accept, and its place in the listener's
 *          backlog free again: a valid connection right after is
 *          established and accepted
 *   srcavail-after-abort  (read zero-copy offered) the SDP side's send of
 *                       1 MiB from a program's buffer goes by SrcAvail;
 *                       we open a second connection, then break the
 *                       first (a message of an unknown id) and never
 *                       answer its DREQ; once send() has returned, the
 *                       program writes its buffer anew, and we RDMA-Read
 *                       the advertised memory through the second
 *                       connection
 *       -> send() returns an error; the read fails: no peer reads a
 *          buffer its program has got back
 *   srcavail-then-disconn  (read zero-copy offered; listener SO_RCVBUF
 *                       4096, so the SDP side reads the SrcAvail a piece
 *                       at a time) a SrcAvail of 256 KiB of our memory,
 *                       then at once DisConn
 *       -> the accepted socket reads the 256 KiB, intact, then EOF (the
 *          DisConn takes effect after the SrcAvail's bytes, as a FIN
 *          after the data before it); its close sends DisConn
 *   good                three valid Data messages ("abc", "def", "ghi"),
 *                       then DisConn
 *       -> the accepted socket reads exactly "abcdefghi", then EOF, no
 *          error; its close sends DisConn (MSeq 1, MSeqAck 4) and the
 *          module disconnects
 *
 * -p is the listener port (default 19500).  Every wait is bounded.  Prints
 * one line, "sdp_hostile: CASE: ok: ..." or "sdp_hostile: CASE: FAIL:
 * ...", naming the peer's address as the module sees it (10.99.0.1:PORT);
 * exits 0 only when the expectation is met, 1 otherwise, 2 on bad usage.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "sdp_hosts.h"
#include "peer/rdma_peer.h"

enum kind { HELLO_BAD, ABORT, NO_RTU, SRC_AFTER_ABORT, SRC_DISCONN, GOOD };

static const struct {
	const char *name;
	enum kind kind;
} cases[] = {
	{ "hello-version", HELLO_BAD },
	{ "hello-maxadverts0", HELLO_BAD },
	{ "hello-short", HELLO_BAD },
	{ "short-len", ABORT },
	{ "long-len", ABORT },
	{ "oversize", ABORT },
	{ "unknown-mid", ABORT },
	{ "credit-overflow", ABORT },
	{ "data-after-disconn", ABORT },
	{ "disconn-payload", ABORT },
	{ "seq-order", ABORT },
	{ "srcavail-not-offered", ABORT },
	{ "srcavail-bad-rkey", ABORT },
	{ "rdcompl-unsolicited", ABORT },
	{ "no-rtu", NO_RTU },
	{ "srcavail-after-abort", SRC_AFTER_ABORT },
	{ "srcavail-then-disconn", SRC_DISCONN },
	{ "good", GOOD },
};

/*
 * Reads the accepted socket until EOF or an error, at most WAIT_MS in
 * all: the bytes in @buf (*@got of them); returns 0 at EOF (or when
 * @size bytes came), else the recv() errno.  *@timed_out when neither
 * came in time.
 */
static int sdp_read(int fd, char *buf, size_t size, size_t *got,
		    int *timed_out)
{
	long deadline = now_ms() + WAIT_MS;

	*got = 0;
	*timed_out = 0;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, left_ms(deadline)) <= 0) {
			*timed_out = 1;
			return 0;
		}
		n = recv(fd, buf + *got, size - *got, MSG_DONTWAIT);
		if (n > 0) {
			*got += n;
			if (*got == size)
				return 0;
			continue;
		}
		if (!n)
			return 0;
		if (errno != EAGAIN && errno != EINTR)
			return errno;
	}
}

static int is_case(const char *name)
{
	return !strcmp(case_name, name);
}

static int port = 19500;

/* The cases that offer read zero-copy in their Hello. */
static int read_zcopy_case(void)
{
	return !strncmp(case_name, "srcavail-bad", 12) ||
	       !strncmp(case_name, "srcavail-after", 14) ||
	       !strncmp(case_name, "srcavail-then", 13) ||
	       !strncmp(case_name, "rdcompl", 7);
}

/* The hello-* cases: rejected, and nothing reaches the listener. */
static int run_bad_hello(struct peer *p, int lfd)
{
	struct hello h;
	uint8_t len = sizeof(h);
	int fd;

	fill_hello(&h, read_zcopy_case());
	if (is_case("hello-version"))
		h.hh.majv_minv = 0x11;
	else if (is_case("hello-maxadverts0"))
		h.hh.max_adverts = 0;
	else
		len = 20;
	if (peer_connect(p, port, &h, len, 0))
		return -1;
	if (p->established)
		return fail("connection established: the bad Hello was accepted");
	fd = accept(lfd, NULL, NULL);
	if (fd >= 0) {
		close(fd);
		return fail("rejected, but the listener has a connection to accept");
	}
	if (errno != EAGAIN)
		return fail("accept: %s, want EAGAIN", strerror(errno));
	pass("Hello of %u bytes rejected (reject status %d), nothing to accept",
	     len, p->reject_status);
	return 0;
}

/* Connects with a valid Hello, checks the HelloAck and accepts. */
static int connect_valid(struct peer *p, int lfd, int *afd)
{
	struct hello h;

	fill_hello(&h, read_zcopy_case());
	if (peer_connect(p, port, &h, sizeof(h), 0))
		return -1;
	if (!p->established)
		return fail("a valid Hello was rejected (reject status %d)",
			    p->reject_status);
	if (check_ack(p))
		return -1;
	*afd = sdp_accept(lfd);
	return *afd < 0 ? -1 : 0;
}

/* Waits, at most WAIT_MS, until @fd reports an error; 1 when it did. */
static int wait_pollerr(int fd)
{
	long deadline = now_ms() + WAIT_MS;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = 0 };

		if (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLERR))
			return 1;
		if (!left_ms(deadline))
			return 0;
		usleep(20000);
	}
}

/* Waits, at most WAIT_MS, until @fd reports an error; then its SO_ERROR. */
static int wait_so_error(int fd)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (!wait_pollerr(fd))
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return errno;
	return err;
}

/* The malformed streams: the SDP side must abort. */
static int run_abort(struct peer *p, int lfd, int *afd)
{
	char buf[256], want[256];
	size_t want_len = 0, got;
	int err, timed_out, credits, i;
	uint32_t size;

	if (connect_valid(p, lfd, afd))
		return -1;
	credits = ntohs(p->ack.bsdh.bufs);

	if (is_case("short-len")) {
		err = send_msg(p, MID_DATA, 8, 16, 0, NULL, 0);
	} else if (is_case("long-len")) {
		err = send_msg(p, MID_DATA, 100000, 26, 0, "0123456789", 10);
	} else if (is_case("oversize")) {
		/* a header more than the SDP side's buffers hold */
		size = ntohl(p->ack.hah.act_rcv_sz) + 16;
		if (size > TX_SIZE)
			return fail("the SDP side's buffers (ActRcvSz %u) are too large for this tool's %u-byte sends",
				    size - 16, TX_SIZE);
		err = send_msg(p, MID_DATA, size, size, 0, NULL, 0);
	} else if (is_case("unknown-mid")) {
		err = send_msg(p, 0x42, 16, 16, 0, NULL, 0);
	} else if (is_case("credit-overflow")) {
		if (credits > TX_N || credits > (int)sizeof(want))
			return fail("HelloAck bufs %d: more than this tool sends",
				    credits);
		/* Payload on every credit: the last one must carry none. */
		for (i = 0, err = 0; i < credits && !err; i++) {
			char c = 'a' + i % 26;

			err = send_data(p, &c, 1);
			if (i < credits - 1)
				want[want_len++] = c;
		}
		/*
		 * Nothing read before the abort: a read makes room, the SDP
		 * side returns credits, and the last message may then arrive
		 * within them (it did on a slow link).
		 */
		if (!err && !wait_pollerr(*afd))
			return fail("the accepted socket reported no error within %d ms",
				    WAIT_MS);
	} else if (is_case("data-after-disconn")) {
		err = send_msg(p, MID_DISCONN, 16, 16, 0, NULL, 0);
		if (!err)
			err = send_data(p, "x", 1);
	} else if (is_case("disconn-payload")) {
		err = send_msg(p, MID_DISCONN, 17, 17, 0, "z", 1);
	} else if (is_case("srcavail-not-offered") ||
		   is_case("srcavail-bad-rkey")) {
		/* Len, RKey, VAddr: a key no MR of ours has */
		uint32_t ext[4] = { htonl(65536), htonl(0x5dbad0), 0,
				    htonl(0x10000) };

		err = send_msg(p, MID_SRC_AVAIL, 32, 32, 0, ext, sizeof(ext));
	} else if (is_case("rdcompl-unsolicited")) {
		uint32_t len = htonl(100);

		err = send_msg(p, MID_RDMA_RD_COMPL, 20, 20, 0, &len,
			       sizeof(len));
	} else {	/* seq-order */
		err = send_data(p, "x", 1);
		want[want_len++] = 'x';
		if (!err)	/* MSeq 3 after 1 */
			err = send_msg(p, MID_DATA, 17, 17, 1, "y", 1);
	}
	if (err)
		return -1;

	err = sdp_read(*afd, buf, sizeof(buf), &got, &timed_out);
	if (timed_out)
		return fail("the accepted socket saw no EOF nor error within %d ms (%zu bytes read)",
			    WAIT_MS, got);
	if (got != want_len || memcmp(buf, want, got))
		return fail("the accepted socket read %zu bytes '%.*s', want %zu '%.*s'",
			    got, (int)got, buf, want_len, (int)want_len, want);
	if (is_case("data-after-disconn")) {
		/* The DisConn came first: EOF, as TCP after a FIN. */
		if (err)
			return fail("recv: %s, want EOF (the DisConn)", strerror(err));
		err = wait_so_error(*afd);
		if (err != ECONNRESET)
			return fail("after EOF: SO_ERROR %s, want ECONNRESET",
				    err ? strerror(err) : "0 (no error within the time limit)");
	} else if (err != ECONNRESET) {
		return fail("recv: %s, want ECONNRESET (%zu bytes read before)",
			    err ? strerror(err) : "EOF", got);
	}

	if (pump_until(p, &p->disconnected, now_ms() + WAIT_MS))
		return fail("ECONNRESET, but our CM id got no DISCONNECTED within %d ms (last event %s)",
			    WAIT_MS, last_event(p));
	pass("%zu payload bytes, then %s; CM id disconnected; our sends %u, completed %u, failed %u%s%s",
	     got, is_case("data-after-disconn") ? "EOF and SO_ERROR ECONNRESET" :
	     "ECONNRESET", p->tx_posted, p->tx_done, p->tx_errors,
	     p->tx_errors ? ", first: " : "",
	     p->tx_errors ? ibv_wc_status_str(p->tx_status) : "");
	return 0;
}

/* The control: valid messages, read in full; an orderly close. */
static int run_good(struct peer *p, int lfd, int *afd)
{
	static const char want[] = "abcdefghi";
	char buf[256];
	size_t got;
	int err, timed_out;
	socklen_t len = sizeof(err);

	if (connect_valid(p, lfd, afd))
		return -1;
	if (send_data(p, "abc", 3) || send_data(p, "def", 3) ||
	    send_data(p, "ghi", 3) || send_msg(p, MID_DISCONN, 16, 16, 0, NULL, 0))
		return -1;

	err = sdp_read(*afd, buf, sizeof(buf), &got, &timed_out);
	if (timed_out || err)
		return fail("the accepted socket: %s after %zu bytes, want EOF after 9",
			    timed_out ? "no EOF within the time limit" : strerror(err), got);
	if (got != strlen(want) || memcmp(buf, want, got))
		return fail("the accepted socket read %zu bytes '%.*s', want '%s'",
			    got, (int)got, buf, want);
	if (getsockopt(*afd, SOL_SOCKET, SO_ERROR, &err, &len) || err)
		return fail("SO_ERROR %s after EOF", strerror(err ? err : errno));

	/* Its close answers our DisConn with its own: an orderly close. */
	close(*afd);
	*afd = -1;
	if (pump_until(p, &p->rx_disconn, now_ms() + WAIT_MS))
		return fail("no DisConn from the SDP side within %d ms of its close() (%u messages from it)",
			    WAIT_MS, p->rx_done);
	if (ntohl(p->rx_last.len) != sizeof(struct bsdh) ||
	    ntohl(p->rx_last.mseq) != p->rx_done ||
	    ntohl(p->rx_last.mseq_ack) != p->tx_mseq)
		return fail("the SDP side's DisConn: len %u MSeq %u MSeqAck %u, want 16, %u, %u",
			    ntohl(p->rx_last.len), ntohl(p->rx_last.mseq),
			    ntohl(p->rx_last.mseq_ack), p->rx_done, p->tx_mseq);
	if (pump_until(p, &p->disconnected, now_ms() + WAIT_MS))
		return fail("no DISCONNECTED within %d ms of both DisConns (last event %s)",
			    WAIT_MS, last_event(p));
	if (p->tx_errors || p->rx_errors)
		return fail("a send or receive failed: %s",
			    ibv_wc_status_str(p->tx_errors ? p->tx_status : p->rx_status));
	pass("read '%s' then EOF, no error; close() sent DisConn (MSeq %u, MSeqAck %u); disconnected",
	     want, ntohl(p->rx_last.mseq), ntohl(p->rx_last.mseq_ack));
	return 0;
}

/*
 * A SrcAvail, then DisConn right behind it: the reader gets the
 * SrcAvail's bytes before EOF.
 */
#define SRC_DISCONN_LEN	(256 << 10)
static int run_src_disconn(struct peer *p, int lfd, int *afd)
{
	static char buf[SRC_DISCONN_LEN + 1];
	struct hello h;
	struct srcah a;
	size_t got, i;
	int err, timed_out;
	char *mem;

	fill_hello(&h, 1);
	p->repost = 1;	/* (its RdmaRdCompls take our buffers) */
	if (peer_connect(p, port, &h, sizeof(h), SRC_DISCONN_LEN))
		return -1;
	if (!p->established || check_ack(p))
		return fail("a valid Hello was not taken (reject status %d)",
			    p->reject_status);
	*afd = sdp_accept(lfd);
	if (*afd < 0)
		return -1;
	mem = peer_extra(p);
	for (i = 0; i < SRC_DISCONN_LEN; i++)
		mem[i] = 'a' + i % 26;
	a.len = htonl(SRC_DISCONN_LEN);
	a.rkey = htonl(peer_extra_rkey(p));
	a.vaddr = htobe64((uintptr_t)mem);
	if (send_msg(p, MID_SRC_AVAIL, 32, 32, 0, &a, sizeof(a)) ||
	    send_msg(p, MID_DISCONN, 16, 16, 0, NULL, 0))
		return -1;
	err = sdp_read(*afd, buf, sizeof(buf), &got, &timed_out);
	if (timed_out || err)
		return fail("the accepted socket: %s after %zu bytes, want EOF after %d",
			    timed_out ? "no EOF within the time limit" : strerror(err),
			    got, SRC_DISCONN_LEN);
	if (got != SRC_DISCONN_LEN || memcmp(buf, mem, got))
		return fail("the accepted socket read %zu bytes%s, then EOF; want the SrcAvail's %d first",
			    got, got == SRC_DISCONN_LEN ? " that differ" : "",
			    SRC_DISCONN_LEN);
	close(*afd);
	*afd = -1;
	/* its credits back (a credit update may follow our DisConn) */
	poll_cq(p);
	if (send_msg(p, MID_DATA, 16, 16, 0, NULL, 0))
		return -1;
	if (pump_until(p, &p->rx_disconn, now_ms() + WAIT_MS))
		return fail("no DisConn from the SDP side within %d ms of its close() (%u messages from it)",
			    WAIT_MS, p->rx_done);
	if (pump_until(p, &p->disconnected, now_ms() + WAIT_MS))
		return fail("no DISCONNECTED within %d ms of both DisConns (last event %s)",
			    WAIT_MS, last_event(p));
	pass("read the SrcAvail's %d bytes, then EOF; close() sent DisConn; disconnected",
	     SRC_DISCONN_LEN);
	return 0;
}

/*
 * A malformed first message on a connection whose RTU never came: the
 * child goes, and with it its place in the listener's backlog (0: one
 * child at a time), which a valid connection then takes.
 */
static int run_no_rtu(struct peer *p, int lfd, int *afd)
{
	char first[sizeof(peer_name)];
	struct hello h;
	int fd;

	p->no_rtu = 1;
	fill_hello(&h, read_zcopy_case());
	if (peer_connect(p, port, &h, sizeof(h), 0))
		return -1;
	if (!p->responded)
		return fail("no REP for a valid Hello (reject status %d)",
			    p->reject_status);
	if (check_ack(p) || own_qp_to(p, IBV_QPS_RTR) ||
	    own_qp_to(p, IBV_QPS_RTS))
		return -1;
	if (send_msg(p, 0x42, 16, 16, 0, NULL, 0))
		return -1;
	if (pump_until(p, &p->rejected, now_ms() + WAIT_MS))
		return fail("no REJ within %d ms of a malformed message before the RTU (last event %s)",
			    WAIT_MS, last_event(p));
	fd = accept(lfd, NULL, NULL);
	if (fd >= 0) {
		close(fd);
		return fail("the aborted child was queued for accept()");
	}
	if (errno != EAGAIN)
		return fail("accept: %s, want EAGAIN", strerror(errno));
	peer_destroy(p);

	/* its backlog place is free: a valid connection goes through */
	strcpy(first, peer_name);
	if (connect_valid(p, lfd, afd))
		return -1;
	strcpy(peer_name, first);	/* (the one the log names) */
	pass("a malformed message before the RTU: rejected, nothing to accept; a valid connection then accepted");
	return 0;
}

/* The program's send, in a thread of its own: it blocks on the SrcAvail. */
#define SRC_SEND	(1 << 20)
struct src_sender {
	int fd;
	char *buf;
	ssize_t ret;
	int err;
	volatile int done;
};

static void *src_sender(void *arg)
{
	struct src_sender *s = arg;

	s->ret = send(s->fd, s->buf, SRC_SEND, 0);
	s->err = errno;
	s->done = 1;
	return NULL;
}

/* The second peer of srcavail-after-abort: its own connection. */
static struct peer other;

/*
 * A SrcAvail whose connection fails: once send() returned, no peer may
 * read the program's buffer, which the program writes anew.
 */
static int run_src_after_abort(struct peer *p, int lfd, int *afd)
{
	char first[sizeof(peer_name)];
	struct src_sender snd = { 0 };
	pthread_t thread;
	long deadline;
	int bfd = -1, ret = -1;
	char *got;

	if (connect_valid(p, lfd, afd))
		return -1;
	snd.fd = *afd;
	snd.buf = aligned_alloc(4096, SRC_SEND);
	if (!snd.buf)
		return fail("out of memory");
	memset(snd.buf, 'A', SRC_SEND);
	if (pthread_create(&thread, NULL, src_sender, &snd)) {
		free(snd.buf);
		return fail("pthread_create");
	}
	if (pump_until(p, &p->rx_srcavail, now_ms() + WAIT_MS)) {
		fail("no SrcAvail within %d ms of a %d-byte send (%u messages came)",
		     WAIT_MS, SRC_SEND, p->rx_done);
		goto out;
	}
	if (!p->src_len || p->src_len > SRC_SEND) {
		fail("SrcAvail of %u bytes", p->src_len);
		goto out;
	}
	/* the second connection, to the same device of the SDP side */
	strcpy(first, peer_name);
	if (connect_valid(&other, lfd, &bfd))
		goto out;
	strcpy(peer_name, first);	/* (the one the log names) */
	/* the first breaks; we leave its DREQ unanswered */
	if (send_msg(p, 0x42, 16, 16, 0, NULL, 0))
		goto out;
	deadline = now_ms() + WAIT_MS;
	while (!snd.done && left_ms(deadline))
		usleep(10000);
	if (!snd.done) {
		fail("send() did not return within %d ms of the abort", WAIT_MS);
		goto out;
	}
	if (snd.ret >= 0 || (snd.err != ECONNRESET && snd.err != EPIPE)) {
		fail("send() returned %zd (%s), want -1 and ECONNRESET or EPIPE",
		     snd.ret, snd.ret < 0 ? strerror(snd.err) : "no error");
		goto out;
	}
	/* the program has its buffer back, and writes it */
	memset(snd.buf, 'S', SRC_SEND);
	if (post_read(&other, p->src_rkey, p->src_vaddr, 4096))
		goto out;
	if (pump_until(&other, (const int *)&other.tx_done, now_ms() + WAIT_MS)) {
		fail("our RDMA Read did not complete within %d ms", WAIT_MS);
		goto out;
	}
	got = tx_buf(&other, other.tx_posted - 1);
	if (!other.tx_errors) {
		fail("an RDMA Read of the SrcAvail's memory (key 0x%x) after send() returned succeeded, reading '%c%c%c...'",
		     p->src_rkey, got[0], got[1], got[2]);
		goto out;
	}
	pass("send() returned %s; then an RDMA Read of its %u advertised bytes failed (%s)",
	     strerror(snd.err), p->src_len, ibv_wc_status_str(other.tx_status));
	ret = 0;
out:
	if (!snd.done)
		shutdown(*afd, SHUT_RDWR);	/* (the thread's send returns) */
	pthread_join(thread, NULL);
	free(snd.buf);
	peer_destroy(&other);
	if (bfd >= 0)
		close(bfd);
	return ret;
}

static void watchdog(int sig)
{
	static const char msg[] = ": FAIL: watchdog: a call did not return\n";

	(void)sig;
	(void)!write(1, "sdp_hostile: ", 13);
	(void)!write(1, case_name, strlen(case_name));
	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(1);
}

int main(int argc, char **argv)
{
	struct peer p;
	int opt, lfd, afd = -1;
	enum kind kind = GOOD;
	size_t i;

	tool_name = "sdp_hostile";
	while ((opt = getopt(argc, argv, "c:p:")) != -1) {
		switch (opt) {
		case 'c': case_name = optarg; break;
		case 'p': port = atoi(optarg); break;
		default: case_name = NULL; optind = argc + 1; break;
		}
	}
	for (i = 0; case_name && i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(case_name, cases[i].name))
			break;
	if (!case_name || optind != argc || i == sizeof(cases) / sizeof(cases[0])) {
		fprintf(stderr, "usage: sdp_hostile -c CASE [-p PORT]\nCASE:");
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			fprintf(stderr, " %s", cases[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	kind = cases[i].kind;

	/* A backstop for calls no timeout bounds (the waits all are). */
	signal(SIGALRM, watchdog);
	alarm(4 * WAIT_MS / 1000 + 30);

	memset(&p, 0, sizeof(p));
	/* With no receive space the SDP side never returns a credit. */
	lfd = sdp_listen(port, is_case("credit-overflow") ||
			 is_case("srcavail-then-disconn") ? 4096 : 0,
			 kind == NO_RTU ? 0 : 16);
	if (lfd >= 0) {
		if (kind == HELLO_BAD)
			run_bad_hello(&p, lfd);
		else if (kind == ABORT)
			run_abort(&p, lfd, &afd);
		else if (kind == NO_RTU)
			run_no_rtu(&p, lfd, &afd);
		else if (kind == SRC_AFTER_ABORT)
			run_src_after_abort(&p, lfd, &afd);
		else if (kind == SRC_DISCONN)
			run_src_disconn(&p, lfd, &afd);
		else
			run_good(&p, lfd, &afd);
	}
	peer_destroy(&p);
	if (afd >= 0)
		close(afd);
	if (lfd >= 0)
		close(lfd);
	return failed ? 1 : 0;
}
