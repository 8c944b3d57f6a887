// SPDX-License-Identifier: GPL-2.0
/*
 * connect_accept: SDP connection set-up between the bed's hosts A and B
 * over IPv4, IPv6 and v4-mapped addresses: blocking and non-blocking
 * connect, accept, the names of both ends, refusal, unreachable peers,
 * the listen backlog, and what the peer sees when one end closes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

/* Long enough for Soft-RoCE under TCG; the harness bounds each test. */
#define POLL_MS 20000

FIXTURE(conn)
{
	int lfd;
	struct sockaddr_storage b;	/* the listener's address */
	socklen_t len;
};

FIXTURE_VARIANT(conn)
{
	int family;
};

FIXTURE_VARIANT_ADD(conn, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(conn, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_VARIANT_ADD(conn, v4_mapped)
{
	.family = AF_INET6 | SDP_MAPPED,
};

FIXTURE_SETUP(conn)
{
	self->lfd = sdp_socket();
	ASSERT_LE(0, self->lfd);
	self->len = sdp_host_addr(&self->b, variant->family, 'B', 0);
	ASSERT_EQ(0, bind(self->lfd, (struct sockaddr *)&self->b, self->len));
	ASSERT_EQ(0, listen(self->lfd, 8));
	ASSERT_EQ(0, getsockname(self->lfd, (struct sockaddr *)&self->b, &self->len));
}

FIXTURE_TEARDOWN(conn)
{
	close(self->lfd);
}

TEST_F(conn, blocking_connect_and_names)
{
	struct sockaddr_storage a, got, c_local, c_peer, s_local;
	socklen_t len = sizeof(got);
	int cfd, afd;

	sdp_host_addr(&a, variant->family, 'A', 0);
	cfd = sdp_socket();
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, connect(cfd, (struct sockaddr *)&self->b, self->len));
	afd = accept(self->lfd, (struct sockaddr *)&got, &len);
	ASSERT_LE(0, afd);

	/* accept() names the client: host A, at the client's own port. */
	EXPECT_EQ(self->len, len);
	EXPECT_TRUE(sdp_same_addr(&got, &a, 0));
	len = sizeof(c_local);
	ASSERT_EQ(0, getsockname(cfd, (struct sockaddr *)&c_local, &len));
	EXPECT_TRUE(sdp_same_addr(&got, &c_local, 1));
	len = sizeof(c_peer);
	ASSERT_EQ(0, getpeername(cfd, (struct sockaddr *)&c_peer, &len));
	EXPECT_TRUE(sdp_same_addr(&c_peer, &self->b, 1));
	len = sizeof(s_local);
	ASSERT_EQ(0, getsockname(afd, (struct sockaddr *)&s_local, &len));
	EXPECT_TRUE(sdp_same_addr(&s_local, &self->b, 1));
	len = sizeof(c_peer);
	ASSERT_EQ(0, getpeername(afd, (struct sockaddr *)&c_peer, &len));
	EXPECT_TRUE(sdp_same_addr(&c_peer, &c_local, 1));

	/* A connected socket cannot connect again, nor listen. */
	EXPECT_EQ(-1, connect(cfd, (struct sockaddr *)&self->b, self->len));
	EXPECT_EQ(EISCONN, errno);
	EXPECT_EQ(-1, listen(cfd, 1));
	EXPECT_EQ(EINVAL, errno);
	close(afd);
	close(cfd);
}

TEST_F(conn, nonblocking_connect)
{
	struct pollfd pfd;
	int cfd, afd;

	cfd = socket(AF_INET_SDP, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(-1, connect(cfd, (struct sockaddr *)&self->b, self->len));
	ASSERT_EQ(EINPROGRESS, errno);
	/* Still under way, or done already: never a second EINPROGRESS. */
	if (connect(cfd, (struct sockaddr *)&self->b, self->len))
		EXPECT_TRUE(errno == EALREADY || errno == EISCONN);

	pfd = (struct pollfd){ .fd = cfd, .events = POLLOUT };
	ASSERT_EQ(1, poll(&pfd, 1, POLL_MS));
	EXPECT_EQ(POLLOUT, pfd.revents & (POLLOUT | POLLERR | POLLHUP));
	EXPECT_EQ(0, so_error(cfd));

	/* The listener is readable while a connection waits. */
	pfd = (struct pollfd){ .fd = self->lfd, .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, POLL_MS));
	afd = accept4(self->lfd, NULL, NULL, SOCK_NONBLOCK);
	ASSERT_LE(0, afd);
	EXPECT_EQ(-1, connect(cfd, (struct sockaddr *)&self->b, self->len));
	EXPECT_EQ(EISCONN, errno);
	close(afd);
	close(cfd);
}

TEST_F(conn, accept_nonblocking_empty)
{
	int fl = fcntl(self->lfd, F_GETFL);

	ASSERT_EQ(0, fcntl(self->lfd, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(-1, accept(self->lfd, NULL, NULL));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(conn, connect_on_listener)
{
	EXPECT_EQ(-1, connect(self->lfd, (struct sockaddr *)&self->b, self->len));
	EXPECT_EQ(EISCONN, errno);
}

TEST_F(conn, refused_without_listener)
{
	struct sockaddr_storage dst = self->b;
	int cfd = sdp_socket();

	ASSERT_LE(0, cfd);
	/* Nobody listens on the listener's port + 1 (ours are ephemeral). */
	((struct sockaddr_in *)&dst)->sin_port = htons(sdp_addr_port(&self->b) + 1);
	EXPECT_EQ(-1, connect(cfd, (struct sockaddr *)&dst, self->len));
	EXPECT_EQ(ECONNREFUSED, errno);
	/* The failed socket can try again, and reach the listener. */
	EXPECT_EQ(0, connect(cfd, (struct sockaddr *)&self->b, self->len));
	close(cfd);
}

TEST_F(conn, refused_nonblocking)
{
	struct sockaddr_storage dst = self->b;
	struct pollfd pfd;
	int cfd;

	cfd = socket(AF_INET_SDP, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ASSERT_LE(0, cfd);
	((struct sockaddr_in *)&dst)->sin_port = htons(sdp_addr_port(&self->b) + 1);
	ASSERT_EQ(-1, connect(cfd, (struct sockaddr *)&dst, self->len));
	ASSERT_EQ(EINPROGRESS, errno);
	pfd = (struct pollfd){ .fd = cfd, .events = POLLOUT };
	ASSERT_EQ(1, poll(&pfd, 1, POLL_MS));
	EXPECT_TRUE(pfd.revents & POLLERR);
	EXPECT_EQ(ECONNREFUSED, so_error(cfd));
	/* SO_ERROR reads the error once. */
	EXPECT_EQ(0, so_error(cfd));
	close(cfd);
}

TEST_F(conn, peer_close_gives_eof)
{
	struct pollfd pfd;
	char c;
	int cfd, afd;

	cfd = sdp_socket();
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, connect(cfd, (struct sockaddr *)&self->b, self->len));
	afd = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, afd);
	close(afd);

	/* An orderly close: the client reads EOF, with no error. */
	pfd = (struct pollfd){ .fd = cfd, .events = POLLIN | POLLRDHUP };
	ASSERT_EQ(1, poll(&pfd, 1, POLL_MS));
	EXPECT_TRUE(pfd.revents & POLLRDHUP);
	EXPECT_EQ(0, recv(cfd, &c, 1, 0));
	EXPECT_EQ(0, so_error(cfd));
	close(cfd);
}

TEST_F(conn, backlog_refuses_excess)
{
	int cfd[4], afd, i;

	/* A backlog of 1 holds two connections, as TCP's accept queue does. */
	ASSERT_EQ(0, listen(self->lfd, 1));
	for (i = 0; i < 3; i++) {
		cfd[i] = sdp_socket();
		ASSERT_LE(0, cfd[i]);
		if (i < 2) {
			ASSERT_EQ(0, connect(cfd[i], (struct sockaddr *)&self->b, self->len));
		} else {
			EXPECT_EQ(-1, connect(cfd[i], (struct sockaddr *)&self->b, self->len));
			EXPECT_EQ(ECONNREFUSED, errno);
		}
	}
	/* Room again after an accept. */
	afd = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, afd);
	cfd[3] = sdp_socket();
	ASSERT_LE(0, cfd[3]);
	EXPECT_EQ(0, connect(cfd[3], (struct sockaddr *)&self->b, self->len));
	close(afd);
	for (i = 0; i < 4; i++)
		close(cfd[i]);
}

TEST_F(conn, close_listener_with_queue)
{
	int cfd[3], i;

	for (i = 0; i < 3; i++) {
		cfd[i] = sdp_socket();
		ASSERT_LE(0, cfd[i]);
		ASSERT_EQ(0, connect(cfd[i], (struct sockaddr *)&self->b, self->len));
	}
	/* Unaccepted connections are reset when their listener goes. */
	close(self->lfd);
	self->lfd = sdp_socket();
	for (i = 0; i < 3; i++) {
		struct pollfd pfd = { .fd = cfd[i], .events = POLLIN };

		ASSERT_EQ(1, poll(&pfd, 1, POLL_MS));
		EXPECT_EQ(ECONNRESET, so_error(cfd[i]));
		close(cfd[i]);
	}
}

TEST_F(conn, sequential_connections)
{
	int i, cfd, afd;

	for (i = 0; i < 20; i++) {
		cfd = sdp_socket();
		ASSERT_LE(0, cfd);
		ASSERT_EQ(0, connect(cfd, (struct sockaddr *)&self->b, self->len));
		afd = accept(self->lfd, NULL, NULL);
		ASSERT_LE(0, afd);
		close(afd);
		close(cfd);
	}
}

/*
 * The first connection after the neighbour entries went: the bed's veth
 * answers ARP inside the RDMA CM's own request, which its resolver misses,
 * and then it waits out its whole timeout (sdp_neigh_prime()).
 * With that timeout far beyond the poll, only a connect that did not wait
 * for it gets through in time.  (The poll stays well inside the harness's
 * 30 s, so that a module that waits fails here rather than times out.)
 */
#define FLUSHED_POLL_MS 10000

TEST_F(conn, connect_after_neighbours_flushed)
{
	long long old = sdp_param("resolve_timeout_ms");
	char text[24];
	struct pollfd pfd;
	int cfd, afd;

	ASSERT_LT(0, old);
	ASSERT_EQ(0, sdp_set_param("resolve_timeout_ms", "60000"));
	EXPECT_EQ(0, system("ip neigh flush dev " SDP_A_IF " && "
			    "ip neigh flush dev " SDP_B_IF));
	cfd = socket(AF_INET_SDP, SOCK_STREAM | SOCK_NONBLOCK, 0);
	EXPECT_LE(0, cfd);
	EXPECT_EQ(-1, connect(cfd, (struct sockaddr *)&self->b, self->len));
	EXPECT_EQ(EINPROGRESS, errno);
	pfd = (struct pollfd){ .fd = cfd, .events = POLLOUT };
	EXPECT_EQ(1, poll(&pfd, 1, FLUSHED_POLL_MS));
	EXPECT_EQ(0, so_error(cfd));
	afd = accept4(self->lfd, NULL, NULL, SOCK_NONBLOCK);
	EXPECT_LE(0, afd);
	close(afd);
	close(cfd);
	snprintf(text, sizeof(text), "%lld", old);
	ASSERT_EQ(0, sdp_set_param("resolve_timeout_ms", text));
}

/* Nobody has 10.99.0.3 on host B's link: ARP gets no answer. */
TEST(unreachable_host)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7) };
	int fd = sdp_socket();

	ASSERT_LE(0, fd);
	inet_pton(AF_INET, "10.99.0.3", &sin.sin_addr);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&sin, sizeof(sin)));
	EXPECT_EQ(EHOSTUNREACH, errno);
	close(fd);
}

/* A route through a netdev that no RDMA device serves. */
TEST(no_rdma_device)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7) };
	int fd = sdp_socket();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, system("ip link add sdp-dummy type dummy && "
			    "ip addr add 10.98.0.1/24 dev sdp-dummy && "
			    "ip link set sdp-dummy up"));
	inet_pton(AF_INET, "10.98.0.2", &sin.sin_addr);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&sin, sizeof(sin)));
	EXPECT_EQ(ENETUNREACH, errno);
	close(fd);
	system("ip link del sdp-dummy");
}

TEST_HARNESS_MAIN
