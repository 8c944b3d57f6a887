// SPDX-License-Identifier: GPL-2.0
/*
 * stream_data: data integrity on one stream connection, over real TCP (the
 * reference) and over SDP on IPv4, IPv6 and v4-mapped IPv6.  Writes of
 * 1 B .. 4 MiB read back with unrelated read sizes, mixed sizes, both
 * directions at once (blocking threads, and non-blocking poll loops),
 * writev/readv and sendmsg/recvmsg with several iovecs, many small
 * messages, short and zero-length reads and writes, a writev() that meets
 * a bad address, and a ping-pong whose blocking reader spins for its
 * replies (recv_poll_us) while they come fast.  Every byte is checked
 * against a position-keyed pseudo-random pattern, and a 64-bit FNV-1a of
 * the whole stream is compared between writer and reader.
 *
 * SDP_TEST_MAX (bytes, default 4194304) caps the largest write and the
 * data per direction: the Soft-RoCE link moves only ~25 MB/s under TCG.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

#define KiB 1024ul
#define MiB (1024ul * 1024)

static size_t max_size(void)
{
	const char *s = getenv("SDP_TEST_MAX");
	size_t v = s ? strtoul(s, NULL, 0) : 0;

	return v >= 64 * KiB ? v : 4 * MiB;
}

/*
 * One direction of a transfer, run in a thread: the writer writes
 * sizes[i % nsizes] bytes per write() until @total, the reader reads with
 * sizes[i % nsizes] per read() and checks every byte.
 */
struct xfer {
	int fd;
	uint64_t seed;
	const size_t *sizes;
	size_t nsizes;
	uint64_t total;
	bool eof;		/* writer: SHUT_WR after; reader: expect EOF */
	/* results */
	int err;		/* 0, -errno, -EBADMSG (wrong byte), -ENODATA */
	uint64_t done;		/* bytes moved */
	uint64_t hash;		/* FNV-1a of them */
	long short_writes;	/* blocking write()s that returned short */
};

static void *writer(void *arg)
{
	struct xfer *x = arg;
	size_t i, n, bsize = 0;
	char *buf;
	ssize_t w;

	for (i = 0; i < x->nsizes; i++)
		bsize = x->sizes[i] > bsize ? x->sizes[i] : bsize;
	buf = malloc(bsize);
	if (!buf) {
		x->err = -ENOMEM;
		return NULL;
	}
	x->hash = STREAM_FNV_INIT;
	for (i = 0; x->done < x->total; i++) {
		n = x->sizes[i % x->nsizes];
		if (n > x->total - x->done)
			n = x->total - x->done;
		stream_fill(buf, n, x->seed, x->done);
		x->hash = stream_fnv1a(x->hash, buf, n);
		/* A blocking write() takes it all (TCP loops until it has). */
		w = write(x->fd, buf, n);
		if (w >= 0 && (size_t)w < n) {
			x->short_writes++;
			x->err = stream_write_all(x->fd, buf + w, n - w, 0);
		} else if (w < 0) {
			x->err = -errno;
		}
		if (x->err)
			break;
		x->done += n;
	}
	if (!x->err && x->eof && shutdown(x->fd, SHUT_WR))
		x->err = -errno;
	free(buf);
	return NULL;
}

static void *reader(void *arg)
{
	struct xfer *x = arg;
	size_t i, n, bsize = 0;
	ssize_t r, bad;
	char *buf;
	int ev;

	for (i = 0; i < x->nsizes; i++)
		bsize = x->sizes[i] > bsize ? x->sizes[i] : bsize;
	buf = malloc(bsize);
	if (!buf) {
		x->err = -ENOMEM;
		return NULL;
	}
	x->hash = STREAM_FNV_INIT;
	for (i = 0; x->done < x->total || x->eof; i++) {
		n = x->sizes[i % x->nsizes];
		if (x->done < x->total && n > x->total - x->done)
			n = x->total - x->done;
		ev = stream_wait(x->fd, POLLIN, STREAM_WAIT_MS);
		if (ev <= 0) {
			x->err = ev ? ev : -ETIMEDOUT;
			break;
		}
		r = read(x->fd, buf, n);
		if (r < 0) {
			x->err = -errno;
			break;
		}
		if (r == 0) {
			/* EOF: right only after the last byte. */
			if (x->done < x->total)
				x->err = -ENODATA;
			break;
		}
		if (x->done + r > x->total) {
			x->err = -E2BIG;	/* more than was written */
			break;
		}
		bad = stream_mismatch(buf, r, x->seed, x->done);
		if (bad >= 0) {
			x->err = -EBADMSG;
			x->done += bad;
			break;
		}
		x->hash = stream_fnv1a(x->hash, buf, r);
		x->done += r;
	}
	free(buf);
	return NULL;
}

/* Read sizes unrelated to any write size. */
static const size_t odd_reads[] = { 1, 7, 4093, 65537, 13, 262147, 100, 1000003, 2 };

static void xfer_report(struct __test_metadata *_metadata, const char *what,
			const struct xfer *w, const struct xfer *r)
{
	if (w->err || r->err)
		TH_LOG("%s: writer err %d after %llu B, reader err %d at %llu B",
		       what, w->err, (unsigned long long)w->done, r->err,
		       (unsigned long long)r->done);
}

/* Runs writer @w and reader @r in two threads and checks they agree. */
static void run_one_way(struct __test_metadata *_metadata, struct xfer *w,
			struct xfer *r)
{
	pthread_t tw, tr;

	ASSERT_EQ(0, pthread_create(&tr, NULL, reader, r));
	ASSERT_EQ(0, pthread_create(&tw, NULL, writer, w));
	pthread_join(tr, NULL);
	/* A reader that gave up leaves the writer blocked: wake it. */
	if (r->err)
		shutdown(w->fd, SHUT_RDWR);
	pthread_join(tw, NULL);
	xfer_report(_metadata, "one way", w, r);
	EXPECT_EQ(0, w->err);
	EXPECT_EQ(0, r->err);
	EXPECT_EQ(0, w->short_writes);
	EXPECT_EQ(w->total, w->done);
	EXPECT_EQ(w->total, r->done);
	EXPECT_EQ(w->hash, r->hash);
}

FIXTURE(data)
{
	STREAM_CONN_FIELDS;
};

STREAM_VARIANTS(data);

FIXTURE_SETUP(data)
{
	STREAM_SETUP(self, variant);
}

FIXTURE_TEARDOWN(data)
{
	STREAM_TEARDOWN(self);
}

/* Writes of 1 B, 100 B, 4 KiB, 64 KiB, 1 MiB, 4 MiB; then EOF. */
TEST_F_TIMEOUT(data, write_sizes_client_to_server, 120)
{
	static const size_t all[] = { 1, 100, 4 * KiB, 64 * KiB, MiB, 4 * MiB };
	size_t sizes[6], n = 0, i, max = max_size();
	struct xfer w = { .fd = self->cfd, .seed = 1, .eof = true };
	struct xfer r = { .fd = self->afd, .seed = 1, .eof = true,
			  .sizes = odd_reads, .nsizes = ARRAY_SIZE(odd_reads) };

	for (i = 0; i < ARRAY_SIZE(all); i++) {
		sizes[n++] = all[i] < max ? all[i] : max;
		w.total += sizes[n - 1];
	}
	w.sizes = sizes;
	w.nsizes = n;
	r.total = w.total;
	run_one_way(_metadata, &w, &r);
}

/* The same sizes from the accepting end, read in its own odd sizes. */
TEST_F_TIMEOUT(data, write_sizes_server_to_client, 120)
{
	static const size_t all[] = { 4 * MiB, MiB, 64 * KiB, 4 * KiB, 100, 1 };
	static const size_t reads[] = { 65537, 3, 4093, 1, 999999 };
	size_t sizes[6], n = 0, i, max = max_size();
	struct xfer w = { .fd = self->afd, .seed = 2, .eof = true };
	struct xfer r = { .fd = self->cfd, .seed = 2, .eof = true,
			  .sizes = reads, .nsizes = ARRAY_SIZE(reads) };

	for (i = 0; i < ARRAY_SIZE(all); i++) {
		sizes[n++] = all[i] < max ? all[i] : max;
		w.total += sizes[n - 1];
	}
	w.sizes = sizes;
	w.nsizes = n;
	r.total = w.total;
	run_one_way(_metadata, &w, &r);
}

/* Pseudo-random write sizes from 1 B to 256 KiB mixed in one stream. */
TEST_F_TIMEOUT(data, mixed_sizes, 120)
{
	static const size_t menu[] = { 1, 2, 3, 100, 1023, 4096, 4097, 65535,
				       65536, 65537, 262144 };
	size_t sizes[200], i;
	struct xfer w = { .fd = self->cfd, .seed = 3, .eof = true };
	struct xfer r = { .fd = self->afd, .seed = 3, .eof = true,
			  .sizes = odd_reads, .nsizes = ARRAY_SIZE(odd_reads) };

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		sizes[i] = menu[stream_mix(i) % ARRAY_SIZE(menu)];
	w.sizes = sizes;
	w.nsizes = ARRAY_SIZE(sizes);
	w.total = max_size();
	r.total = w.total;
	run_one_way(_metadata, &w, &r);
}

/*
 * Both ends write and read at once, each with a blocking writer and a
 * blocking reader thread on the same socket: more than the buffers hold
 * in each direction, so a sender blocked for room must not keep the
 * receiver on the same socket from draining.
 */
TEST_F_TIMEOUT(data, both_directions_threads, 120)
{
	static const size_t wsizes[] = { 65536, 1000, 300000 };
	static const size_t rsizes[] = { 4093, 65537, 7 };
	uint64_t total = max_size() / 2;
	struct xfer x[4] = {
		{ .fd = self->cfd, .seed = 4, .sizes = wsizes, .nsizes = 3 },
		{ .fd = self->afd, .seed = 4, .sizes = rsizes, .nsizes = 3 },
		{ .fd = self->afd, .seed = 5, .sizes = wsizes, .nsizes = 3 },
		{ .fd = self->cfd, .seed = 5, .sizes = rsizes, .nsizes = 3 },
	};
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++) {
		x[i].total = total;
		x[i].eof = true;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, i & 1 ? reader : writer, &x[i]));
	}
	/* Readers first: one that gave up leaves a writer blocked. */
	pthread_join(t[1], NULL);
	pthread_join(t[3], NULL);
	if (x[1].err || x[3].err) {
		shutdown(self->cfd, SHUT_RDWR);
		shutdown(self->afd, SHUT_RDWR);
	}
	pthread_join(t[0], NULL);
	pthread_join(t[2], NULL);
	xfer_report(_metadata, "A to B", &x[0], &x[1]);
	xfer_report(_metadata, "B to A", &x[2], &x[3]);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, x[i].err);
		EXPECT_EQ(total, x[i].done);
	}
	EXPECT_EQ(0, x[0].short_writes + x[2].short_writes);
	EXPECT_EQ(x[0].hash, x[1].hash);
	EXPECT_EQ(x[2].hash, x[3].hash);
}

/*
 * Each end runs one non-blocking poll() loop that writes and reads as the
 * socket allows, the way event-driven servers do.
 */
struct duplex {
	int fd;
	uint64_t wseed, rseed, total;
	int err;
	uint64_t sent, rcvd, whash, rhash;
	bool got_eof;
};

#define DUPLEX_WBUF 65536
#define DUPLEX_RBUF 4093

static void *duplex_loop(void *arg)
{
	char *wb = malloc(DUPLEX_WBUF), *rb = malloc(DUPLEX_RBUF);
	struct duplex *d = arg;
	bool shut = false;
	ssize_t n, bad;
	size_t len;
	int ev;

	if (!wb || !rb) {
		d->err = -ENOMEM;
		goto out;
	}
	d->whash = d->rhash = STREAM_FNV_INIT;
	/* Until both directions are done: the peer may finish first. */
	while (!d->got_eof || !shut) {
		ev = stream_wait(d->fd, (d->got_eof ? 0 : POLLIN) | (shut ? 0 : POLLOUT),
				 STREAM_WAIT_MS);
		if (ev <= 0 || (ev & (POLLERR | POLLNVAL))) {
			d->err = ev < 0 ? ev : ev ? -EIO : -ETIMEDOUT;
			break;
		}
		if ((ev & POLLOUT) && !shut) {
			len = d->total - d->sent;
			len = len < DUPLEX_WBUF ? len : DUPLEX_WBUF;
			stream_fill(wb, len, d->wseed, d->sent);
			n = send(d->fd, wb, len, MSG_DONTWAIT);
			if (n < 0 && errno != EAGAIN) {
				d->err = -errno;
				break;
			}
			if (n > 0) {
				d->whash = stream_fnv1a(d->whash, wb, n);
				d->sent += n;
			}
			if (d->sent == d->total) {
				/* Done sending: the peer reads EOF after this. */
				if (shutdown(d->fd, SHUT_WR)) {
					d->err = -errno;
					break;
				}
				shut = true;
			}
		}
		if ((ev & (POLLIN | POLLHUP)) && !d->got_eof) {
			n = recv(d->fd, rb, DUPLEX_RBUF, MSG_DONTWAIT);
			if (n < 0 && errno != EAGAIN) {
				d->err = -errno;
				break;
			}
			if (n == 0)
				d->got_eof = true;
			if (n <= 0)
				continue;
			bad = stream_mismatch(rb, n, d->rseed, d->rcvd);
			if (bad >= 0) {
				d->err = -EBADMSG;
				d->rcvd += bad;
				break;
			}
			d->rhash = stream_fnv1a(d->rhash, rb, n);
			d->rcvd += n;
		}
	}
out:
	/* On error, end the connection so the peer's loop stops too. */
	if (d->err)
		shutdown(d->fd, SHUT_RDWR);
	free(wb);
	free(rb);
	return NULL;
}

TEST_F_TIMEOUT(data, both_directions_poll_loops, 120)
{
	uint64_t total = max_size() / 2;
	struct duplex a = { .fd = self->cfd, .wseed = 6, .rseed = 7, .total = total };
	struct duplex b = { .fd = self->afd, .wseed = 7, .rseed = 6, .total = total };
	pthread_t ta, tb;

	ASSERT_EQ(0, pthread_create(&ta, NULL, duplex_loop, &a));
	ASSERT_EQ(0, pthread_create(&tb, NULL, duplex_loop, &b));
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	if (a.err || b.err)
		TH_LOG("A: err %d sent %llu rcvd %llu; B: err %d sent %llu rcvd %llu",
		       a.err, (unsigned long long)a.sent, (unsigned long long)a.rcvd,
		       b.err, (unsigned long long)b.sent, (unsigned long long)b.rcvd);
	EXPECT_EQ(0, a.err);
	EXPECT_EQ(0, b.err);
	EXPECT_EQ(total, a.sent);
	EXPECT_EQ(total, b.sent);
	EXPECT_EQ(total, a.rcvd);
	EXPECT_EQ(total, b.rcvd);
	EXPECT_EQ(a.whash, b.rhash);
	EXPECT_EQ(b.whash, a.rhash);
}

/*
 * writev() with iovecs of odd sizes (one empty) takes all of them in
 * order; readv() into differently cut iovecs fills them in order.
 */
static const size_t wcut[] = { 1, 13, 4096, 0, 65536, 7, 100000, 3 };
static const size_t rcut[] = { 5, 1, 65539, 333, 8191 };
#define WCUT_SUM (1 + 13 + 4096 + 0 + 65536 + 7 + 100000 + 3)
#define WRITEV_ROUNDS 10

struct vec_writer {
	int fd;
	int err;		/* 0, -errno, or -EMSGSIZE on a short writev() */
	uint64_t hash;
};

static void *vec_writer(void *arg)
{
	struct iovec iov[ARRAY_SIZE(wcut)];
	struct vec_writer *v = arg;
	uint64_t off = 0;
	size_t i, k;
	ssize_t n;

	v->hash = STREAM_FNV_INIT;
	for (i = 0; i < ARRAY_SIZE(wcut); i++) {
		iov[i].iov_base = malloc(wcut[i] + 1);
		iov[i].iov_len = wcut[i];
	}
	for (k = 0; k < WRITEV_ROUNDS && !v->err; k++) {
		for (i = 0; i < ARRAY_SIZE(wcut); i++) {
			stream_fill(iov[i].iov_base, wcut[i], 8, off);
			v->hash = stream_fnv1a(v->hash, iov[i].iov_base, wcut[i]);
			off += wcut[i];
		}
		/* Blocking: all of it, in one call. */
		n = writev(v->fd, iov, ARRAY_SIZE(wcut));
		if (n != WCUT_SUM)
			v->err = n < 0 ? -errno : -EMSGSIZE;
	}
	if (!v->err && shutdown(v->fd, SHUT_WR))
		v->err = -errno;
	for (i = 0; i < ARRAY_SIZE(wcut); i++)
		free(iov[i].iov_base);
	return NULL;
}

TEST_F_TIMEOUT(data, writev_readv, 60)
{
	struct vec_writer v = { .fd = self->cfd };
	struct iovec riov[ARRAY_SIZE(rcut)];
	uint64_t roff = 0, total = (uint64_t)WCUT_SUM * WRITEV_ROUNDS;
	uint64_t rhash = STREAM_FNV_INIT;
	pthread_t t;
	size_t i, m;
	ssize_t n, bad;

	for (i = 0; i < ARRAY_SIZE(rcut); i++) {
		riov[i].iov_base = malloc(rcut[i]);
		riov[i].iov_len = rcut[i];
		ASSERT_NE(NULL, riov[i].iov_base);
	}
	ASSERT_EQ(0, pthread_create(&t, NULL, vec_writer, &v));
	stream_watchdog(50);
	while (roff < total) {
		n = stream_wait(self->afd, POLLIN, STREAM_WAIT_MS);
		if (n != POLLIN)
			break;
		n = readv(self->afd, riov, ARRAY_SIZE(rcut));
		if (n <= 0 || (uint64_t)n > total - roff)
			break;
		/* Gather in iovec order: that is the stream's order. */
		for (i = 0; n > 0; i++) {
			m = (size_t)n < rcut[i] ? (size_t)n : rcut[i];
			bad = stream_mismatch(riov[i].iov_base, m, 8, roff);
			if (bad >= 0) {
				TH_LOG("wrong byte at offset %llu",
				       (unsigned long long)roff + bad);
				break;
			}
			rhash = stream_fnv1a(rhash, riov[i].iov_base, m);
			roff += m;
			n -= m;
		}
		if (n > 0)
			break;
	}
	EXPECT_EQ(total, roff);
	if (roff < total)
		shutdown(self->cfd, SHUT_RDWR);	/* unblock the writer */
	/* Then EOF: the writer shut its side. */
	EXPECT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(0, readv(self->afd, riov, ARRAY_SIZE(rcut)));
	pthread_join(t, NULL);
	stream_watchdog(0);
	EXPECT_EQ(0, v.err);
	EXPECT_EQ(v.hash, rhash);
	for (i = 0; i < ARRAY_SIZE(rcut); i++)
		free(riov[i].iov_base);
}

/*
 * sendmsg()/recvmsg() with iovecs; a stream socket reports no source
 * address (msg_namelen 0, as recvfrom()'s addrlen) and no flags.
 */
TEST_F(data, sendmsg_recvmsg)
{
	char a[10], b[3000], c[1], r1[2000], r2[5000];
	struct iovec wiov[] = { { a, sizeof(a) }, { b, sizeof(b) }, { c, sizeof(c) } };
	struct iovec riov[] = { { r1, sizeof(r1) }, { r2, sizeof(r2) } };
	struct sockaddr_storage from;
	struct msghdr msg = { .msg_iov = wiov, .msg_iovlen = 3 };
	socklen_t fromlen = sizeof(from);
	uint64_t off = 0;
	ssize_t n;

	stream_fill(a, sizeof(a), 9, 0);
	stream_fill(b, sizeof(b), 9, sizeof(a));
	stream_fill(c, sizeof(c), 9, sizeof(a) + sizeof(b));
	ASSERT_EQ(3011, sendmsg(self->cfd, &msg, 0));

	/* Wait for all 3011 bytes, then take them in one recvmsg(). */
	ASSERT_EQ(0, stream_wait_bytes(self->afd, 3011, STREAM_WAIT_MS));
	msg = (struct msghdr){ .msg_iov = riov, .msg_iovlen = 2,
			       .msg_name = &from, .msg_namelen = sizeof(from) };
	n = recvmsg(self->afd, &msg, 0);
	ASSERT_EQ(3011, n);
	EXPECT_EQ(0, msg.msg_namelen);
	EXPECT_EQ(0, msg.msg_flags);
	EXPECT_EQ(-1, stream_mismatch(r1, sizeof(r1), 9, 0));
	EXPECT_EQ(-1, stream_mismatch(r2, 1011, 9, sizeof(r1)));

	/* recvfrom() names no peer on a stream socket either. */
	ASSERT_EQ(0, stream_send_pattern(self->afd, 10, &off, 100, 0));
	ASSERT_EQ(POLLIN, stream_wait(self->cfd, POLLIN, STREAM_WAIT_MS));
	memset(&from, 0xaa, sizeof(from));
	EXPECT_EQ(100, recvfrom(self->cfd, r1, sizeof(r1), 0,
				(struct sockaddr *)&from, &fromlen));
	EXPECT_EQ(0, fromlen);
	EXPECT_EQ(-1, stream_mismatch(r1, 100, 10, 0));
}

/* 10000 writes of 1..64 B, read back in 4093-byte reads: nothing lost. */
TEST_F_TIMEOUT(data, many_small_writes, 120)
{
	static const size_t rsizes[] = { 4093 };
	size_t *sizes = malloc(10000 * sizeof(*sizes));
	struct xfer w = { .fd = self->cfd, .seed = 11, .eof = true };
	struct xfer r = { .fd = self->afd, .seed = 11, .eof = true,
			  .sizes = rsizes, .nsizes = 1 };
	size_t i;

	ASSERT_NE(NULL, sizes);
	for (i = 0; i < 10000; i++) {
		sizes[i] = stream_mix(i + 12345) % 64 + 1;
		w.total += sizes[i];
	}
	w.sizes = sizes;
	w.nsizes = 10000;
	r.total = w.total;
	run_one_way(_metadata, &w, &r);
	free(sizes);
}

/* A read larger than what is there returns what is there, at once. */
TEST_F(data, short_read_returns_available)
{
	size_t len = MiB;
	char *buf = malloc(len);
	uint64_t off = 0;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_send_pattern(self->cfd, 12, &off, 100, 0));
	ASSERT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(100, read(self->afd, buf, len));
	EXPECT_EQ(-1, stream_mismatch(buf, 100, 12, 0));
	/* Nothing more is there. */
	EXPECT_EQ(-1, recv(self->afd, buf, len, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	free(buf);
}

/*
 * Zero-length writes send nothing.  A zero-length read() returns 0 at once
 * (the VFS answers it); a zero-length recv() goes to the protocol, and TCP
 * treats it as any read: EAGAIN on an empty socket with MSG_DONTWAIT (and
 * blocking, without), 0 once data is queued.
 */
TEST_F(data, zero_length_io)
{
	char buf[16];

	EXPECT_EQ(0, write(self->cfd, buf, 0));
	EXPECT_EQ(0, send(self->cfd, NULL, 0, 0));
	EXPECT_EQ(0, stream_wait(self->afd, POLLIN, 200));
	EXPECT_EQ(0, read(self->afd, buf, 0));
	EXPECT_EQ(-1, recv(self->afd, NULL, 0, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);

	ASSERT_EQ(3, write(self->cfd, "abc", 3));
	ASSERT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
	EXPECT_EQ(0, read(self->afd, buf, 0));
	EXPECT_EQ(0, recv(self->afd, NULL, 0, 0));
	EXPECT_EQ(0, recv(self->afd, NULL, 0, MSG_DONTWAIT));
	EXPECT_EQ(3, read(self->afd, buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, "abc", 3));
}

/*
 * The SDP stall watchdog's time limit (a module parameter), lowered while
 * a bad_iovec case runs: sends left without a completion would end the
 * connection (ETIMEDOUT) within the case.
 */
#define STALL_PARAM	"/sys/module/sdp/parameters/tx_stall_timeout_ms"
#define STALL_MS	1000

static int read_param(const char *path, char *buf, int len)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(buf, len, f) != NULL;
	fclose(f);
	return ok ? 0 : -EIO;
}

static int outq(int fd)
{
	int val = -1;

	return ioctl(fd, SIOCOUTQ, &val) ? -errno : val;
}

FIXTURE(bad_iovec)
{
	STREAM_CONN_FIELDS;
	char stall_saved[32];
};

STREAM_VARIANTS(bad_iovec);

FIXTURE_SETUP(bad_iovec)
{
	char ms[16];

	STREAM_SETUP(self, variant);
	if (variant->sdp) {
		ASSERT_EQ(0, read_param(STALL_PARAM, self->stall_saved,
					sizeof(self->stall_saved)));
		snprintf(ms, sizeof(ms), "%d", STALL_MS);
		ASSERT_EQ(0, sdp_set_param("tx_stall_timeout_ms", ms));
	}
}

FIXTURE_TEARDOWN(bad_iovec)
{
	if (self->stall_saved[0])
		sdp_set_param("tx_stall_timeout_ms", self->stall_saved);
	STREAM_TEARDOWN(self);
}

/*
 * A writev() whose second iovec is a bad address returns the bytes of the
 * first, or EFAULT if it sent none (TCP may send fewer than the first: it
 * copies in pieces of its own; SDP sends all of them).  The peer receives
 * exactly those bytes.  Then the connection is healthy: what was sent
 * completes (SIOCOUTQ drains), no error comes in three times the stall
 * time limit, and the stream goes on.  With TCP_MAXSEG at 1000, first
 * iovecs of 1000 .. 8000 bytes end on a message boundary at 8 successive
 * positions, so that in one of them the last message before the bad
 * address is one that asked for no completion (SDP asks for one send in
 * 8).  An iovec that is bad from its first byte sends nothing: EFAULT.
 */
TEST_F_TIMEOUT(bad_iovec, writev_second_iovec_bad, 90)
{
	const int mss = 1000, rounds = 8;
	char *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	char *buf = malloc(rounds * mss);
	uint64_t off = 0, roff = 0;
	struct iovec iov[2];
	int i, err = -1, q = -1;
	socklen_t len = sizeof(err);
	ssize_t n;

	ASSERT_NE(MAP_FAILED, bad);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_TCP, TCP_MAXSEG, &mss, sizeof(mss)));

	for (i = 1; i <= rounds; i++) {
		stream_fill(buf, i * mss, 20, off);
		iov[0] = (struct iovec){ buf, i * mss };
		iov[1] = (struct iovec){ bad, 100 };
		n = writev(self->cfd, iov, 2);
		if (n < 0) {
			EXPECT_EQ(EFAULT, errno);
			n = 0;
		}
		EXPECT_GE(i * mss, n);
		if (variant->sdp)
			EXPECT_EQ(i * mss, n);
		off += n;
		ASSERT_EQ(0, stream_recv_pattern(self->afd, 20, &roff, n, 0));
	}

	/* Bad from the first byte: nothing is sent. */
	iov[0] = (struct iovec){ bad, 100 };
	EXPECT_EQ(-1, writev(self->cfd, iov, 1));
	EXPECT_EQ(EFAULT, errno);

	/* Everything sent completes... */
	for (i = 0; i < STREAM_WAIT_MS / 10; i++) {
		q = outq(self->cfd);
		if (q <= 0)
			break;
		usleep(10000);
	}
	EXPECT_EQ(0, q);
	/* ... and nothing ends the connection later. */
	usleep(3 * STALL_MS * 1000);
	EXPECT_EQ(0, getsockopt(self->cfd, SOL_SOCKET, SO_ERROR, &err, &len));
	EXPECT_EQ(0, err);
	EXPECT_EQ(0, stream_wait(self->cfd, POLLIN, 0));
	EXPECT_EQ(0, stream_wait(self->afd, POLLIN, 0));

	/* The stream goes on where the bytes sent left it, both ways. */
	ASSERT_EQ(0, stream_send_pattern(self->cfd, 20, &off, 5000, 0));
	ASSERT_EQ(0, stream_recv_pattern(self->afd, 20, &roff, 5000, 0));
	EXPECT_EQ(off, roff);
	off = roff = 0;
	ASSERT_EQ(0, stream_send_pattern(self->afd, 21, &off, 5000, 0));
	ASSERT_EQ(0, stream_recv_pattern(self->cfd, 21, &roff, 5000, 0));
	munmap(bad, 4096);
	free(buf);
}


/*
 * A ping-pong whose replies a blocking reader waits for: sdp.ko's
 * recv_poll_us, set while a spin case runs, and what the reader's spins
 * did (RxBusyPolls, RxBusyPollHits in /proc/net/sdpstats).
 */
#define POLL_PARAM	"recv_poll_us"
#define PING		64

FIXTURE(spin)
{
	STREAM_CONN_FIELDS;
	long long poll_saved;
};

STREAM_VARIANTS(spin);

FIXTURE_SETUP(spin)
{
	STREAM_SETUP(self, variant);
	self->poll_saved = sdp_param(POLL_PARAM);
}

FIXTURE_TEARDOWN(spin)
{
	char text[32];

	if (self->poll_saved >= 0) {
		snprintf(text, sizeof(text), "%lld", self->poll_saved);
		sdp_set_param(POLL_PARAM, text);
	}
	STREAM_TEARDOWN(self);
}

/*
 * The other end: reads each ping by poll() and read(), so that it never
 * waits in a blocking read itself, and sends it back after its delay.
 */
struct echo {
	int fd;
	int rounds;
	const unsigned int *delay_ms;	/* per round */
	int unasked;		/* the round whose echo comes twice */
	int err;
};

/*
 * Puts the calling thread on the @nth CPU it may use, if there is one:
 * the reader and the other end on CPUs of their own, so that the other
 * end's wake-ups do not end the reader's spins (the guest has two).
 */
static void pin_to_cpu(int nth)
{
	cpu_set_t allowed, one;
	int cpu;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed) || nth--)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
		return;
	}
}

static void *echo_pings(void *arg)
{
	struct echo *e = arg;
	char buf[PING];
	int i;

	pin_to_cpu(1);
	for (i = 0; i < e->rounds && !e->err; i++) {
		if (stream_read_full(e->fd, buf, PING, 0) != PING) {
			e->err = -EIO;
			break;
		}
		if (e->delay_ms[i])
			usleep(e->delay_ms[i] * 1000);
		e->err = stream_write_all(e->fd, buf, PING, 0);
		if (i == e->unasked && !e->err) {
			usleep(5000);
			e->err = stream_write_all(e->fd, buf, PING, 0);
		}
	}
	return NULL;
}

/* One ping of stream 30 at *@off, and its echo read by a blocking recv(). */
static int ping(int fd, uint64_t *off)
{
	char out[PING], in[PING];

	stream_fill(out, PING, 30, *off);
	*off += PING;
	if (stream_write_all(fd, out, PING, 0))
		return -EIO;
	if (recv(fd, in, PING, MSG_WAITALL) != PING)
		return -errno;
	return memcmp(in, out, PING) ? -EBADMSG : 0;
}

struct spins {
	long long polls, hits;
};

static struct spins spins_now(void)
{
	return (struct spins){ sdp_stat("RxBusyPolls"),
			       sdp_stat("RxBusyPollHits") };
}

/*
 * A blocking reader spins for its replies while they come fast, its data
 * intact, and replies come while it spins.  After a call that waited
 * longer than recv_poll_us, the next call does not spin; one after a
 * short wait does again; a read that follows no send of its own (a
 * stream's reader) does not; recv_poll_us 0 turns it off.
 */
TEST_F_TIMEOUT(spin, reader_spins_while_replies_come_fast, 60)
{
	enum { FAST = 40, OFF = 5 };
	/*
	 * Rounds after the fast ones: two slow, two fast, then OFF; the
	 * fast ones 5 ms late, so that the reader surely waits for them.
	 */
	static const unsigned int slow_ms[] = { 300, 300, 5, 5 };
	unsigned int delay_ms[FAST + 4 + OFF] = { 0 };
	struct echo e = { .fd = self->afd, .delay_ms = delay_ms,
			  .rounds = FAST + 4 + OFF, .unasked = FAST + 3 };
	struct spins s0, s1, step[6];
	char again[PING], want[PING];
	long ms[4];
	struct timeval tv = { .tv_sec = 5 };
	uint64_t off = 0;
	pthread_t t;
	int i, err = 0;

	if (!variant->sdp)
		SKIP(return, "recv_poll_us and its counters are SDP's");
	ASSERT_LE(0, self->poll_saved);
	memcpy(delay_ms + FAST, slow_ms, sizeof(slow_ms));
	ASSERT_EQ(0, setsockopt(self->cfd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)));
	ASSERT_EQ(0, sdp_set_param(POLL_PARAM, "200000"));
	pin_to_cpu(0);
	ASSERT_EQ(0, pthread_create(&t, NULL, echo_pings, &e));

	s0 = spins_now();
	for (i = 0; i < FAST && !err; i++)
		err = ping(self->cfd, &off);
	s1 = spins_now();
	if (!err)
		err = sdp_set_param(POLL_PARAM, "50000");
	step[0] = spins_now();
	for (i = 0; i < 4 && !err; i++) {
		ms[i] = now_ms();
		err = ping(self->cfd, &off);
		ms[i] = now_ms() - ms[i];
		step[i + 1] = spins_now();
	}
	/* The last fast round's echo again, 5 ms later, asked by nobody. */
	if (!err && recv(self->cfd, again, PING, MSG_WAITALL) != PING)
		err = -errno;
	step[5] = spins_now();
	stream_fill(want, PING, 30, off - PING);
	if (!err && memcmp(again, want, PING))
		err = -EBADMSG;
	if (!err)
		err = sdp_set_param(POLL_PARAM, "0");
	for (i = 0; i < OFF && !err; i++)
		err = ping(self->cfd, &off);
	pthread_join(t, NULL);
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, e.err);
	TH_LOG("%d fast pings: %lld spins, %lld of them met the reply",
	       FAST, s1.polls - s0.polls, s1.hits - s0.hits);
	EXPECT_LE(1, s1.hits - s0.hits);
	EXPECT_LE(s1.hits - s0.hits, s1.polls - s0.polls);
	TH_LOG("slow, slow, fast, fast: %ld %ld %ld %ld ms, %lld %lld %lld %lld spins",
	       ms[0], ms[1], ms[2], ms[3], step[1].polls - step[0].polls,
	       step[2].polls - step[1].polls, step[3].polls - step[2].polls,
	       step[4].polls - step[3].polls);

	/* 300 ms late: the reader spins its 50 ms in vain, then sleeps. */
	EXPECT_LE(1, step[1].polls - step[0].polls);
	EXPECT_EQ(0, step[1].hits - step[0].hits);
	/*
	 * After that long wait, no spin, nor in the call after the next
	 * long one; the call after a short wait spins again.
	 */
	EXPECT_EQ(0, step[2].polls - step[1].polls);
	EXPECT_EQ(0, step[3].polls - step[2].polls);
	EXPECT_LE(1, step[4].polls - step[3].polls);
	EXPECT_EQ(0, step[5].polls - step[4].polls);
	/* Off. */
	EXPECT_EQ(0, spins_now().polls - step[5].polls);
}

TEST_HARNESS_MAIN
