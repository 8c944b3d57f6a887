// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp.conf lines: parsing and matching (rules.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <fnmatch.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

#define MAX_TOKENS 8

/* Splits @line in place at blanks; stops at a '#'.  Returns the count. */
static int tokenize(char *line, char **tok)
{
	int n = 0;
	char *p = line;

	while (*p) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			break;
		if (n == MAX_TOKENS)
			return -1;
		tok[n++] = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

static int parse_number(const char *s, long min, long max, long *val)
{
	char *end;

	if (!*s || !isdigit((unsigned char)*s))
		return -1;
	*val = strtol(s, &end, 10);
	return *end || *val < min || *val > max ? -1 : 0;
}

/* PORTS: `*`, N or N-M, into the rule. */
static int parse_ports(const char *s, struct sdp_rule *r)
{
	char buf[16], *dash;
	long lo, hi;

	if (!strcmp(s, "*")) {
		r->port_lo = 0;
		r->port_hi = 65535;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (parse_number(buf, 0, 65535, &lo))
		return -1;
	hi = lo;
	if (dash && parse_number(dash + 1, 0, 65535, &hi))
		return -1;
	if (hi < lo)
		return -1;
	r->port_lo = lo;
	r->port_hi = hi;
	return 0;
}

/* ADDRESS[/PREFIX] (IPv6 in brackets), or `*`, into the rule. */
static int parse_addr(const char *s, struct sdp_rule *r)
{
	char buf[64], *slash, *a = buf;
	long prefix;

	if (!strcmp(s, "*")) {
		r->family = 0;
		r->prefix = 0;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	slash = strrchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (*a == '[') {
		size_t len = strlen(a);

		if (len < 3 || a[len - 1] != ']')
			return -1;
		a[len - 1] = '\0';
		a++;
		r->family = AF_INET6;
	} else {
		r->family = AF_INET;
	}
	if (inet_pton(r->family, a, r->addr) != 1)
		return -1;
	r->prefix = r->family == AF_INET ? 32 : 128;
	if (slash) {
		if (parse_number(slash + 1, 0, r->prefix, &prefix))
			return -1;
		r->prefix = prefix;
	}
	return 0;
}

/* ADDRESS:PORTS, split at the last ':' (IPv6 addresses are in brackets). */
static int parse_addr_ports(const char *s, struct sdp_rule *r)
{
	const char *colon = strrchr(s, ':');
	char addr[64];

	if (!strcmp(s, "*"))
		return parse_addr("*", r) || parse_ports("*", r);
	if (!colon || (size_t)(colon - s) >= sizeof(addr))
		return -1;
	memcpy(addr, s, colon - s);
	addr[colon - s] = '\0';
	if (strchr(addr, ':') && addr[0] != '[')
		return -1;	/* an IPv6 address without brackets */
	return parse_addr(addr, r) || parse_ports(colon + 1, r);
}

static int parse_use(char **tok, int n, struct sdp_rule *r, char *err,
		     size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (n != 5) {
		snprintf(err, errlen, "a rule is: use MODE ROLE PROGRAM ADDRESS:PORTS");
		return -1;
	}
	if (!strcmp(tok[1], "sdp"))
		r->mode = SDP_MODE_SDP;
	else if (!strcmp(tok[1], "both"))
		r->mode = SDP_MODE_BOTH;
	else if (!strcmp(tok[1], "tcp"))
		r->mode = SDP_MODE_TCP;
	else {
		snprintf(err, errlen, "mode '%s' is not sdp, tcp or both", tok[1]);
		return -1;
	}
	if (!strcmp(tok[2], "server"))
		r->roles = SDP_ROLE_SERVER;
	else if (!strcmp(tok[2], "client"))
		r->roles = SDP_ROLE_CLIENT;
	else if (!strcmp(tok[2], "*"))
		r->roles = SDP_ROLE_SERVER | SDP_ROLE_CLIENT;
	else {
		snprintf(err, errlen, "role '%s' is not server, client or *", tok[2]);
		return -1;
	}
	if (strlen(tok[3]) >= sizeof(r->program)) {
		snprintf(err, errlen, "program pattern too long");
		return -1;
	}
	strcpy(r->program, tok[3]);
	if (parse_addr_ports(tok[4], r)) {
		snprintf(err, errlen, "'%s' is not ADDRESS[/PREFIX]:PORTS", tok[4]);
		return -1;
	}
	return 1;
}

static int parse_log(char **tok, int n, struct sdp_log_conf *log, char *err,
		     size_t errlen)
{
	long level;
	int i = 1;

	while (i < n) {
		if (!strcmp(tok[i], "min-level") && i + 1 < n) {
			if (parse_number(tok[i + 1], 1, 9, &level)) {
				snprintf(err, errlen, "min-level '%s' is not 1-9", tok[i + 1]);
				return -1;
			}
			log->min_level = level;
			i += 2;
		} else if (!strcmp(tok[i], "destination") && i + 1 < n) {
			if (!strcmp(tok[i + 1], "stderr")) {
				log->dest = SDP_LOG_STDERR;
				i += 2;
			} else if (!strcmp(tok[i + 1], "syslog")) {
				log->dest = SDP_LOG_SYSLOG;
				i += 2;
			} else if (!strcmp(tok[i + 1], "file") && i + 2 < n &&
				   strlen(tok[i + 2]) < sizeof(log->path)) {
				log->dest = SDP_LOG_FILE;
				strcpy(log->path, tok[i + 2]);
				i += 3;
			} else {
				snprintf(err, errlen, "destination is stderr, syslog or file PATH");
				return -1;
			}
		} else {
			snprintf(err, errlen, "'%s': a log line is: log [min-level N] [destination ...]",
				 tok[i]);
			return -1;
		}
	}
	return 2;
}

int sdp_parse_line(const char *line, struct sdp_rule *rule,
		   struct sdp_log_conf *log, char *err, size_t errlen)
{
	char buf[512], *tok[MAX_TOKENS];
	int n;

	if (strlen(line) >= sizeof(buf)) {
		snprintf(err, errlen, "line too long");
		return -1;
	}
	strcpy(buf, line);
	n = tokenize(buf, tok);
	if (n < 0) {
		snprintf(err, errlen, "too many words");
		return -1;
	}
	if (!n)
		return 0;
	if (!strcmp(tok[0], "use"))
		return parse_use(tok, n, rule, err, errlen);
	if (!strcmp(tok[0], "log"))
		return parse_log(tok, n, log, err, errlen);
	snprintf(err, errlen, "'%s' is neither use nor log", tok[0]);
	return -1;
}

/* The first @bits bits of @a and @b are the same. */
static int prefix_equal(const unsigned char *a, const unsigned char *b,
			int bits)
{
	int whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole))
		return 0;
	return !rest || !((a[whole] ^ b[whole]) & (0xff << (8 - rest)));
}

static int addr_matches(const struct sdp_rule *r, const struct sockaddr *sa)
{
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
	const struct sockaddr_in6 *sin6 = (const void *)sa;
	const struct sockaddr_in *sin = (const void *)sa;
	const unsigned char *a;
	int family = sa->sa_family;

	if (family == AF_INET) {
		a = (const unsigned char *)&sin->sin_addr;
	} else {
		a = sin6->sin6_addr.s6_addr;
		if (!memcmp(a, mapped, sizeof(mapped))) {	/* v4-mapped */
			family = AF_INET;
			a += 12;
		}
	}
	if (!r->family)
		return 1;
	return family == r->family && prefix_equal(a, r->addr, r->prefix);
}

enum sdp_mode sdp_match(const struct sdp_rule *rules, size_t n, int role,
			const char *program, const struct sockaddr *addr)
{
	int port;
	size_t i;

	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return SDP_MODE_TCP;
	port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
	for (i = 0; i < n; i++) {
		const struct sdp_rule *r = &rules[i];

		if (!(r->roles & role) || port < r->port_lo || port > r->port_hi ||
		    fnmatch(r->program, program, 0) || !addr_matches(r, addr))
			continue;
		return r->mode;
	}
	return SDP_MODE_TCP;
}

const char *sdp_mode_name(enum sdp_mode mode)
{
	return mode == SDP_MODE_SDP ? "sdp" : mode == SDP_MODE_BOTH ? "both" : "tcp";
}
