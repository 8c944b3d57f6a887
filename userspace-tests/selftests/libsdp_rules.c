// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp_rules: the libsdp.conf grammar (libsdp/rules.c): rules and log
 * lines that parse, lines that do not and why, and which rule a call
 * matches: first match wins, roles, program globs, IPv4 and IPv6
 * prefixes, v4-mapped addresses, port ranges, and TCP when none matches.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "kselftest_harness.h"
#include "rules.h"

static struct sdp_rule rules[16];
static size_t nrules;
static struct sdp_log_conf log_conf;

/* Parses @text's lines (separated by '\n') into rules; 0 or the count of bad ones. */
static int load(const char *text)
{
	char buf[2048], *save = NULL, *line, err[160];
	int bad = 0;

	nrules = 0;
	memset(&log_conf, 0, sizeof(log_conf));
	strcpy(buf, text);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int ret = sdp_parse_line(line, &rules[nrules], &log_conf, err,
					 sizeof(err));

		if (ret == 1)
			nrules++;
		else if (ret < 0)
			bad++;
	}
	return bad;
}

static enum sdp_mode match(int role, const char *prog, const char *addr,
			   int port)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in sin = { .sin_family = AF_INET };

	if (inet_pton(AF_INET, addr, &sin.sin_addr) == 1) {
		sin.sin_port = htons(port);
		return sdp_match(rules, nrules, role, prog,
				 (struct sockaddr *)&sin);
	}
	inet_pton(AF_INET6, addr, &sin6.sin6_addr);
	sin6.sin6_port = htons(port);
	return sdp_match(rules, nrules, role, prog, (struct sockaddr *)&sin6);
}

#define C SDP_ROLE_CLIENT
#define S SDP_ROLE_SERVER

TEST(parses_the_grammar)
{
	struct sdp_rule r;
	char err[160];

	EXPECT_EQ(0, sdp_parse_line("", &r, &log_conf, err, sizeof(err)));
	EXPECT_EQ(0, sdp_parse_line("   # a comment", &r, &log_conf, err, sizeof(err)));
	ASSERT_EQ(1, sdp_parse_line("use both server redis-* 10.0.0.0/8:6379",
				    &r, &log_conf, err, sizeof(err)));
	EXPECT_EQ(SDP_MODE_BOTH, r.mode);
	EXPECT_EQ(S, r.roles);
	EXPECT_STREQ("redis-*", r.program);
	EXPECT_EQ(AF_INET, r.family);
	EXPECT_EQ(8, r.prefix);
	EXPECT_EQ(6379, r.port_lo);
	EXPECT_EQ(6379, r.port_hi);
	ASSERT_EQ(1, sdp_parse_line("use sdp * * [fd99::]/64:5000-5100 # tail",
				    &r, &log_conf, err, sizeof(err)));
	EXPECT_EQ(AF_INET6, r.family);
	EXPECT_EQ(64, r.prefix);
	EXPECT_EQ(5000, r.port_lo);
	EXPECT_EQ(5100, r.port_hi);
	EXPECT_EQ(S | C, r.roles);
	ASSERT_EQ(1, sdp_parse_line("use tcp client * *", &r, &log_conf, err, sizeof(err)));
	EXPECT_EQ(0, r.family);
	EXPECT_EQ(65535, r.port_hi);
	ASSERT_EQ(2, sdp_parse_line("log min-level 1 destination file /tmp/x.log",
				    &r, &log_conf, err, sizeof(err)));
	EXPECT_EQ(1, log_conf.min_level);
	EXPECT_EQ(SDP_LOG_FILE, log_conf.dest);
	EXPECT_STREQ("/tmp/x.log", log_conf.path);
	ASSERT_EQ(2, sdp_parse_line("log destination syslog", &r, &log_conf, err, sizeof(err)));
	EXPECT_EQ(SDP_LOG_SYSLOG, log_conf.dest);
}

TEST(refuses_malformed_lines)
{
	static const char *const bad[] = {
		"use rdma * * *:*",		/* mode */
		"use sdp everyone * *:*",	/* role */
		"use sdp * *",			/* too few words */
		"use sdp * * *:* extra",	/* too many */
		"use sdp * * 10.0.0.1",		/* no port */
		"use sdp * * 10.0.0.1:70000",	/* port out of range */
		"use sdp * * 10.0.0.1:90-80",	/* range backwards */
		"use sdp * * 10.0.0.1/33:80",	/* prefix too long */
		"use sdp * * 10.0.0.256:80",	/* not an address */
		"use sdp * * fd99::1:80",	/* IPv6 without brackets */
		"use sdp * * [fd99::1:80",	/* unclosed bracket */
		"log min-level 0",
		"log destination tape",
		"log destination file",
		"listen sdp * * *:*",		/* unknown keyword */
	};
	struct sdp_rule r;
	char err[160];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		EXPECT_EQ(-1, sdp_parse_line(bad[i], &r, &log_conf, err,
					     sizeof(err)))
			TH_LOG("accepted: %s", bad[i]);
		EXPECT_NE(0, strlen(err)) TH_LOG("no reason for: %s", bad[i]);
	}
}

TEST(first_match_wins)
{
	ASSERT_EQ(0, load("use tcp client * 10.0.0.9:*\n"
			  "use sdp client * 10.0.0.0/24:*\n"
			  "use both * * *:5201\n"));
	EXPECT_EQ(SDP_MODE_TCP, match(C, "prog", "10.0.0.9", 80));
	EXPECT_EQ(SDP_MODE_SDP, match(C, "prog", "10.0.0.8", 80));
	EXPECT_EQ(SDP_MODE_SDP, match(C, "prog", "10.0.0.8", 5201));
	EXPECT_EQ(SDP_MODE_BOTH, match(C, "prog", "10.0.1.8", 5201));
	EXPECT_EQ(SDP_MODE_BOTH, match(S, "prog", "0.0.0.0", 5201));
	/* no rule: TCP */
	EXPECT_EQ(SDP_MODE_TCP, match(C, "prog", "10.0.1.8", 5202));
}

TEST(roles_and_programs)
{
	ASSERT_EQ(0, load("use sdp server iperf3 *:*\n"
			  "use both client redis-b* *:*\n"));
	EXPECT_EQ(SDP_MODE_SDP, match(S, "iperf3", "0.0.0.0", 5201));
	EXPECT_EQ(SDP_MODE_TCP, match(C, "iperf3", "10.0.0.1", 5201));
	EXPECT_EQ(SDP_MODE_TCP, match(S, "iperf", "0.0.0.0", 5201));
	EXPECT_EQ(SDP_MODE_BOTH, match(C, "redis-benchmark", "10.0.0.1", 6379));
	EXPECT_EQ(SDP_MODE_TCP, match(S, "redis-benchmark", "10.0.0.1", 6379));
}

TEST(addresses_and_ports)
{
	ASSERT_EQ(0, load("use sdp * * [fd99::]/64:*\n"
			  "use both * * 10.99.0.0/16:100-200\n"));
	EXPECT_EQ(SDP_MODE_SDP, match(C, "p", "fd99::2", 80));
	EXPECT_EQ(SDP_MODE_TCP, match(C, "p", "fd98::2", 80));
	EXPECT_EQ(SDP_MODE_BOTH, match(C, "p", "10.99.3.4", 100));
	EXPECT_EQ(SDP_MODE_BOTH, match(C, "p", "10.99.3.4", 200));
	EXPECT_EQ(SDP_MODE_TCP, match(C, "p", "10.99.3.4", 201));
	EXPECT_EQ(SDP_MODE_TCP, match(C, "p", "10.98.3.4", 150));
	/* a v4-mapped address is its IPv4 one */
	EXPECT_EQ(SDP_MODE_BOTH, match(C, "p", "::ffff:10.99.0.2", 150));
	/* an IPv4 rule never takes a native IPv6 address, nor the reverse */
	ASSERT_EQ(0, load("use sdp * * 0.0.0.0/0:*\n"));
	EXPECT_EQ(SDP_MODE_TCP, match(C, "p", "fd99::2", 80));
	EXPECT_EQ(SDP_MODE_SDP, match(C, "p", "192.0.2.1", 80));
}

TEST(bad_lines_leave_the_rest)
{
	EXPECT_EQ(2, load("use sdp * * *:1\n"
			  "use nonsense\n"
			  "use both * * *:2\n"
			  "log min-level 99\n"
			  "use tcp * * *:3\n"));
	EXPECT_EQ(3, nrules);
	EXPECT_EQ(SDP_MODE_BOTH, match(C, "p", "10.0.0.1", 2));
}

TEST_HARNESS_MAIN
