// SPDX-License-Identifier: GPL-2.0
/*
 * stream_misc: stream sockets with the rest of the system, over real TCP
 * (the reference) and over SDP on IPv4, IPv6 and v4-mapped IPv6:
 * sendfile() from a file (whole, and a range by offset), splice() socket
 * to pipe to file and file to pipe to socket (SDP sends the file's pages
 * without copying them: TxZcopyBytes), sockets inherited across
 * fork() and exec(), dup(), and non-blocking mode through fcntl() and
 * FIONBIO.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

#define FILE_SIZE (1 << 20)

/* An unlinked temporary file holding @len bytes of stream @seed. */
static int pattern_file(uint64_t seed, size_t len)
{
	char path[] = "/tmp/sdp-stream-XXXXXX", buf[65536];
	size_t off, n;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	unlink(path);
	for (off = 0; off < len; off += n) {
		n = len - off < sizeof(buf) ? len - off : sizeof(buf);
		stream_fill(buf, n, seed, off);
		if (pwrite(fd, buf, n, off) != (ssize_t)n) {
			close(fd);
			return -EIO;
		}
	}
	return fd;
}

/* A thread that receives @len bytes of stream @seed from @off on, then EOF. */
struct receiver {
	int fd;
	uint64_t seed, off;
	size_t len;
	int err;
	int eof;	/* 1 if EOF came right after */
};

static void *receive(void *arg)
{
	struct receiver *r = arg;
	char c;

	r->err = stream_recv_pattern(r->fd, r->seed, &r->off, r->len, 65537);
	if (!r->err && stream_wait(r->fd, POLLIN, STREAM_WAIT_MS) > 0)
		r->eof = recv(r->fd, &c, 1, 0) == 0;
	return NULL;
}

/* Bytes SDP sent from pages it did not copy (/proc/net/sdpstats). */
static long long zcopy_bytes(void)
{
	long long v = sdp_stat("TxZcopyBytes");

	return v < 0 ? 0 : v;
}

/*
 * Over SDP, the file's pages that sendfile() and splice() hand over went
 * without a copy: all of them but what joined bytes copied before.
 */
#define EXPECT_SPLICED(zc0, len)					\
	do {								\
		if (variant->sdp)					\
			EXPECT_LE((long long)(len) / 2, zcopy_bytes() - (zc0)); \
	} while (0)

/* A thread that sends @len bytes of stream @seed, then shuts down. */
struct sender {
	int fd;
	uint64_t seed;
	size_t len;
	int err;
};

static void *send_all(void *arg)
{
	struct sender *s = arg;
	uint64_t off = 0;

	s->err = stream_send_pattern(s->fd, s->seed, &off, s->len, 100000);
	if (!s->err && shutdown(s->fd, SHUT_WR))
		s->err = -errno;
	return NULL;
}

FIXTURE(misc)
{
	STREAM_CONN_FIELDS;
};

STREAM_VARIANTS(misc);

FIXTURE_SETUP(misc)
{
	STREAM_SETUP(self, variant);
}

FIXTURE_TEARDOWN(misc)
{
	STREAM_TEARDOWN(self);
}

/* sendfile() of a whole 1 MiB file; the file position moves with it. */
TEST_F_TIMEOUT(misc, sendfile_whole_file, 120)
{
	struct receiver r = { .fd = self->afd, .seed = 1, .len = FILE_SIZE };
	long long zc0 = zcopy_bytes();
	size_t left = FILE_SIZE;
	pthread_t t;
	ssize_t n;
	int fd;

	fd = pattern_file(1, FILE_SIZE);
	ASSERT_LE(0, fd);
	stream_watchdog(100);
	ASSERT_EQ(0, pthread_create(&t, NULL, receive, &r));
	while (left) {
		n = sendfile(self->cfd, fd, NULL, left);
		if (n <= 0)
			break;
		left -= n;
	}
	EXPECT_EQ(0, left);
	EXPECT_EQ(FILE_SIZE, lseek(fd, 0, SEEK_CUR));
	EXPECT_EQ(0, shutdown(self->cfd, SHUT_WR));
	pthread_join(t, NULL);
	stream_watchdog(0);
	EXPECT_EQ(0, r.err);
	EXPECT_EQ(FILE_SIZE, r.off);
	EXPECT_EQ(1, r.eof);
	EXPECT_SPLICED(zc0, FILE_SIZE);
	close(fd);
}

/* sendfile() of a range by offset: the offset moves, the position not. */
TEST_F_TIMEOUT(misc, sendfile_range, 60)
{
	struct receiver r = { .fd = self->afd, .seed = 2, .off = 12345, .len = 100000 };
	off_t off = 12345;
	pthread_t t;
	ssize_t n;
	int fd;

	fd = pattern_file(2, FILE_SIZE);
	ASSERT_LE(0, fd);
	stream_watchdog(50);
	ASSERT_EQ(0, pthread_create(&t, NULL, receive, &r));
	while (off < 12345 + 100000) {
		n = sendfile(self->cfd, fd, &off, 12345 + 100000 - off);
		if (n <= 0)
			break;
	}
	EXPECT_EQ(12345 + 100000, off);
	EXPECT_EQ(0, lseek(fd, 0, SEEK_CUR));
	EXPECT_EQ(0, shutdown(self->cfd, SHUT_WR));
	pthread_join(t, NULL);
	stream_watchdog(0);
	EXPECT_EQ(0, r.err);
	EXPECT_EQ(12345 + 100000, r.off);
	EXPECT_EQ(1, r.eof);
	close(fd);
}

/* splice() socket -> pipe -> file, until EOF; the file holds it all. */
TEST_F_TIMEOUT(misc, splice_socket_to_file, 60)
{
	struct sender s = { .fd = self->cfd, .seed = 3, .len = 512 * 1024 };
	size_t total = 0, inpipe, got;
	char *buf = malloc(s.len);
	int p[2], fd;
	pthread_t t;
	ssize_t n;

	ASSERT_NE(NULL, buf);
	fd = pattern_file(0, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(p));
	stream_watchdog(50);
	ASSERT_EQ(0, pthread_create(&t, NULL, send_all, &s));
	for (;;) {
		ASSERT_LT(0, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS));
		n = splice(self->afd, NULL, p[1], NULL, 65536, SPLICE_F_MOVE);
		ASSERT_LE(0, n);
		if (n == 0)
			break;		/* EOF */
		got = n;
		for (inpipe = got; inpipe; inpipe -= n) {
			n = splice(p[0], NULL, fd, NULL, inpipe, SPLICE_F_MOVE);
			ASSERT_LT(0, n);
		}
		total += got;
	}
	pthread_join(t, NULL);
	stream_watchdog(0);
	EXPECT_EQ(0, s.err);
	EXPECT_EQ(s.len, total);
	EXPECT_EQ((off_t)s.len, lseek(fd, 0, SEEK_CUR));
	EXPECT_EQ((ssize_t)s.len, pread(fd, buf, s.len, 0));
	EXPECT_EQ(-1, stream_mismatch(buf, s.len, 3, 0));
	close(p[0]);
	close(p[1]);
	close(fd);
	free(buf);
}

/* splice() file -> pipe -> socket; the reader gets the file. */
TEST_F_TIMEOUT(misc, splice_file_to_socket, 60)
{
	struct receiver r = { .fd = self->afd, .seed = 4, .len = 512 * 1024 };
	long long zc0 = zcopy_bytes();
	loff_t off = 0;
	size_t inpipe;
	int p[2], fd;
	pthread_t t;
	ssize_t n;

	fd = pattern_file(4, r.len);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(p));
	stream_watchdog(50);
	ASSERT_EQ(0, pthread_create(&t, NULL, receive, &r));
	while ((size_t)off < r.len) {
		n = splice(fd, &off, p[1], NULL, 65536, SPLICE_F_MOVE);
		ASSERT_LT(0, n);
		for (inpipe = n; inpipe; inpipe -= n) {
			n = splice(p[0], NULL, self->cfd, NULL, inpipe, SPLICE_F_MOVE);
			ASSERT_LT(0, n);
		}
	}
	EXPECT_EQ(0, shutdown(self->cfd, SHUT_WR));
	pthread_join(t, NULL);
	stream_watchdog(0);
	EXPECT_EQ(0, r.err);
	EXPECT_EQ(r.len, r.off);
	EXPECT_EQ(1, r.eof);
	EXPECT_SPLICED(zc0, r.len);
	close(p[0]);
	close(p[1]);
	close(fd);
}

/*
 * A forked child shares the connection: it writes, the parent closes its
 * copy (no EOF for the peer: the child still holds one), the child still
 * reads and writes, and only its exit ends the connection.
 */
TEST_F_TIMEOUT(misc, fork_inherits_connection, 60)
{
	uint64_t roff = 0, off = 0;
	int go[2], status;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint64_t o = 0, ro = 0;

		alarm(50);
		close(go[1]);
		if (stream_send_pattern(self->cfd, 5, &o, 65536, 0))
			_exit(1);
		/* Wait until the parent has closed its copy. */
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		if (stream_recv_pattern(self->cfd, 6, &ro, 1000, 0))
			_exit(3);
		if (stream_send_pattern(self->cfd, 5, &o, 65536, 0))
			_exit(4);
		_exit(0);
	}
	close(go[0]);
	stream_close(&self->cfd);

	EXPECT_EQ(0, stream_recv_pattern(self->afd, 5, &roff, 65536, 4093));
	/* Our close sent nothing: no EOF here. */
	EXPECT_EQ(0, stream_wait(self->afd, POLLIN | POLLRDHUP, 200));
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(0, stream_send_pattern(self->afd, 6, &off, 1000, 0));
	EXPECT_EQ(0, stream_recv_pattern(self->afd, 5, &roff, 65536, 4093));
	/* The child's exit closes the last reference: EOF. */
	ASSERT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS) & POLLIN);
	EXPECT_EQ(0, recv(self->afd, &c, 1, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	close(go[1]);
}

/* A socket as a program's standard output, across exec(). */
TEST_F(misc, exec_inherits_connection)
{
	char buf[64];
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (dup2(self->cfd, 1) != 1)
			_exit(126);
		execl("/bin/echo", "echo", "hello from exec", (char *)NULL);
		_exit(127);
	}
	stream_close(&self->cfd);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(16, stream_read_full(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(0, memcmp(buf, "hello from exec\n", 16));
}

/* dup(): either descriptor works; the connection ends with the last. */
TEST_F(misc, dup_shares_connection)
{
	char buf[8];
	int fd2;

	fd2 = dup(self->cfd);
	ASSERT_LE(0, fd2);
	stream_close(&self->cfd);
	EXPECT_EQ(0, stream_wait(self->afd, POLLIN, 200));
	ASSERT_EQ(3, write(fd2, "dup", 3));
	EXPECT_EQ(3, stream_read_full(self->afd, buf, 3, 0));
	ASSERT_EQ(2, write(self->afd, "ok", 2));
	EXPECT_EQ(2, stream_read_full(fd2, buf, 2, 0));
	close(fd2);
	ASSERT_EQ(POLLIN, stream_wait(self->afd, POLLIN, STREAM_WAIT_MS) & POLLIN);
	EXPECT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
}

/*
 * O_NONBLOCK through fcntl() and through FIONBIO is the same flag; the
 * SOCK_NONBLOCK and SOCK_CLOEXEC of socket() and accept4() set them too.
 */
TEST_F(misc, nonblocking_fcntl_and_fionbio)
{
	int on = 1, off = 0, fl, fd, afd;
	char buf[8];

	fl = fcntl(self->afd, F_GETFL);
	ASSERT_LE(0, fl);
	EXPECT_EQ(0, fl & O_NONBLOCK);
	ASSERT_EQ(0, ioctl(self->afd, FIONBIO, &on));
	EXPECT_EQ(O_NONBLOCK, fcntl(self->afd, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(-1, read(self->afd, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, ioctl(self->afd, FIONBIO, &off));
	EXPECT_EQ(0, fcntl(self->afd, F_GETFL) & O_NONBLOCK);
	ASSERT_EQ(0, fcntl(self->afd, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(-1, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, fcntl(self->afd, F_SETFL, fl));

	fd = stream_socket(variant->sdp, variant->family, SOCK_NONBLOCK | SOCK_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(O_NONBLOCK, fcntl(fd, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD));
	EXPECT_EQ(0, fcntl(fd, F_SETFL, 0));
	ASSERT_EQ(0, connect(fd, (struct sockaddr *)&self->b, self->blen));
	ASSERT_EQ(POLLIN, stream_wait(self->lfd, POLLIN, STREAM_WAIT_MS));
	afd = accept4(self->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	ASSERT_LE(0, afd);
	EXPECT_EQ(O_NONBLOCK, fcntl(afd, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(FD_CLOEXEC, fcntl(afd, F_GETFD));
	EXPECT_EQ(-1, recv(afd, buf, sizeof(buf), 0));
	EXPECT_EQ(EAGAIN, errno);
	close(afd);
	close(fd);
}

TEST_HARNESS_MAIN
