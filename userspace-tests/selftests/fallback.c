// SPDX-License-Identifier: GPL-2.0
/*
 * fallback: TCP fallback inside the SDP socket (SOL_SDP, SDP_FALLBACK).
 * Off by default.  With it, connect() to a peer that has no SDP listener
 * goes TCP, blocking and non-blocking alike (EINPROGRESS, then POLLOUT and
 * SO_ERROR 0, also for an epoll set up before the switch, and a poll
 * through the switch never sees it hung up); options set
 * before it hold on the TCP socket; a peer with nothing listening refuses
 * as TCP does; a route with no RDMA device goes TCP, and so does an RDMA
 * CM that does not answer, after fallback_timeout_ms.  A listener with
 * fallback takes SDP and TCP clients on its one port, and poll wakes for
 * either.  Every transfer is checked byte for byte; the socket says which
 * path it took (SDP_PATH, /proc/net/sdp, /proc/net/sdpstats), and closing
 * leaves no reference on the module.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

#define WAIT_MS 20000
#define DATA_BYTES (128 * 1024)

/* The sdp.ko module's reference count, or -1. */
static int module_refs(void)
{
	return sdp_sysctl_int("/sys/module/sdp/refcnt");
}

/*
 * The module's reference count once it is down to @want, or after 10 s:
 * SDP connections, of this test or the one before, end after close() by
 * their own exchange.
 */
static int module_refs_settle(int want)
{
	int i;

	for (i = 0; i < 100 && module_refs() > want; i++)
		usleep(100000);
	return module_refs();
}

/*
 * The path column of the /proc/net/sdp line whose local port is @port and
 * state @st ("01", "0A", ...), into @path; 0 when found.
 */
static int proc_path(int port, const char *st, char *path)
{
	char line[512], local[64], state[8], want[16];
	FILE *f = fopen("/proc/net/sdp", "r");
	int found = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), ":%04X", port);
	while (fgets(line, sizeof(line), f)) {
		char *last = strrchr(line, ' ');

		if (sscanf(line, "%*s %63s %*s %7s", local, state) != 2 ||
		    !last)
			continue;
		if (strcmp(local + strlen(local) - strlen(want), want) ||
		    strcmp(state, st))
			continue;
		sscanf(last + 1, "%15s", path);
		found = 0;
	}
	fclose(f);
	return found;
}

/*
 * Moves DATA_BYTES each way between @a and @b, a child process writing
 * @a's side, and checks every byte: 0, or -errno / -EBADMSG.
 */
static int exchange(int a, int b)
{
	uint64_t off = 0, back = 0;
	int status, err;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		uint64_t o = 0, r = 0;

		if (stream_send_pattern(a, 11, &o, DATA_BYTES, 4096))
			_exit(1);
		_exit(stream_recv_pattern(a, 12, &r, DATA_BYTES, 0) ? 2 : 0);
	}
	err = stream_recv_pattern(b, 11, &off, DATA_BYTES, 0);
	if (!err)
		err = stream_send_pattern(b, 12, &back, DATA_BYTES, 4096);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (!err && (!WIFEXITED(status) || WEXITSTATUS(status)))
		err = -EBADMSG;
	return err;
}

FIXTURE(fb)
{
	int tcp_lfd;			/* a plain TCP listener on host B */
	struct sockaddr_storage b;
	socklen_t blen;
	int refs;
};

FIXTURE_VARIANT(fb)
{
	int family;
};

FIXTURE_VARIANT_ADD(fb, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(fb, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(fb)
{
	self->refs = module_refs();
	self->tcp_lfd = socket(variant->family, SOCK_STREAM, 0);
	ASSERT_LE(0, self->tcp_lfd);
	ASSERT_EQ(0, sockopt_set_int(self->tcp_lfd, SOL_SOCKET, SO_REUSEADDR, 1));
	ASSERT_EQ(0, stream_listen(self->tcp_lfd, variant->family, &self->b,
				   &self->blen));
}

FIXTURE_TEARDOWN(fb)
{
	close(self->tcp_lfd);
}

/* An SDP socket with fallback on. */
static int fb_socket(int flags)
{
	int fd = socket(AF_INET_SDP, SOCK_STREAM | flags, 0);

	if (fd >= 0 && sockopt_set_int(fd, SOL_SDP, SDP_FALLBACK, 1)) {
		close(fd);
		return -1;
	}
	return fd;
}

TEST_F(fb, off_by_default)
{
	int fd = sdp_socket();

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, sockopt_get_int(fd, SOL_SDP, SDP_FALLBACK));
	EXPECT_EQ(SDP_PATH_NONE, sockopt_get_int(fd, SOL_SDP, SDP_PATH));
	EXPECT_EQ(-ENOPROTOOPT, sockopt_set_int(fd, SOL_SDP, SDP_PATH, 1));
	EXPECT_EQ(-ENOPROTOOPT, sockopt_get_int(fd, SOL_SDP, 99));
	/* without it, a TCP-only peer refuses, as before */
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&self->b, self->blen));
	EXPECT_EQ(ECONNREFUSED, errno);
	close(fd);
}

TEST_F(fb, blocking_connect_goes_tcp)
{
	long long refused = sdp_stat("FallbackRefused");
	struct sockaddr_storage local, peer;
	socklen_t len = sizeof(local), plen = sizeof(peer);
	char path[16] = "";
	int cfd, afd;

	cfd = fb_socket(0);
	ASSERT_LE(0, cfd);
	EXPECT_EQ(1, sockopt_get_int(cfd, SOL_SDP, SDP_FALLBACK));
	ASSERT_EQ(0, connect(cfd, (struct sockaddr *)&self->b, self->blen));
	afd = accept(self->tcp_lfd, (struct sockaddr *)&peer, &plen);
	ASSERT_LE(0, afd);

	EXPECT_EQ(SDP_PATH_TCP, sockopt_get_int(cfd, SOL_SDP, SDP_PATH));
	EXPECT_EQ(1, sockopt_get_int(cfd, SOL_SDP, SDP_FALLBACK));
	EXPECT_EQ(refused + 1, sdp_stat("FallbackRefused"));
	/* names read back as the TCP connection's, of the address family */
	ASSERT_EQ(0, getsockname(cfd, (struct sockaddr *)&local, &len));
	EXPECT_EQ(variant->family, local.ss_family);
	EXPECT_TRUE(sdp_same_addr(&local, &peer, 1));
	len = sizeof(peer);
	ASSERT_EQ(0, getpeername(cfd, (struct sockaddr *)&peer, &len));
	EXPECT_TRUE(sdp_same_addr(&peer, &self->b, 1));
	ASSERT_EQ(0, proc_path(sdp_addr_port(&local), "01", path));
	EXPECT_STREQ("tcp", path);

	EXPECT_EQ(0, exchange(cfd, afd));
	close(afd);
	close(cfd);
	EXPECT_GE(self->refs, module_refs_settle(self->refs));
}

TEST_F(fb, nonblocking_connect_goes_tcp)
{
	struct epoll_event ev = { .events = EPOLLOUT };
	int cfd, afd, ep;

	cfd = fb_socket(SOCK_NONBLOCK);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(-1, connect(cfd, (struct sockaddr *)&self->b, self->blen));
	ASSERT_EQ(EINPROGRESS, errno);
	/* an epoll set up on the SDP socket hears the TCP one */
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ev));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, WAIT_MS));
	EXPECT_TRUE(ev.events & EPOLLOUT);
	EXPECT_FALSE(ev.events & (EPOLLERR | EPOLLHUP));
	EXPECT_EQ(0, so_error(cfd));
	EXPECT_EQ(SDP_PATH_TCP, sockopt_get_int(cfd, SOL_SDP, SDP_PATH));
	/* as TCP: connect() again completes it, and once more is EISCONN */
	EXPECT_EQ(0, connect(cfd, (struct sockaddr *)&self->b, self->blen));
	EXPECT_EQ(-1, connect(cfd, (struct sockaddr *)&self->b, self->blen));
	EXPECT_EQ(EISCONN, errno);

	ASSERT_LT(0, stream_wait(self->tcp_lfd, POLLIN, WAIT_MS));
	afd = accept(self->tcp_lfd, NULL, NULL);
	ASSERT_LE(0, afd);
	ASSERT_EQ(0, fcntl(cfd, F_SETFL, 0));
	EXPECT_EQ(0, exchange(cfd, afd));
	close(ep);
	close(afd);
	close(cfd);
	EXPECT_GE(self->refs, module_refs_settle(self->refs));
}

/*
 * Polled without pause from connect() on, through the switch to TCP: the
 * socket is never seen hung up or in error on its way to writable, round
 * after round (a poll that raced the switch once found TCP's socket not
 * yet connecting, as EPOLLHUP).
 */
TEST_F(fb, nonblocking_connect_polled_through_switch)
{
	int round, cfd, afd;
	struct pollfd pfd;
	char byte = 0;

	for (round = 0; round < 25; round++) {
		long start;

		cfd = fb_socket(SOCK_NONBLOCK);
		ASSERT_LE(0, cfd);
		ASSERT_EQ(-1, connect(cfd, (struct sockaddr *)&self->b,
				      self->blen));
		ASSERT_EQ(EINPROGRESS, errno);
		start = now_ms();
		pfd = (struct pollfd){ .fd = cfd, .events = POLLOUT };
		do {
			pfd.revents = 0;
			ASSERT_LE(0, poll(&pfd, 1, 0));
			ASSERT_GT(WAIT_MS, now_ms() - start);
		} while (!pfd.revents);
		if (pfd.revents != POLLOUT)
			TH_LOG("round %d: revents %#x", round, pfd.revents);
		ASSERT_EQ(POLLOUT, pfd.revents);
		EXPECT_EQ(SDP_PATH_TCP, sockopt_get_int(cfd, SOL_SDP, SDP_PATH));
		EXPECT_EQ(0, so_error(cfd));

		ASSERT_LT(0, stream_wait(self->tcp_lfd, POLLIN, WAIT_MS));
		afd = accept(self->tcp_lfd, NULL, NULL);
		ASSERT_LE(0, afd);
		byte = round;
		ASSERT_EQ(1, write(cfd, &byte, 1));
		ASSERT_LT(0, stream_wait(afd, POLLIN, WAIT_MS));
		byte = -1;
		ASSERT_EQ(1, read(afd, &byte, 1));
		EXPECT_EQ(round, byte);
		close(afd);
		close(cfd);
	}
	EXPECT_GE(self->refs, module_refs_settle(self->refs));
}

TEST_F(fb, options_carry_over)
{
	int cfd, afd;

	cfd = fb_socket(0);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, sockopt_set_int(cfd, SOL_SOCKET, SO_KEEPALIVE, 1));
	ASSERT_EQ(0, sockopt_set_int(cfd, SOL_TCP, TCP_NODELAY, 1));
	ASSERT_EQ(0, sockopt_set_int(cfd, SOL_TCP, TCP_KEEPIDLE, 77));
	ASSERT_EQ(0, sockopt_set_int(cfd, SOL_TCP, TCP_KEEPCNT, 5));
	ASSERT_EQ(0, sockopt_set_int(cfd, SOL_TCP, TCP_USER_TIMEOUT, 12345));
	ASSERT_EQ(0, sockopt_set_int(cfd, SOL_SOCKET, SO_RCVBUF, 65536));
	ASSERT_EQ(0, connect(cfd, (struct sockaddr *)&self->b, self->blen));
	afd = accept(self->tcp_lfd, NULL, NULL);
	ASSERT_LE(0, afd);
	ASSERT_EQ(SDP_PATH_TCP, sockopt_get_int(cfd, SOL_SDP, SDP_PATH));

	/* read back from the TCP socket: what was set on the SDP one */
	EXPECT_EQ(1, sockopt_get_int(cfd, SOL_SOCKET, SO_KEEPALIVE));
	EXPECT_EQ(1, sockopt_get_int(cfd, SOL_TCP, TCP_NODELAY));
	EXPECT_EQ(77, sockopt_get_int(cfd, SOL_TCP, TCP_KEEPIDLE));
	EXPECT_EQ(5, sockopt_get_int(cfd, SOL_TCP, TCP_KEEPCNT));
	EXPECT_EQ(12345, sockopt_get_int(cfd, SOL_TCP, TCP_USER_TIMEOUT));
	EXPECT_EQ(2 * 65536, sockopt_get_int(cfd, SOL_SOCKET, SO_RCVBUF));
	EXPECT_EQ(SOCK_STREAM, sockopt_get_int(cfd, SOL_SOCKET, SO_TYPE));
	EXPECT_EQ(IPPROTO_TCP, sockopt_get_int(cfd, SOL_SOCKET, SO_PROTOCOL));
	/* and what is set now goes to the TCP socket */
	EXPECT_EQ(0, sockopt_set_int(cfd, SOL_TCP, TCP_KEEPINTVL, 33));
	EXPECT_EQ(33, sockopt_get_int(cfd, SOL_TCP, TCP_KEEPINTVL));
	EXPECT_EQ(0, exchange(cfd, afd));
	close(afd);
	close(cfd);
}

TEST_F(fb, nobody_listens)
{
	struct pollfd p;
	int fd;

	close(self->tcp_lfd);
	self->tcp_lfd = -1;

	fd = fb_socket(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&self->b, self->blen));
	EXPECT_EQ(ECONNREFUSED, errno);
	close(fd);

	fd = fb_socket(SOCK_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(-1, connect(fd, (struct sockaddr *)&self->b, self->blen));
	ASSERT_EQ(EINPROGRESS, errno);
	p = (struct pollfd){ .fd = fd, .events = POLLOUT };
	ASSERT_EQ(1, poll(&p, 1, WAIT_MS));
	EXPECT_TRUE(p.revents & POLLERR);
	EXPECT_EQ(ECONNREFUSED, so_error(fd));
	EXPECT_EQ(0, so_error(fd));
	close(fd);
	EXPECT_GE(self->refs, module_refs_settle(self->refs));
}

TEST_F(fb, close_while_connecting)
{
	int i, fd;

	for (i = 0; i < 8; i++) {
		fd = fb_socket(SOCK_NONBLOCK);
		ASSERT_LE(0, fd);
		ASSERT_EQ(-1, connect(fd, (struct sockaddr *)&self->b,
				      self->blen));
		ASSERT_EQ(EINPROGRESS, errno);
		if (i & 1)
			usleep(20000 * i);
		close(fd);
	}
	/* the attempts end on their own: the module's references go */
	EXPECT_GE(self->refs, module_refs_settle(self->refs));
}

/*
 * Host A's egress loses every RoCEv2 packet (UDP port 4791), IPv4 and
 * IPv6: the RDMA CM's requests go unanswered, while TCP and neighbour
 * discovery pass.
 */
#define LOSE_ROCE							\
	"tc qdisc add dev " SDP_A_IF " root handle 1: prio && "	\
	"tc qdisc add dev " SDP_A_IF " parent 1:3 netem loss 100% && "	\
	"tc filter add dev " SDP_A_IF " parent 1: protocol ip pref 50 u32 " \
	"match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:3 && " \
	"tc filter add dev " SDP_A_IF " parent 1: protocol ipv6 pref 60 u32 " \
	"match ip6 protocol 17 0xff match ip6 dport 4791 0xffff flowid 1:3"

TEST_F(fb, silent_cm_goes_tcp_in_time)
{
	long long timeouts = sdp_stat("FallbackTimeout");
	long long old = sdp_param("fallback_timeout_ms");
	char text[32];
	int cfd, afd;

	ASSERT_LT(0, old);
	ASSERT_EQ(0, sdp_set_param("fallback_timeout_ms", "1500"));
	ASSERT_EQ(0, system(LOSE_ROCE));
	cfd = fb_socket(0);
	EXPECT_LE(0, cfd);
	EXPECT_EQ(0, connect(cfd, (struct sockaddr *)&self->b, self->blen));
	EXPECT_EQ(0, system("tc qdisc del dev " SDP_A_IF " root"));
	snprintf(text, sizeof(text), "%lld", old);
	EXPECT_EQ(0, sdp_set_param("fallback_timeout_ms", text));

	afd = accept(self->tcp_lfd, NULL, NULL);
	ASSERT_LE(0, afd);
	EXPECT_EQ(SDP_PATH_TCP, sockopt_get_int(cfd, SOL_SDP, SDP_PATH));
	EXPECT_EQ(timeouts + 1, sdp_stat("FallbackTimeout"));
	EXPECT_EQ(0, exchange(cfd, afd));
	close(afd);
	close(cfd);
	EXPECT_GE(self->refs, module_refs_settle(self->refs));
}

TEST_F(fb, listener_takes_both)
{
	long long accepts = sdp_stat("FallbackAccepts");
	struct sockaddr_storage b;
	int lfd, sfd, tfd, a1, a2, paths;
	struct pollfd p;
	char path[16] = "";
	socklen_t blen;

	lfd = fb_socket(0);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, stream_listen(lfd, variant->family, &b, &blen));
	ASSERT_EQ(0, proc_path(sdp_addr_port(&b), "0A", path));
	EXPECT_STREQ("both", path);

	/* a TCP client: poll on the one listener wakes, accept takes it */
	tfd = socket(variant->family, SOCK_STREAM, 0);
	ASSERT_LE(0, tfd);
	ASSERT_EQ(0, connect(tfd, (struct sockaddr *)&b, blen));
	p = (struct pollfd){ .fd = lfd, .events = POLLIN };
	ASSERT_EQ(1, poll(&p, 1, WAIT_MS));
	a1 = accept(lfd, NULL, NULL);
	ASSERT_LE(0, a1);

	/* an SDP client, on the same port */
	sfd = sdp_socket();
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, connect(sfd, (struct sockaddr *)&b, blen));
	p = (struct pollfd){ .fd = lfd, .events = POLLIN };
	ASSERT_EQ(1, poll(&p, 1, WAIT_MS));
	a2 = accept(lfd, NULL, NULL);
	ASSERT_LE(0, a2);

	paths = sockopt_get_int(a1, SOL_SDP, SDP_PATH) * 10 + sockopt_get_int(a2, SOL_SDP, SDP_PATH);
	EXPECT_EQ(SDP_PATH_TCP * 10 + SDP_PATH_SDP, paths);
	EXPECT_EQ(SDP_PATH_SDP, sockopt_get_int(sfd, SOL_SDP, SDP_PATH));
	EXPECT_EQ(accepts + 1, sdp_stat("FallbackAccepts"));
	EXPECT_EQ(0, exchange(tfd, a1));
	EXPECT_EQ(0, exchange(sfd, a2));

	/* nothing more waits: a non-blocking accept says so */
	ASSERT_EQ(0, fcntl(lfd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, accept(lfd, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);
	close(a1);
	close(a2);
	close(tfd);
	close(sfd);
	close(lfd);
	EXPECT_GE(self->refs, module_refs_settle(self->refs));
}

/*
 * A peer on a route with no RDMA device (a dummy netdev of host B's):
 * SDP cannot resolve it, the connection goes TCP, counted as such.
 */
#define NODEV_IF "sdpfb0"
#define NODEV_ADDR "10.98.0.1"

TEST(no_rdma_device)
{
	long long nodev = sdp_stat("FallbackNoDevice");
	struct sockaddr_in b = { .sin_family = AF_INET };
	socklen_t blen = sizeof(b);
	int lfd, cfd, afd;

	ASSERT_EQ(0, system("ip link add " NODEV_IF " type dummy && "
			    "ip addr add " NODEV_ADDR "/24 dev " NODEV_IF " && "
			    "ip link set " NODEV_IF " up"));
	inet_pton(AF_INET, NODEV_ADDR, &b.sin_addr);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, bind(lfd, (struct sockaddr *)&b, blen));
	ASSERT_EQ(0, listen(lfd, 4));
	ASSERT_EQ(0, getsockname(lfd, (struct sockaddr *)&b, &blen));

	cfd = sdp_socket();
	ASSERT_LE(0, cfd);
	/* without fallback: the network cannot be reached over RDMA */
	EXPECT_EQ(-1, connect(cfd, (struct sockaddr *)&b, blen));
	EXPECT_EQ(ENETUNREACH, errno);
	close(cfd);

	cfd = fb_socket(0);
	ASSERT_LE(0, cfd);
	EXPECT_EQ(0, connect(cfd, (struct sockaddr *)&b, blen));
	afd = accept(lfd, NULL, NULL);
	EXPECT_LE(0, afd);
	EXPECT_EQ(SDP_PATH_TCP, sockopt_get_int(cfd, SOL_SDP, SDP_PATH));
	EXPECT_EQ(nodev + 1, sdp_stat("FallbackNoDevice"));
	if (afd >= 0) {
		EXPECT_EQ(0, exchange(cfd, afd));
		close(afd);
	}
	close(cfd);
	close(lfd);
	EXPECT_EQ(0, system("ip link del " NODEV_IF));
}

TEST_HARNESS_MAIN
