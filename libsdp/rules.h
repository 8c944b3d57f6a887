/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsdp.conf: the rules that say which TCP sockets become SDP, and the
 * log settings.  The grammar of OFED's libsdp:
 *
 *   use {sdp|tcp|both} {server|client|*} PROGRAM ADDRESS:PORTS
 *   log [min-level N] [destination {stderr|syslog|file PATH}]
 *
 * PROGRAM is a glob matched against the program's name; ADDRESS is `*`,
 * an IPv4 address or an IPv6 one in brackets, each with an optional
 * /PREFIX; PORTS is `*`, a port or FIRST-LAST.  The first rule that
 * matches wins; none means TCP.
 */
#ifndef LIBSDP_RULES_H
#define LIBSDP_RULES_H

#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>

enum sdp_mode { SDP_MODE_TCP, SDP_MODE_SDP, SDP_MODE_BOTH };

/* Which calls a rule applies to: bind()/listen(), connect(), or both. */
#define SDP_ROLE_SERVER	1
#define SDP_ROLE_CLIENT	2

struct sdp_rule {
	enum sdp_mode mode;
	int roles;
	char program[64];
	int family;		/* AF_INET, AF_INET6, or 0 for any address */
	unsigned char addr[16];
	int prefix;		/* bits of addr that must match */
	int port_lo, port_hi;
};

/* The log settings: messages of @min_level and above go to @dest. */
enum sdp_log_dest { SDP_LOG_STDERR, SDP_LOG_SYSLOG, SDP_LOG_FILE };

struct sdp_log_conf {
	int min_level;
	enum sdp_log_dest dest;
	char path[256];
};

/*
 * Parses one line of a rules file into *@rule or *@log.  Returns 1 for a
 * rule, 2 for a log line, 0 for a blank line or a comment, -1 for a
 * malformed line, with why in @err.
 */
int sdp_parse_line(const char *line, struct sdp_rule *rule,
		   struct sdp_log_conf *log, char *err, size_t errlen);

/*
 * The mode of the first of @n @rules that matches a call of @role by the
 * program @program on @addr; SDP_MODE_TCP if none does.
 */
enum sdp_mode sdp_match(const struct sdp_rule *rules, size_t n, int role,
			const char *program, const struct sockaddr *addr);

const char *sdp_mode_name(enum sdp_mode mode);

#endif /* LIBSDP_RULES_H */
