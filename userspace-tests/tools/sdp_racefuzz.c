// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_racefuzz: a fuzzer of races between socket calls.  For each case,
 * from its seed, a few SDP sockets (a listener on host B, connected pairs
 * from host A to it, sockets being made) sit in a table that THREADS
 * threads, and now and then a forked child sharing them, hit at once with
 * random calls: connect, accept, send and recv with their flags,
 * sendfile, splice, poll, epoll (two epoll sets shared by all), shutdown,
 * close, dup, setsockopt and getsockopt at every level (random options
 * and lengths too), ioctls, listen and bind; fallback to TCP on and off,
 * ports with and without a listener, a peer that closes or resets
 * (SO_LINGER 0) meanwhile.
 *
 *   sdp_racefuzz [-s SEED] [-n COUNT] [-p PORT] [-t CASE_MS] [-j THREADS] [-v]
 *
 * Case i has the seed SEED + i; its calls are the seed's, their
 * interleaving the scheduler's.  A case fails when a call does not
 * return by the end of the case (all sockets are shut down then, which
 * wakes any blocked call; a thread still inside a call 10 s later has
 * hung), when a call fails with an errno no socket call may give for
 * valid arguments (EFAULT, EIO); the run fails when an SDP socket of its
 * ports is left 120 s after the last case (cases take ports of their own
 * in turn, so a socket whose teardown takes long does not hold up the
 * next).  What the kernel logs meanwhile (KASAN, lockdep, ...) run-tests
 * checks.  Prints the command that
 * replays a failed case, and a summary.  Exits 0 when no case failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/wait.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>

#include "sdp_hosts.h"

#define SLOTS		12	/* the sockets of a case */
#define MAX_THREADS	8
#define MAX_FD		4096	/* above every fd a case makes */
#define BUF_SIZE	(256 << 10)
#define CASE_PORTS	5	/* a case's: the listener's, one with none, 3 more */
#define PORT_SETS	20	/* cases in turn on ports of their own */
#define LEFT_MS		120000	/* the wait for the last sockets to go */

struct fz;

struct worker {
	struct fz *f;
	pthread_t thread;
	uint64_t rng;
	atomic_int in_call;	/* the op it is in, or -1 */
	int started;
};

struct fz {
	uint64_t seed;
	int port;		/* the listener's; port + 1 has none */
	atomic_int slot[SLOTS];
	int epfd[2];
	int memfd;		/* sendfile's source */
	atomic_int stop;
	atomic_int bad;
	char why[200];
	pthread_mutex_t lock;	/* why */
	int fd_floor;		/* every fd from here on is the case's */
	struct worker w[MAX_THREADS];
	int nthreads;
};

enum op {
	OP_SOCKET, OP_CONNECT, OP_ACCEPT, OP_LISTEN, OP_SEND, OP_RECV,
	OP_SENDFILE, OP_SPLICE, OP_POLL, OP_EPOLL_CTL, OP_EPOLL_WAIT,
	OP_SHUTDOWN, OP_CLOSE, OP_DUP, OP_SETSOCKOPT, OP_GETSOCKOPT,
	OP_IOCTL, OP_NAMES, OP_ABORT, OP_N
};

static const char *const op_names[OP_N] = {
	"socket", "connect", "accept", "listen", "send", "recv", "sendfile",
	"splice", "poll", "epoll_ctl", "epoll_wait", "shutdown", "close",
	"dup", "setsockopt", "getsockopt", "ioctl", "getsockname",
	"abort",
};

static atomic_ulong op_count[OP_N];

/* Puts @fd in a slot of the table (the end of the case closes it). */
static void keep_fd(struct fz *f, int fd, int slot)
{
	atomic_store(&f->slot[slot], fd);
}

static void bad_errno(struct fz *f, enum op op, int err)
{
	if (err != EFAULT && err != EIO)
		return;
	pthread_mutex_lock(&f->lock);
	if (!atomic_exchange(&f->bad, 1))
		snprintf(f->why, sizeof(f->why), "%s: %s", op_names[op],
			 strerror(err));
	pthread_mutex_unlock(&f->lock);
}

/* Short timeouts, so that blocking calls return within the case. */
static void bound(int fd, int ms)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = ms * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int new_socket(struct worker *w)
{
	int fd = socket(AF_INET_SDP, SOCK_STREAM |
			(seq_chance(&w->rng, 30) ? SOCK_NONBLOCK : 0), 0);
	int v = seq_chance(&w->rng, 50);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SDP, SDP_FALLBACK, &v, sizeof(v));
	bound(fd, 50 + seq_below(&w->rng, 300));
	return fd;
}

/* A random level, option and length: most of them real ones. */
static void sockopt(struct worker *w, int fd, int set)
{
	static const int so[] = { SO_RCVBUF, SO_SNDBUF, SO_LINGER,
				  SO_KEEPALIVE, SO_RCVTIMEO, SO_SNDTIMEO,
				  SO_RCVLOWAT, SO_ERROR, SO_TYPE, SO_REUSEADDR,
				  SO_REUSEPORT, SO_BINDTODEVICE, SO_MARK,
				  SO_PRIORITY, SO_BUSY_POLL, SO_ZEROCOPY,
				  SO_SNDLOWAT, SO_OOBINLINE, SO_DOMAIN,
				  SO_PROTOCOL, SO_ACCEPTCONN, SO_PEERCRED };
	static const int tcp[] = { TCP_NODELAY, TCP_CORK, TCP_USER_TIMEOUT,
				   TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT,
				   TCP_MAXSEG, TCP_INFO, TCP_QUICKACK,
				   TCP_DEFER_ACCEPT, TCP_CONGESTION,
				   TCP_NOTSENT_LOWAT, TCP_MD5SIG };
	char buf[256];
	socklen_t len = seq_below(&w->rng, 4) ? 4 : seq_below(&w->rng, sizeof(buf));
	int level, name, ret;

	switch (seq_below(&w->rng, 5)) {
	case 0:
	case 1:
		level = SOL_SOCKET;
		name = so[seq_below(&w->rng, sizeof(so) / sizeof(so[0]))];
		break;
	case 2:
		level = SOL_TCP;
		name = tcp[seq_below(&w->rng, sizeof(tcp) / sizeof(tcp[0]))];
		break;
	case 3:
		level = SOL_SDP;
		name = seq_below(&w->rng, 6);
		break;
	default:
		level = seq_chance(&w->rng, 50) ? SOL_IP : seq_below(&w->rng, 300);
		name = seq_below(&w->rng, 80);
		break;
	}
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = seq_chance(&w->rng, 70) ? 0 : seq_below(&w->rng, 256);
	if (len >= 4 && seq_chance(&w->rng, 60))	/* a small value */
		*(int *)buf = seq_below(&w->rng, 3) ? (int)seq_below(&w->rng, 2) :
			      (int)seq_below(&w->rng, 1 << 20);
	if (name == SO_RCVTIMEO || name == SO_SNDTIMEO) {
		/* (never unbounded: the case's end must wake every call) */
		struct timeval tv = { 0, 1000 * (1 + seq_below(&w->rng, 300)) };

		memcpy(buf, &tv, sizeof(tv));
		len = sizeof(tv);
	}
	if (set) {
		ret = setsockopt(fd, level, name, buf, len);
	} else {
		ret = getsockopt(fd, level, name, buf, &len);
	}
	if (ret && errno == EFAULT)
		bad_errno(w->f, set ? OP_SETSOCKOPT : OP_GETSOCKOPT, errno);
}

/* One random call on a random socket of the table. */
static void one_op(struct worker *w, char *buf)
{
	struct fz *f = w->f;
	int s = seq_below(&w->rng, SLOTS), fd = atomic_load(&f->slot[s]);
	enum op op = seq_below(&w->rng, OP_N);
	struct sockaddr_storage a;
	socklen_t alen;
	int flags, v, ret = 0, fd2;
	size_t n = 1 + seq_below(&w->rng, BUF_SIZE);

	if (seq_chance(&w->rng, 50))
		n = 1 + seq_below(&w->rng, 4096);
	atomic_store(&w->in_call, op);
	op_count[op]++;
	errno = 0;
	switch (op) {
	case OP_SOCKET:
		fd2 = new_socket(w);
		if (fd2 >= 0)
			keep_fd(f, fd2, s);
		break;
	case OP_CONNECT:
		/* the listener's port, or one with none (fallback, refusal) */
		alen = sdp_host_addr(&a, seq_chance(&w->rng, 80) ? AF_INET :
				     AF_INET6 | SDP_MAPPED, 'B',
				     f->port + seq_chance(&w->rng, 20));
		ret = connect(fd, (struct sockaddr *)&a, alen);
		break;
	case OP_ACCEPT:
		fd2 = accept4(fd, NULL, NULL, seq_chance(&w->rng, 50) ?
			      SOCK_NONBLOCK : 0);
		if (fd2 >= 0) {
			bound(fd2, 50 + seq_below(&w->rng, 300));
			keep_fd(f, fd2, seq_below(&w->rng, SLOTS));
		}
		ret = fd2 < 0 ? -1 : 0;
		break;
	case OP_LISTEN:
		if (seq_chance(&w->rng, 50)) {
			alen = sdp_host_addr(&a, AF_INET, 'B',
					     f->port + 2 + seq_below(&w->rng, 3));
			bind(fd, (struct sockaddr *)&a, alen);
		}
		ret = listen(fd, seq_below(&w->rng, 8));
		break;
	case OP_SEND:
		flags = MSG_NOSIGNAL | (seq_chance(&w->rng, 40) ? MSG_DONTWAIT : 0) |
			(seq_chance(&w->rng, 10) ? MSG_MORE : 0);
		ret = send(fd, buf, n, flags);
		break;
	case OP_RECV:
		flags = (seq_chance(&w->rng, 40) ? MSG_DONTWAIT : 0) |
			(seq_chance(&w->rng, 15) ? MSG_PEEK : 0) |
			(seq_chance(&w->rng, 10) ? MSG_WAITALL : 0) |
			(seq_chance(&w->rng, 3) ? MSG_OOB : 0) |
			(seq_chance(&w->rng, 3) ? MSG_TRUNC : 0);
		ret = recv(fd, buf, n, flags);
		break;
	case OP_SENDFILE: {
		off_t off = seq_below(&w->rng, BUF_SIZE / 2);

		ret = sendfile(fd, f->memfd, &off, n);
		break;
	}
	case OP_SPLICE: {
		int p[2];

		if (pipe2(p, O_NONBLOCK))
			break;
		if (seq_chance(&w->rng, 50)) {
			ret = splice(fd, NULL, p[1], NULL, n,
				     SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		} else {
			(void)!write(p[1], buf, n > 65536 ? 65536 : n);
			ret = splice(p[0], NULL, fd, NULL, n,
				     seq_chance(&w->rng, 50) ? SPLICE_F_MORE : 0);
		}
		close(p[0]);
		close(p[1]);
		break;
	}
	case OP_POLL: {
		struct pollfd pfd[2] = {
			{ .fd = fd, .events = POLLIN | POLLOUT | POLLRDHUP | POLLPRI },
			{ .fd = atomic_load(&f->slot[seq_below(&w->rng, SLOTS)]),
			  .events = POLLIN },
		};

		ret = poll(pfd, 2, seq_below(&w->rng, 30));
		break;
	}
	case OP_EPOLL_CTL: {
		struct epoll_event ev = {
			.events = (seq_chance(&w->rng, 50) ? EPOLLIN : EPOLLOUT) |
				  (seq_chance(&w->rng, 30) ? EPOLLET : 0) |
				  (seq_chance(&w->rng, 20) ? EPOLLONESHOT : 0) |
				  (seq_chance(&w->rng, 20) ? EPOLLEXCLUSIVE : 0) |
				  EPOLLRDHUP,
			.data.fd = fd,
		};

		ret = epoll_ctl(f->epfd[seq_below(&w->rng, 2)],
				EPOLL_CTL_ADD + seq_below(&w->rng, 3), fd, &ev);
		break;
	}
	case OP_EPOLL_WAIT: {
		struct epoll_event ev[8];

		ret = epoll_wait(f->epfd[seq_below(&w->rng, 2)], ev, 8,
				 seq_below(&w->rng, 30));
		break;
	}
	case OP_SHUTDOWN:
		ret = shutdown(fd, seq_below(&w->rng, 3));
		break;
	case OP_CLOSE:
		if (seq_chance(&w->rng, 50))	/* (the peer goes, or we do) */
			ret = close(fd);
		break;
	case OP_DUP:
		fd2 = dup(fd);
		if (fd2 >= 0)
			keep_fd(f, fd2, seq_below(&w->rng, SLOTS));
		break;
	case OP_SETSOCKOPT:
	case OP_GETSOCKOPT:
		sockopt(w, fd, op == OP_SETSOCKOPT);
		break;
	case OP_IOCTL:
		switch (seq_below(&w->rng, 4)) {
		case 0:
			ret = ioctl(fd, SIOCINQ, &v);
			break;
		case 1:
			ret = ioctl(fd, SIOCOUTQ, &v);
			break;
		case 2:
			v = seq_chance(&w->rng, 50);
			ret = ioctl(fd, FIONBIO, &v);
			break;
		default:
			ret = ioctl(fd, SIOCATMARK, &v);
			break;
		}
		break;
	case OP_NAMES:
		alen = seq_below(&w->rng, 4) ? sizeof(a) : seq_below(&w->rng, sizeof(a));
		ret = seq_chance(&w->rng, 50) ?
		      getsockname(fd, (struct sockaddr *)&a, &alen) :
		      getpeername(fd, (struct sockaddr *)&a, &alen);
		break;
	case OP_ABORT: {
		/* a reset: SO_LINGER 0, then close */
		struct linger l = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		if (seq_chance(&w->rng, 50))
			ret = close(fd);
		break;
	}
	default:
		break;
	}
	if (ret < 0 && fd >= 0)
		bad_errno(f, op, errno);
	atomic_store(&w->in_call, -1);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char *buf = malloc(BUF_SIZE);

	if (!buf)
		return NULL;
	memset(buf, 'r', BUF_SIZE);
	while (!atomic_load(&w->f->stop))
		one_op(w, buf);
	free(buf);
	return NULL;
}

/* The table to start from: a listener, pairs connected to it, spares. */
static int setup(struct fz *f, uint64_t *rng)
{
	struct sockaddr_storage b;
	socklen_t blen = sdp_host_addr(&b, AF_INET, 'B', f->port);
	struct worker w0 = { .f = f, .rng = seq_next(rng) };
	int lfd, i, one = 1;

	lfd = socket(AF_INET_SDP, SOCK_STREAM, 0);
	if (lfd < 0)
		return -1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&b, blen) || listen(lfd, 16)) {
		close(lfd);
		return -1;
	}
	bound(lfd, 200);
	keep_fd(f, lfd, 0);
	for (i = 1; i < SLOTS; i += 2) {
		int c = new_socket(&w0), a;
		int fl;

		if (c < 0)
			return -1;
		keep_fd(f, c, i);
		fl = fcntl(c, F_GETFL);
		fcntl(c, F_SETFL, fl & ~O_NONBLOCK);
		if (connect(c, (struct sockaddr *)&b, blen))
			continue;
		a = accept(lfd, NULL, NULL);
		if (a >= 0) {
			bound(a, 50 + seq_below(rng, 300));
			keep_fd(f, a, i + 1);
		}
	}
	f->epfd[0] = epoll_create1(0);
	f->epfd[1] = epoll_create1(0);
	f->memfd = memfd_create("sdp_racefuzz", 0);
	if (f->memfd >= 0 && ftruncate(f->memfd, BUF_SIZE))
		return -1;
	return f->epfd[0] < 0 || f->epfd[1] < 0 || f->memfd < 0 ? -1 : 0;
}

/*
 * The SDP sockets (/proc/net/sdp, as tcp's) on ports [@port, @port + @n):
 * their count, each line printed when @say.
 */
static int port_socks(int port, int n, int say)
{
	char line[512];
	int count = 0, p;
	FILE *fp = fopen("/proc/net/sdp", "r");

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		char local[64], remote[64];

		if (sscanf(line, "%*s %63s %63s", local, remote) != 2)
			continue;
		for (p = port; p < port + n; p++) {
			char want[8];

			snprintf(want, sizeof(want), ":%04X", p);
			if (strstr(local, want) || strstr(remote, want)) {
				if (say)
					printf("sdp_racefuzz: left: %s", line);
				count++;
				break;
			}
		}
	}
	fclose(fp);
	return count;
}

/*
 * Runs the workers (and a forked child with its own) for @ms; returns
 * 0, or -1 with the reason in f->why.
 */
static int run_case(struct fz *f, int ms, int threads)
{
	uint64_t rng = stream_mix(f->seed);
	pid_t child = -1;
	long until;
	int i, status, stuck = -1;

	pthread_mutex_init(&f->lock, NULL);
	f->fd_floor = fcntl(0, F_DUPFD, 3);	/* the lowest fd free */
	close(f->fd_floor);
	for (i = 0; i < SLOTS; i++)
		atomic_store(&f->slot[i], -1);
	f->epfd[0] = f->epfd[1] = f->memfd = -1;
	if (setup(f, &rng)) {
		snprintf(f->why, sizeof(f->why), "setup: %s", strerror(errno));
		goto out;
	}
	f->nthreads = 1 + seq_below(&rng, threads);
	if (seq_chance(&rng, 20)) {
		child = fork();
		if (child == 0) {	/* the same sockets, from another process */
			struct worker cw = { .f = f, .rng = seq_next(&rng) };
			char *buf = malloc(BUF_SIZE);
			long end = now_ms() + ms / 2;

			if (buf) {
				memset(buf, 'c', BUF_SIZE);
				while (now_ms() < end)
					one_op(&cw, buf);
			}
			_exit(0);
		}
	}
	for (i = 0; i < f->nthreads; i++) {
		f->w[i].f = f;
		f->w[i].rng = seq_next(&rng);
		atomic_store(&f->w[i].in_call, -1);
		f->w[i].started = !pthread_create(&f->w[i].thread, NULL,
						  worker_main, &f->w[i]);
	}
	usleep(ms * 1000);
	atomic_store(&f->stop, 1);
	/* Every socket shut down: a call blocked in one returns. */
	for (i = f->fd_floor; i < MAX_FD; i++)
		shutdown(i, SHUT_RDWR);
	until = now_ms() + 10000;
	for (i = 0; i < f->nthreads; i++) {
		while (f->w[i].started && atomic_load(&f->w[i].in_call) >= 0 &&
		       now_ms() < until)
			usleep(10000);
		if (f->w[i].started && atomic_load(&f->w[i].in_call) >= 0 &&
		    stuck < 0)
			stuck = i;
	}
	if (stuck >= 0) {
		snprintf(f->why, sizeof(f->why),
			 "a thread still in %s 10 s after every socket was shut down",
			 op_names[atomic_load(&f->w[stuck].in_call)]);
		atomic_store(&f->bad, 1);
		/* (the process is stuck too: its exit tells the rest) */
		return -1;
	}
	for (i = 0; i < f->nthreads; i++)
		if (f->w[i].started)
			pthread_join(f->w[i].thread, NULL);
	if (child > 0) {
		until = now_ms() + 10000;
		while (waitpid(child, &status, WNOHANG) == 0 && now_ms() < until)
			usleep(10000);
		if (waitpid(child, &status, WNOHANG) == 0) {
			kill(child, SIGKILL);
			waitpid(child, &status, 0);
			snprintf(f->why, sizeof(f->why),
				 "the forked child did not end within 10 s of the case");
			atomic_store(&f->bad, 1);
		}
	}
out:
	/* the case's fds, all of them (dups and accepts, in slots or not) */
	close_range(f->fd_floor, ~0U, 0);
	pthread_mutex_destroy(&f->lock);
	return atomic_load(&f->bad) || f->why[0] ? -1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long long seed = 1, count = 1, i, failed = 0;
	int opt, port = 19800, case_ms = 2000, threads = 4, verbose = 0, left;
	long until;
	static struct fz f;

	while ((opt = getopt(argc, argv, "s:n:p:t:j:v")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'p': port = atoi(optarg); break;
		case 't': case_ms = atoi(optarg); break;
		case 'j': threads = atoi(optarg); break;
		case 'v': verbose = 1; break;
		default: threads = 0; break;
		}
	}
	if (optind != argc || threads < 1 || threads > MAX_THREADS ||
	    case_ms < 100) {
		fprintf(stderr, "usage: sdp_racefuzz [-s SEED] [-n COUNT] [-p PORT] [-t CASE_MS] [-j THREADS (1-%d)] [-v]\n",
			MAX_THREADS);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < count; i++) {
		memset(&f, 0, sizeof(f));
		f.seed = seed + i;
		/* (ports of their own: a case's sockets may outlive it) */
		f.port = port + CASE_PORTS * (i % PORT_SETS);
		if (verbose) {
			printf("sdp_racefuzz: seed %llu ...\n", seed + i);
			fflush(stdout);
		}
		if (run_case(&f, case_ms, threads)) {
			failed++;
			printf("sdp_racefuzz: seed %llu: FAIL: %s\n", seed + i,
			       f.why);
			printf("sdp_racefuzz: replay: sdp_racefuzz -s %llu -n 1 -p %d -t %d -j %d\n",
			       seed + i, port, case_ms, threads);
			fflush(stdout);
			if (atomic_load(&f.bad) && strstr(f.why, "still in"))
				break;	/* (a thread is stuck in the kernel) */
		}
	}
	/* Everything closed goes, in a time a connection's teardown takes. */
	until = now_ms() + LEFT_MS;
	while ((left = port_socks(port, CASE_PORTS * PORT_SETS, 0)) > 0 &&
	       now_ms() < until)
		usleep(100000);
	if (left) {
		port_socks(port, CASE_PORTS * PORT_SETS, 1);
		printf("sdp_racefuzz: FAIL: %d SDP socket(s) left %d s after the last case\n",
		       left, LEFT_MS / 1000);
		failed++;
	}
	printf("sdp_racefuzz: %llu cases from seed %llu, %llu failed; calls:",
	       i < count ? i + 1 : count, seed, failed);
	for (i = 0; i < OP_N; i++)
		printf(" %s %lu", op_names[i], atomic_load(&op_count[i]));
	printf("\n");
	return failed ? 1 : 0;
}
