/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test bed's two hosts (bed/hosts.env) as socket addresses, for the C
 * tests and tools.  Header-only.
 */
#ifndef SDP_HOSTS_H
#define SDP_HOSTS_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/sdp.h>

#define SDP_A4 "10.99.0.1"
#define SDP_B4 "10.99.0.2"
#define SDP_A6 "fd99::1"
#define SDP_B6 "fd99::2"
#define SDP_A_IF "va"	/* host A's netdev (bed/hosts.env) */
#define SDP_B_IF "vb"	/* host B's */

/*
 * Fills @ss with host 'A' or 'B' and @port.  @family is AF_INET, AF_INET6,
 * or AF_INET6 | SDP_MAPPED for the v4-mapped IPv6 form of the IPv4
 * address.  Returns the address length.
 */
#define SDP_MAPPED 0x10000

static inline socklen_t sdp_host_addr(struct sockaddr_storage *ss, int family,
				      char host, int port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	const char *v4 = host == 'A' ? SDP_A4 : SDP_B4;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		inet_pton(AF_INET, v4, &sin->sin_addr);
		return sizeof(*sin);
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	if (family & SDP_MAPPED) {
		sin6->sin6_addr.s6_addr[10] = 0xff;
		sin6->sin6_addr.s6_addr[11] = 0xff;
		inet_pton(AF_INET, v4, &sin6->sin6_addr.s6_addr[12]);
	} else {
		inet_pton(AF_INET6, host == 'A' ? SDP_A6 : SDP_B6,
			  &sin6->sin6_addr);
	}
	return sizeof(*sin6);
}

static inline int sdp_addr_port(const struct sockaddr_storage *ss)
{
	/* sin_port and sin6_port sit at the same offset */
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* Same family and address; and port, where @port_too. */
static inline int sdp_same_addr(const struct sockaddr_storage *a,
				const struct sockaddr_storage *b, int port_too)
{
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;

	if (a->ss_family != b->ss_family)
		return 0;
	if (port_too && sdp_addr_port(a) != sdp_addr_port(b))
		return 0;
	if (a->ss_family == AF_INET6)
		return !memcmp(&a6->sin6_addr, &b6->sin6_addr, 16);
	return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
}

/*
 * Shared by the stream tests (selftests/stream_*.c).  Every case there runs
 * over real TCP first, the reference that the SDP cases must match, then
 * over SDP on IPv4, IPv6 and v4-mapped IPv6.  The macros use
 * kselftest_harness.h; include it before using them.
 */

/* SIGPIPE counted rather than fatal: catch_sigpipe() zeroes the count. */
static volatile sig_atomic_t sigpipes;

static inline void count_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static inline void catch_sigpipe(void)
{
	struct sigaction sa = { .sa_handler = count_sigpipe };

	sigpipes = 0;
	sigaction(SIGPIPE, &sa, NULL);
}

/* How long a stream test waits for something that should come (ms). */
#define STREAM_WAIT_MS 20000

/* The four variants: @sdp selects AF_INET_SDP over TCP; @family as above. */
#define STREAM_VARIANTS(f)						\
	FIXTURE_VARIANT(f) {						\
		int sdp;						\
		int family;						\
	};								\
	FIXTURE_VARIANT_ADD(f, tcp4) { .sdp = 0, .family = AF_INET };	\
	FIXTURE_VARIANT_ADD(f, sdp4) { .sdp = 1, .family = AF_INET };	\
	FIXTURE_VARIANT_ADD(f, sdp6) { .sdp = 1, .family = AF_INET6 };	\
	FIXTURE_VARIANT_ADD(f, sdp_mapped) {				\
		.sdp = 1, .family = AF_INET6 | SDP_MAPPED		\
	}

/* An integer sysctl, by its /proc/sys path; -1 if it cannot be read. */
static inline int sdp_sysctl_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int val = -1;

	if (f) {
		if (fscanf(f, "%d", &val) != 1)
			val = -1;
		fclose(f);
	}
	return val;
}

/* A counter of /proc/net/sdpstats, or -1. */
static inline long long sdp_stat(const char *name)
{
	FILE *f = fopen("/proc/net/sdpstats", "r");
	long long v, found = -1;
	char key[64];

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

/* A module parameter of sdp.ko (a boolean's Y is 1, N 0), or -1. */
static inline long long sdp_param(const char *name)
{
	char path[128], yn = 0;
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/sdp/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = fscanf(f, "%c", &yn) == 1 && (yn == 'Y' || yn == 'N') ?
		    yn == 'Y' : -1;
	fclose(f);
	return v;
}

/* Sets a module parameter of sdp.ko to @text: 0, or -errno (-EIO). */
static inline int sdp_set_param(const char *name, const char *text)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/module/sdp/parameters/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fputs(text, f) < 0;
	return fclose(f) || ret ? -EIO : 0;
}

/* A blocking SDP stream socket of any address family. */
static inline int sdp_socket(void)
{
	return socket(AF_INET_SDP, SOCK_STREAM, 0);
}

/* An int socket option: its value, -errno, or -EMSGSIZE if not an int. */
static inline int sockopt_get_int(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int val = -1;

	if (getsockopt(fd, level, name, &val, &len))
		return -errno;
	if (len != sizeof(int))
		return -EMSGSIZE;
	return val;
}

/* Sets an int socket option: 0 or -errno. */
static inline int sockopt_set_int(int fd, int level, int name, int val)
{
	return setsockopt(fd, level, name, &val, sizeof(val)) ? -errno : 0;
}

/* The pending error SO_ERROR reports (and clears), or -errno. */
static inline int so_error(int fd)
{
	socklen_t len = sizeof(int);
	int err = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return -errno;
	return err;
}

/* A stream socket of the variant: SDP, or TCP of the address family. */
static inline int stream_socket(int sdp, int family, int flags)
{
	return socket(sdp ? AF_INET_SDP : family & ~SDP_MAPPED,
		      SOCK_STREAM | flags, 0);
}

/*
 * For a FIXTURE_SETUP, after its first stream_socket(): an SDP variant is
 * skipped when the family is unknown, i.e. sdp.ko is not loaded, and for
 * no other reason.  The 6.1 harness runs the test body after a SKIP in
 * setup, so there leave the way a failed ASSERT does; the newer ones
 * (those with FIXTURE_TEARDOWN_PARENT) end a test whose setup skipped.
 */
#ifdef FIXTURE_TEARDOWN_PARENT
#define STREAM_SETUP_LEAVE	return
#else
#define STREAM_SETUP_LEAVE	longjmp(_metadata->env, 1)
#endif

#define STREAM_SKIP_WITHOUT_SDP(sdp, fd)				\
	do {								\
		if ((sdp) && (fd) < 0 && errno == EAFNOSUPPORT)		\
			SKIP(STREAM_SETUP_LEAVE, "sdp.ko not loaded");	\
	} while (0)

/*
 * In a test body: the SDP variants skip, saying why: for what SDP does not
 * do as TCP does yet, and is written down as open work.
 */
#define STREAM_SDP_GAP(why)						\
	do {								\
		if (variant->sdp)					\
			SKIP(return, "%s", why);			\
	} while (0)

/*
 * In a test body that sets SO_REUSEPORT: the SDP variants skip where the
 * kernel refuses the option (EOPNOTSUPP) to a family other than AF_INET
 * and AF_INET6 before the family sees it, as Linux 6.1 does.  Where the
 * kernel lets it through, they run.
 */
static inline int sdp_reuseport_refused(void)
{
	int one = 1, fd = socket(AF_INET_SDP, SOCK_STREAM, 0), refused;

	if (fd < 0)
		return 0;
	refused = setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) &&
		  errno == EOPNOTSUPP;
	close(fd);
	return refused;
}

#define STREAM_SDP_NEEDS_REUSEPORT()					\
	do {								\
		if (variant->sdp && sdp_reuseport_refused())		\
			SKIP(return, "%s", "SO_REUSEPORT: this kernel's " \
			     "socket core refuses it (EOPNOTSUPP) to " \
			     "non-inet families before SDP sees it");	\
	} while (0)

/*
 * The usual fixture: FIXTURE(f) { STREAM_CONN_FIELDS; };  a listener on
 * host B (lfd, at b/blen), a client (cfd) connected to it from host A and
 * the accepted end (afd).  STREAM_SETUP in FIXTURE_SETUP makes them all,
 * STREAM_TEARDOWN closes what is still open.  SIGPIPE is ignored, so that
 * a failed peer makes a write fail rather than kill the test; the cases
 * about SIGPIPE install their own handler.
 */
#define STREAM_CONN_FIELDS						\
	int lfd, cfd, afd;						\
	socklen_t blen;							\
	struct sockaddr_storage b

#define STREAM_SETUP(self, variant)					\
	do {								\
		(self)->cfd = (self)->afd = -1;				\
		signal(SIGPIPE, SIG_IGN);				\
		(self)->lfd = stream_socket((variant)->sdp,		\
					    (variant)->family, 0);	\
		STREAM_SKIP_WITHOUT_SDP((variant)->sdp, (self)->lfd);	\
		ASSERT_LE(0, (self)->lfd);				\
		ASSERT_EQ(0, stream_listen((self)->lfd, (variant)->family, \
					   &(self)->b, &(self)->blen)); \
		ASSERT_EQ(0, stream_connect((variant)->sdp,		\
					    (variant)->family,		\
					    (self)->lfd, &(self)->b,	\
					    (self)->blen, &(self)->cfd,	\
					    &(self)->afd));		\
	} while (0)

#define STREAM_TEARDOWN(self)						\
	do {								\
		stream_close(&(self)->afd);				\
		stream_close(&(self)->cfd);				\
		stream_close(&(self)->lfd);				\
	} while (0)

/*
 * A backstop for blocking calls that poll() cannot bound (MSG_WAITALL,
 * blocking writes): fails the test if it is still running @s seconds on;
 * 0 disarms.  Prints why, then exits 1 ("failed at step #1").
 */
static inline void stream_watchdog_fired(int sig)
{
	static const char msg[] = "# watchdog: a blocking call did not return\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

static inline void stream_watchdog(unsigned int s)
{
	signal(SIGALRM, stream_watchdog_fired);
	alarm(s);
}

/* The monotonic clock in milliseconds. */
static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* The monotonic clock in seconds. */
static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* poll() @fd for @events: the revents, 0 on timeout, or -errno. */
static inline int stream_wait(int fd, short events, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n = poll(&pfd, 1, ms);

	if (n < 0)
		return -errno;
	return n ? pfd.revents : 0;
}

/*
 * Waits, at most @ms, until @fd reports all of @bits (POLLERR and POLLHUP
 * may be among them: poll() reports those unasked).  The revents, those
 * last seen when the time runs out, or -errno.  The clock bounds the
 * wait, not a count of polls: a poll() that returns at once, because
 * other events are ready (unread data, an EOF), does not shorten it.
 */
static inline int stream_wait_bits(int fd, short bits, int ms)
{
	long start = now_ms();
	int ev;

	for (;;) {
		ev = stream_wait(fd, bits, 10);
		if (ev < 0 || (ev & bits) == bits)
			return ev;
		if (now_ms() - start >= ms)
			return ev;
		if (ev)
			usleep(10000);	/* poll() did not wait */
	}
}

/*
 * Waits, at most @ms, until at least @n bytes are queued to read on @fd,
 * peeking (MSG_PEEK counts across writes).  0, -ETIMEDOUT, or -errno.
 */
static inline int stream_wait_bytes(int fd, size_t n, int ms)
{
	char *buf = malloc(n + 1);
	ssize_t got = 0;
	int err = -ETIMEDOUT;

	if (!buf)
		return -ENOMEM;
	for (; ms >= 0; ms--) {
		got = recv(fd, buf, n, MSG_PEEK | MSG_DONTWAIT);
		if (got < 0 && errno != EAGAIN) {
			err = -errno;
			break;
		}
		if (got >= (ssize_t)n) {
			err = 0;
			break;
		}
		if (got == 0 && n) {
			err = -ENODATA;		/* EOF */
			break;
		}
		usleep(1000);
	}
	free(buf);
	return err;
}

/*
 * Binds @fd to host B at an ephemeral port and listens; the bound address
 * in @b and @blen.  0 or -errno.
 */
static inline int stream_listen(int fd, int family,
				struct sockaddr_storage *b, socklen_t *blen)
{
	*blen = sdp_host_addr(b, family, 'B', 0);
	if (bind(fd, (struct sockaddr *)b, *blen) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)b, blen))
		return -errno;
	return 0;
}

/*
 * Connects the unconnected @fd to the listener @lfd at @b and accepts the
 * connection: the accepted socket in *@afd.  0 or -errno.
 */
static inline int stream_connect_fd(int fd, int lfd,
				    const struct sockaddr_storage *b,
				    socklen_t blen, int *afd)
{
	int ev;

	*afd = -1;
	if (connect(fd, (const struct sockaddr *)b, blen))
		return -errno;
	ev = stream_wait(lfd, POLLIN, STREAM_WAIT_MS);
	if (ev <= 0)
		return ev ? ev : -ETIMEDOUT;
	*afd = accept(lfd, NULL, NULL);
	return *afd < 0 ? -errno : 0;
}

/* The same with a new client socket of the variant, in *@cfd. */
static inline int stream_connect(int sdp, int family, int lfd,
				 const struct sockaddr_storage *b,
				 socklen_t blen, int *cfd, int *afd)
{
	int err;

	*afd = -1;
	*cfd = stream_socket(sdp, family, 0);
	if (*cfd < 0)
		return -errno;
	err = stream_connect_fd(*cfd, lfd, b, blen, afd);
	if (err) {
		close(*cfd);
		*cfd = -1;
	}
	return err;
}

/* Closes *@fd if open and marks it closed, so teardown does not again. */
static inline void stream_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * The data of the tests: byte @off of a pseudo-random stream named @seed,
 * so a reader can check any stretch wherever its reads start and end.
 */
static inline uint64_t stream_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;	/* splitmix64 */
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The fuzzers' random numbers: a splitmix64 sequence from *@s. */
static inline uint64_t seq_next(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return stream_mix(*s);
}

/* A number in [0, n). */
static inline uint32_t seq_below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(seq_next(s) % n) : 0;
}

/* True with probability @pct percent. */
static inline int seq_chance(uint64_t *s, unsigned int pct)
{
	return seq_below(s, 100) < pct;
}

static inline void stream_fill(void *buf, size_t len, uint64_t seed,
			       uint64_t off)
{
	unsigned char *p = buf;
	uint64_t w = stream_mix(seed << 40 ^ off >> 3);
	size_t i;

	for (i = 0; i < len; i++, off++) {
		if (i && !(off & 7))
			w = stream_mix(seed << 40 ^ off >> 3);
		p[i] = w >> (off & 7) * 8;
	}
}

/* Where @buf first differs from the stream at @off, or -1 if nowhere. */
static inline ssize_t stream_mismatch(const void *buf, size_t len,
				      uint64_t seed, uint64_t off)
{
	const unsigned char *p = buf;
	uint64_t w = stream_mix(seed << 40 ^ off >> 3);
	size_t i;

	for (i = 0; i < len; i++, off++) {
		if (i && !(off & 7))
			w = stream_mix(seed << 40 ^ off >> 3);
		if (p[i] != (unsigned char)(w >> (off & 7) * 8))
			return i;
	}
	return -1;
}

/* 64-bit FNV-1a over @buf, continuing from @h (start: STREAM_FNV_INIT). */
#define STREAM_FNV_INIT 0xcbf29ce484222325ull

static inline uint64_t stream_fnv1a(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/*
 * Writes all @len bytes of @buf in write()s of at most @chunk bytes
 * (0: as one).  0 or -errno.
 */
static inline int stream_write_all(int fd, const void *buf, size_t len,
				   size_t chunk)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, chunk && chunk < len ? chunk : len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * Reads up to @len bytes into @buf in read()s of at most @chunk bytes
 * (0: any), each after at most STREAM_WAIT_MS of waiting.  Returns the
 * count, short only at EOF, or -errno (-ETIMEDOUT when nothing came).
 */
static inline ssize_t stream_read_full(int fd, void *buf, size_t len,
				       size_t chunk)
{
	char *p = buf;
	size_t got = 0;
	ssize_t n;
	int ev;

	while (got < len) {
		ev = stream_wait(fd, POLLIN, STREAM_WAIT_MS);
		if (ev <= 0)
			return ev ? ev : -ETIMEDOUT;
		n = read(fd, p + got, chunk && chunk < len - got ? chunk : len - got);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		got += n;
	}
	return got;
}

/*
 * Sends @len bytes of stream @seed from offset *@off on, in writes of at
 * most @chunk bytes, and advances *@off.  0 or -errno.
 */
static inline int stream_send_pattern(int fd, uint64_t seed, uint64_t *off,
				      size_t len, size_t chunk)
{
	size_t bsize = chunk && chunk < len ? chunk : len;
	char *buf = malloc(bsize ? bsize : 1);
	int err = 0;
	size_t n;

	if (!buf)
		return -ENOMEM;
	while (len && !err) {
		n = bsize < len ? bsize : len;
		stream_fill(buf, n, seed, *off);
		err = stream_write_all(fd, buf, n, 0);
		if (!err) {
			*off += n;
			len -= n;
		}
	}
	free(buf);
	return err;
}

/*
 * Fills the connection's buffers with stream @seed from *@off on (a peer
 * that does not read): MSG_DONTWAIT sends until EAGAIN, again after 100 ms
 * until it holds (the transport may still be moving data), at most
 * @max bytes in all.  0 once full, -ENOSPC if never, or -errno.
 */
static inline int stream_fill_sndbuf(int fd, uint64_t seed, uint64_t *off,
				     uint64_t max)
{
	char *buf = malloc(65536);
	int err = -ENOSPC, again = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	while (*off < max) {
		stream_fill(buf, 65536, seed, *off);
		n = send(fd, buf, 65536, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			*off += n;
			again = 0;
			continue;
		}
		if (n == 0 || errno != EAGAIN) {
			err = n ? -errno : -EIO;
			break;
		}
		if (again++ == 2) {
			err = 0;
			break;
		}
		usleep(100000);
	}
	free(buf);
	return err;
}

/*
 * Receives @len bytes of stream @seed from offset *@off on, in reads of at
 * most @chunk bytes, checks them, and advances *@off.  0, -ENODATA at an
 * early EOF, -EBADMSG at a wrong byte (*@off then says where), or -errno.
 */
static inline int stream_recv_pattern(int fd, uint64_t seed, uint64_t *off,
				      size_t len, size_t chunk)
{
	size_t want, bsize = chunk && chunk < len ? chunk : len;
	char *buf = malloc(bsize ? bsize : 1);
	ssize_t n, bad;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (len && !err) {
		want = bsize < len ? bsize : len;
		n = stream_read_full(fd, buf, want, 0);
		if (n < 0) {
			err = n;
			break;
		}
		bad = stream_mismatch(buf, n, seed, *off);
		if (bad >= 0) {
			*off += bad;
			err = -EBADMSG;
			break;
		}
		*off += n;
		len -= n;
		if ((size_t)n < want)
			err = -ENODATA;		/* EOF before @len */
	}
	free(buf);
	return err;
}

#endif /* SDP_HOSTS_H */
