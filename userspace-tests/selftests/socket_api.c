// SPDX-License-Identifier: GPL-2.0
/*
 * socket_api: creating and binding AF_INET_SDP sockets gives what a TCP
 * socket would, errno for errno.  Runs in the test bed (hosts A and B).
 */
#include <errno.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdp_hosts.h"

TEST(create_stream)
{
	int fd = sdp_socket();

	ASSERT_LE(0, fd);
	EXPECT_EQ(AF_INET_SDP, sockopt_get_int(fd, SOL_SOCKET, SO_DOMAIN));
	EXPECT_EQ(SOCK_STREAM, sockopt_get_int(fd, SOL_SOCKET, SO_TYPE));
	EXPECT_EQ(IPPROTO_TCP, sockopt_get_int(fd, SOL_SOCKET, SO_PROTOCOL));
	EXPECT_EQ(0, sockopt_get_int(fd, SOL_SOCKET, SO_ERROR));
	close(fd);
}

TEST(create_ipproto_tcp)
{
	int fd = socket(AF_INET_SDP, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			IPPROTO_TCP);

	ASSERT_LE(0, fd);
	close(fd);
}

TEST(create_bad_type)
{
	static const int types[] = { SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RAW, SOCK_RDM };
	unsigned int i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		EXPECT_EQ(-1, socket(AF_INET_SDP, types[i], 0));
		EXPECT_EQ(ESOCKTNOSUPPORT, errno);
	}
}

TEST(create_bad_protocol)
{
	EXPECT_EQ(-1, socket(AF_INET_SDP, SOCK_STREAM, IPPROTO_UDP));
	EXPECT_EQ(EPROTONOSUPPORT, errno);
	EXPECT_EQ(-1, socket(AF_INET_SDP, SOCK_STREAM, IPPROTO_SCTP));
	EXPECT_EQ(EPROTONOSUPPORT, errno);
}

TEST(bind_bad_length)
{
	struct sockaddr_storage ss;
	int fd = sdp_socket();

	ASSERT_LE(0, fd);
	sdp_host_addr(&ss, AF_INET, 'B', 0);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ss, sizeof(struct sockaddr_in) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ss, 1));
	EXPECT_EQ(EINVAL, errno);
	sdp_host_addr(&ss, AF_INET6, 'B', 0);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ss, 20));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST(bind_bad_family)
{
	struct sockaddr_storage ss;
	int fd = sdp_socket();

	ASSERT_LE(0, fd);
	sdp_host_addr(&ss, AF_INET, 'B', 0);
	ss.ss_family = AF_UNIX;
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ss, sizeof(struct sockaddr_in)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	/* AF_UNSPEC is taken for AF_INET only with INADDR_ANY, as by TCP. */
	ss.ss_family = AF_UNSPEC;
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ss, sizeof(struct sockaddr_in)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	close(fd);
}

TEST(bind_address_in_use)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int a = sdp_socket(), b = sdp_socket();

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	len = sdp_host_addr(&ss, AF_INET, 'B', 0);
	ASSERT_EQ(0, bind(a, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, getsockname(a, (struct sockaddr *)&ss, &len));
	ASSERT_NE(0, sdp_addr_port(&ss));
	EXPECT_EQ(-1, bind(b, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EADDRINUSE, errno);
	close(a);
	/* The port is free again once its socket is closed. */
	EXPECT_EQ(0, bind(b, (struct sockaddr *)&ss, len));
	close(b);
}

TEST(bind_twice)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = sdp_socket();

	ASSERT_LE(0, fd);
	len = sdp_host_addr(&ss, AF_INET, 'B', 0);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ss, len));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST(bind_not_local)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fd = sdp_socket();

	ASSERT_LE(0, fd);
	inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	close(fd);
}

TEST(bind_unspec_any)
{
	struct sockaddr_in sin = { .sin_family = AF_UNSPEC };
	socklen_t len = sizeof(sin);
	int fd = sdp_socket();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&sin, &len));
	EXPECT_EQ(AF_INET, sin.sin_family);
	EXPECT_EQ(htonl(INADDR_ANY), sin.sin_addr.s_addr);
	EXPECT_NE(0, sin.sin_port);
	close(fd);
}

FIXTURE(names)
{
	int fd;
};

FIXTURE_VARIANT(names)
{
	int family;
	socklen_t len;
};

FIXTURE_VARIANT_ADD(names, ipv4)
{
	.family = AF_INET,
	.len = sizeof(struct sockaddr_in),
};

FIXTURE_VARIANT_ADD(names, ipv6)
{
	.family = AF_INET6,
	.len = sizeof(struct sockaddr_in6),
};

FIXTURE_VARIANT_ADD(names, v4_mapped)
{
	.family = AF_INET6 | SDP_MAPPED,
	.len = sizeof(struct sockaddr_in6),
};

FIXTURE_SETUP(names)
{
	self->fd = sdp_socket();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(names)
{
	close(self->fd);
}

TEST_F(names, getsockname_after_bind)
{
	struct sockaddr_storage want, got;
	socklen_t len = sizeof(got);

	sdp_host_addr(&want, variant->family, 'B', 0);
	ASSERT_EQ(0, bind(self->fd, (struct sockaddr *)&want, variant->len));
	ASSERT_EQ(0, getsockname(self->fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(variant->len, len);
	EXPECT_TRUE(sdp_same_addr(&want, &got, 0));
	EXPECT_NE(0, sdp_addr_port(&got));
}

TEST_F(names, getpeername_unconnected)
{
	struct sockaddr_storage want, got;
	socklen_t len = sizeof(got);

	sdp_host_addr(&want, variant->family, 'B', 0);
	ASSERT_EQ(0, bind(self->fd, (struct sockaddr *)&want, variant->len));
	EXPECT_EQ(-1, getpeername(self->fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(ENOTCONN, errno);
	ASSERT_EQ(0, listen(self->fd, 4));
	EXPECT_EQ(-1, getpeername(self->fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(ENOTCONN, errno);
}

TEST(listen_binds_wildcard)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = sdp_socket();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, listen(fd, 4));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&sin, &len));
	EXPECT_EQ(AF_INET, sin.sin_family);
	EXPECT_EQ(htonl(INADDR_ANY), sin.sin_addr.s_addr);
	EXPECT_NE(0, sin.sin_port);
	/* Listening twice only changes the backlog; binding now fails. */
	EXPECT_EQ(0, listen(fd, 8));
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin, len));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

/*
 * IPV6_V6ONLY as TCP over IPv6 has it: the sysctl's default, settable
 * until the socket has a port; when on, bind() refuses a v4-mapped
 * address with EINVAL and connect() with ENETUNREACH.  @domain is
 * AF_INET6 (TCP, the reference) or AF_INET_SDP.
 */
static void check_v6only(struct __test_metadata *_metadata, int domain)
{
	struct sockaddr_storage ss;
	socklen_t alen;
	int fd, on = 1;

	fd = socket(domain, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	/* the default: net.ipv6.bindv6only */
	EXPECT_EQ(sdp_sysctl_int("/proc/sys/net/ipv6/bindv6only"),
		  sockopt_get_int(fd, SOL_IPV6, IPV6_V6ONLY));
	ASSERT_EQ(0, setsockopt(fd, SOL_IPV6, IPV6_V6ONLY, &on, sizeof(on)));
	EXPECT_EQ(1, sockopt_get_int(fd, SOL_IPV6, IPV6_V6ONLY));
	/* An SDP socket is an IPv6 one from then on, as libtirpc expects. */
	alen = sizeof(ss);
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&ss, &alen));
	EXPECT_EQ(AF_INET6, ss.ss_family);
	EXPECT_EQ(0, sdp_addr_port(&ss));
	alen = sdp_host_addr(&ss, AF_INET6 | SDP_MAPPED, 'A', 0);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ss, alen));
	EXPECT_EQ(EINVAL, errno);
	alen = sdp_host_addr(&ss, AF_INET6 | SDP_MAPPED, 'B', 9);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&ss, alen));
	EXPECT_EQ(ENETUNREACH, errno);
	close(fd);

	fd = socket(domain, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	alen = sdp_host_addr(&ss, AF_INET6, 'A', 0);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&ss, alen));
	EXPECT_EQ(-1, setsockopt(fd, SOL_IPV6, IPV6_V6ONLY, &on, sizeof(on)));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST(ipv6_v6only_tcp)
{
	check_v6only(_metadata, AF_INET6);
}

TEST(ipv6_v6only_sdp)
{
	check_v6only(_metadata, AF_INET_SDP);
}

/*
 * A wildcard IPv6 listener with IPV6_V6ONLY takes IPv6 connections only:
 * an IPv4 connect to its port is refused, an IPv6 one accepted.
 */
static void check_v6only_listener(struct __test_metadata *_metadata,
				  int domain)
{
	struct sockaddr_in6 any = { .sin6_family = AF_INET6 };
	struct sockaddr_storage ss;
	socklen_t alen = sizeof(any);
	int lfd, fd, afd, on = 1;

	lfd = socket(domain, SOCK_STREAM, 0);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, setsockopt(lfd, SOL_IPV6, IPV6_V6ONLY, &on, sizeof(on)));
	ASSERT_EQ(0, bind(lfd, (struct sockaddr *)&any, sizeof(any)));
	ASSERT_EQ(0, listen(lfd, 4));
	ASSERT_EQ(0, getsockname(lfd, (struct sockaddr *)&any, &alen));

	fd = socket(domain == AF_INET6 ? AF_INET : domain, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	alen = sdp_host_addr(&ss, AF_INET, 'B', ntohs(any.sin6_port));
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&ss, alen));
	EXPECT_EQ(ECONNREFUSED, errno);
	close(fd);

	fd = socket(domain, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	alen = sdp_host_addr(&ss, AF_INET6, 'B', ntohs(any.sin6_port));
	ASSERT_EQ(0, connect(fd, (struct sockaddr *)&ss, alen));
	afd = accept(lfd, NULL, NULL);
	ASSERT_LE(0, afd);
	EXPECT_EQ(1, sockopt_get_int(afd, SOL_IPV6, IPV6_V6ONLY));
	close(afd);
	close(fd);
	close(lfd);
}

TEST(ipv6_v6only_listener_tcp)
{
	check_v6only_listener(_metadata, AF_INET6);
}

TEST(ipv6_v6only_listener_sdp)
{
	check_v6only_listener(_metadata, AF_INET_SDP);
}

TEST_HARNESS_MAIN
