// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp.so: moves a program's TCP sockets onto SDP by rules, with
 * LD_PRELOAD (sdp_run sets it up).
 *
 * The rules come from LIBSDP_RULES (rules separated by ';', which come
 * first) and from the file LIBSDP_CONFIG_FILE names; without it,
 * /etc/libsdp.conf, unless LIBSDP_RULES is set.  LIBSDP_DEBUG=1 logs
 * every decision.  bind() and listen() look at the server rules, connect() at
 * the client rules, for an AF_INET or AF_INET6 stream socket of TCP
 * alone: the socket itself says what it is (SO_DOMAIN, SO_TYPE,
 * SO_PROTOCOL), so sockets made or copied any way are seen, and no
 * other is touched; nor is one that is already connecting, connected or
 * listening, or one that SDP carries (a connect() again after a
 * non-blocking one, as hiredis does, must reach the socket that the first
 * one made).  A rule of mode sdp or both replaces the socket, at
 * the same descriptor number, by an SDP socket (family 27) with the same
 * file flags, descriptor flags, options and address; both turns on SDP's
 * TCP fallback (SOL_SDP, SDP_FALLBACK), which lives in the kernel.
 * Without sdp.ko, both stays TCP and sdp fails with ENETUNREACH.
 *
 * A socket that a program added to an epoll set before it called
 * connect() or bind() leaves that set when it is replaced: the kernel
 * ties an epoll entry to the socket, not to its number.
 *
 * Deployed through /etc/ld.so.preload, the library runs in setuid
 * programs too: under secure execution (AT_SECURE) it reads none of its
 * variables (secure_getenv()) and opens no log file, so that a user
 * cannot make such a program read or append to a file of their choice.
 * A socket with a TCP-MD5 key stays TCP: SDP has no such signatures, and
 * the key cannot be read back to tell.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <syslog.h>
#include <unistd.h>

#include <linux/sdp.h>

#include "rules.h"

#define EXPORT __attribute__((visibility("default")))

#define LOG_DEBUG_LEVEL	1
#define LOG_INFO_LEVEL	4
#define LOG_WARN_LEVEL	7
#define LOG_ERROR_LEVEL	9

#define MAX_RULES 256

static struct sdp_rule rules[MAX_RULES];
static size_t nrules;
static struct sdp_log_conf log_conf = { .min_level = LOG_WARN_LEVEL };
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_file;
/*
 * What is wrong with the rules is told once per program run: a program's
 * children (sdp_run sh -c ..., a server's workers) inherit this mark.
 */
#define WARNED_ENV "LIBSDP_RULES_WARNED"
static int rules_warned;

static int (*real_connect)(int, const struct sockaddr *, socklen_t);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static int (*real_listen)(int, int);
static int (*real_setsockopt)(int, int, int, const void *, socklen_t);
static int (*real_socket)(int, int, int);

/*
 * The descriptors a TCP-MD5 key was set on (TCP_MD5SIG, TCP_MD5SIG_EXT),
 * which stay TCP; a bit each (cleared when socket() hands the number out
 * again), up to MD5_FDS (128 KiB, in pages only those who use it touch).
 * One beyond it stays TCP too, its key or not.
 */
#define MD5_FDS (1 << 20)
static unsigned long md5_fds[MD5_FDS / (8 * sizeof(unsigned long))];
#define MD5_BIT(fd) (1UL << ((fd) % (8 * sizeof(unsigned long))))
#define MD5_WORD(fd) md5_fds[(fd) / (8 * sizeof(unsigned long))]

static int md5_keyed(int fd)
{
	return fd < 0 || fd >= MD5_FDS ||
	       (__atomic_load_n(&MD5_WORD(fd), __ATOMIC_RELAXED) & MD5_BIT(fd));
}

static void sdp_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sdp_log(int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int saved = errno;

	if (level < log_conf.min_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	if (log_conf.dest == SDP_LOG_SYSLOG)
		syslog(level >= LOG_ERROR_LEVEL ? LOG_ERR :
		       level >= LOG_WARN_LEVEL ? LOG_WARNING :
		       level >= LOG_INFO_LEVEL ? LOG_INFO : LOG_DEBUG,
		       "libsdp: %s", msg);
	else
		fprintf(log_file ? log_file : stderr, "libsdp[%d]: %s\n",
			(int)getpid(), msg);
	pthread_mutex_unlock(&log_lock);
	errno = saved;
}

/* Takes one line of rules; @where names it in a message about it. */
static void take_line(const char *line, const char *where)
{
	struct sdp_rule rule;
	char err[160];
	int ret;

	ret = sdp_parse_line(line, &rule, &log_conf, err, sizeof(err));
	if (ret < 0 && !rules_warned)
		sdp_log(LOG_ERROR_LEVEL, "%s: %s; line skipped", where, err);
	else if (ret == 1 && nrules < MAX_RULES)
		rules[nrules++] = rule;
	else if (ret == 1 && !rules_warned)
		sdp_log(LOG_ERROR_LEVEL, "%s: more than %d rules; line skipped",
			where, MAX_RULES);
}

static void load_env_rules(const char *env)
{
	char *copy = strdup(env), *save = NULL, *line;
	char where[64];
	int n = 0;

	if (!copy)
		return;
	for (line = strtok_r(copy, ";\n", &save); line;
	     line = strtok_r(NULL, ";\n", &save)) {
		snprintf(where, sizeof(where), "LIBSDP_RULES, rule %d", ++n);
		take_line(line, where);
	}
	free(copy);
}

static void load_file(const char *path)
{
	char line[512], where[320];
	FILE *f = fopen(path, "re");
	int n = 0;

	if (!f) {
		if (!rules_warned)
			sdp_log(LOG_WARN_LEVEL, "cannot read %s (%s): %s",
				path, strerror(errno),
				nrules ? "LIBSDP_RULES alone" : "TCP everywhere");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(where, sizeof(where), "%s:%d", path, ++n);
		take_line(line, where);
	}
	fclose(f);
}

__attribute__((constructor)) static void libsdp_init(void)
{
	/* (NULL under secure execution: a setuid program's user sets none) */
	const char *env = secure_getenv("LIBSDP_RULES");
	const char *path = secure_getenv("LIBSDP_CONFIG_FILE");
	const char *debug = secure_getenv("LIBSDP_DEBUG");

	real_connect = dlsym(RTLD_NEXT, "connect");
	real_bind = dlsym(RTLD_NEXT, "bind");
	real_listen = dlsym(RTLD_NEXT, "listen");
	real_setsockopt = dlsym(RTLD_NEXT, "setsockopt");
	real_socket = dlsym(RTLD_NEXT, "socket");
	rules_warned = !!secure_getenv(WARNED_ENV);
	if (debug && *debug == '1')
		log_conf.min_level = LOG_DEBUG_LEVEL;
	if (env && *env)
		load_env_rules(env);
	/* (sdp_run -r without -c: its rules alone, not the system's) */
	if (!path && env && *env)
		path = "";
	else if (!path || !*path)
		path = "/etc/libsdp.conf";
	if (*path)
		load_file(path);
	if (debug && *debug == '1')
		log_conf.min_level = LOG_DEBUG_LEVEL;	/* over the file's */
	setenv(WARNED_ENV, "1", 0);	/* (no threads yet) */
	if (log_conf.dest == SDP_LOG_FILE && getauxval(AT_SECURE)) {
		log_conf.dest = SDP_LOG_STDERR;
		/* (quietly: every setuid program would say it) */
		sdp_log(LOG_DEBUG_LEVEL, "secure execution: no log file (%s), stderr instead",
			log_conf.path);
	}
	if (log_conf.dest == SDP_LOG_FILE) {
		log_file = fopen(log_conf.path, "ae");
		if (!log_file)
			sdp_log(LOG_ERROR_LEVEL, "cannot open %s: %s", log_conf.path,
				strerror(errno));
	}
	sdp_log(LOG_DEBUG_LEVEL, "%s: %zu rules", program_invocation_short_name,
		nrules);
}

/* A TCP stream socket of AF_INET or AF_INET6: what the rules apply to. */
static int is_tcp_socket(int fd)
{
	int domain, type, proto;
	socklen_t len = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) ||
	    (domain != AF_INET && domain != AF_INET6))
		return 0;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) ||
	    type != SOCK_STREAM)
		return 0;
	len = sizeof(int);
	return !getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) &&
	       proto == IPPROTO_TCP;
}

/*
 * A TCP socket that is still to connect or listen (TCP_CLOSE), and not one
 * that SDP's fallback made: those answer SOL_SDP, and stay as they are.
 */
static int is_unused_tcp_socket(int fd)
{
	struct tcp_info info;
	socklen_t len = sizeof(info);
	int path;

	if (!is_tcp_socket(fd) ||
	    getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) ||
	    info.tcpi_state != TCP_CLOSE)
		return 0;
	len = sizeof(path);
	return getsockopt(fd, SOL_SDP, SDP_PATH, &path, &len) != 0;
}

/* The options copied from the TCP socket to the SDP one that replaces it. */
static const struct {
	int level, name;
	socklen_t len;
	const char *what;
} options[] = {
	{ SOL_SOCKET, SO_REUSEADDR, sizeof(int), "SO_REUSEADDR" },
	{ SOL_SOCKET, SO_KEEPALIVE, sizeof(int), "SO_KEEPALIVE" },
	{ SOL_SOCKET, SO_LINGER, sizeof(struct linger), "SO_LINGER" },
	{ SOL_SOCKET, SO_OOBINLINE, sizeof(int), "SO_OOBINLINE" },
	{ SOL_SOCKET, SO_RCVTIMEO, sizeof(struct timeval), "SO_RCVTIMEO" },
	{ SOL_SOCKET, SO_SNDTIMEO, sizeof(struct timeval), "SO_SNDTIMEO" },
	{ SOL_SOCKET, SO_PRIORITY, sizeof(int), "SO_PRIORITY" },
	{ SOL_SOCKET, SO_MARK, sizeof(int), "SO_MARK" },
	{ IPPROTO_TCP, TCP_NODELAY, sizeof(int), "TCP_NODELAY" },
	{ IPPROTO_TCP, TCP_CORK, sizeof(int), "TCP_CORK" },
	{ IPPROTO_TCP, TCP_KEEPIDLE, sizeof(int), "TCP_KEEPIDLE" },
	{ IPPROTO_TCP, TCP_KEEPINTVL, sizeof(int), "TCP_KEEPINTVL" },
	{ IPPROTO_TCP, TCP_KEEPCNT, sizeof(int), "TCP_KEEPCNT" },
	{ IPPROTO_TCP, TCP_USER_TIMEOUT, sizeof(int), "TCP_USER_TIMEOUT" },
};

/*
 * SO_RCVBUF and SO_SNDBUF, where the program set them: the kernel reads
 * back twice what was set, and a socket that never set them reads the
 * default, which setting would pin.
 */
static void copy_buffer_sizes(int from, int to)
{
	static const int names[] = { SO_RCVBUF, SO_SNDBUF };
	int probe = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int val, def = -1;
		socklen_t len = sizeof(int);

		if (getsockopt(from, SOL_SOCKET, names[i], &val, &len))
			continue;
		len = sizeof(int);
		if (probe >= 0)
			getsockopt(probe, SOL_SOCKET, names[i], &def, &len);
		if (val == def)
			continue;
		val /= 2;
		setsockopt(to, SOL_SOCKET, names[i], &val, sizeof(val));
	}
	if (probe >= 0)
		close(probe);
}

/*
 * SO_BINDTODEVICE: a socket meant for one device (or VRF) stays on it.
 * Its failure fails the move: on all devices it would not be the socket
 * the program made.
 */
static int copy_device(int from, int to)
{
	char dev[64];
	socklen_t len = sizeof(dev);

	if (getsockopt(from, SOL_SOCKET, SO_BINDTODEVICE, dev, &len) || !len ||
	    !dev[0])
		return 0;
	return setsockopt(to, SOL_SOCKET, SO_BINDTODEVICE, dev, len);
}

/*
 * Replaces the TCP socket @fd by an SDP one at the same number, with TCP
 * fallback if @fallback.  0, or -1 with errno (then @fd is as it was).
 */
static int convert(int fd, int fallback)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	int fl, fdfl, s, one = 1;
	char buf[sizeof(struct timeval)];
	size_t i;

	fl = fcntl(fd, F_GETFL);
	fdfl = fcntl(fd, F_GETFD);
	if (fl < 0 || fdfl < 0)
		return -1;
	/* (close-on-exec: a thread's fork and exec meanwhile must not get it) */
	s = socket(AF_INET_SDP, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	for (i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		socklen_t olen = options[i].len;

		if (getsockopt(fd, options[i].level, options[i].name, buf, &olen))
			continue;
		/* (setting even a mark of 0 takes CAP_NET_ADMIN) */
		if (options[i].name == SO_MARK && options[i].level == SOL_SOCKET &&
		    !*(int *)buf)
			continue;
		if (setsockopt(s, options[i].level, options[i].name, buf, olen))
			sdp_log(LOG_DEBUG_LEVEL, "fd %d: %s not carried over: %s",
				fd, options[i].what, strerror(errno));
	}
	copy_buffer_sizes(fd, s);
	if (copy_device(fd, s))
		goto fail;
	if (fallback && setsockopt(s, SOL_SDP, SDP_FALLBACK, &one, sizeof(one)))
		goto fail;
	if (getsockname(fd, (struct sockaddr *)&addr, &len))
		goto fail;
	if (addr.ss_family == AF_INET6) {
		int v6only = 0;
		socklen_t vlen = sizeof(v6only);

		/* (also makes the SDP socket name itself IPv6 until bound) */
		getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &vlen);
		if (setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &v6only,
			       sizeof(v6only)))
			goto fail;
	}
	/* bound already: the same address and port */
	if (((struct sockaddr_in *)&addr)->sin_port &&
	    real_bind(s, (struct sockaddr *)&addr, len))
		goto fail;
	if (fcntl(s, F_SETFL, fl) ||
	    dup3(s, fd, fdfl & FD_CLOEXEC ? O_CLOEXEC : 0) < 0)
		goto fail;
	close(s);
	return 0;
fail:
	{
		int saved = errno;

		close(s);
		errno = saved;
	}
	return -1;
}

/*
 * What the rules say of a call of @role on @fd at @addr; makes the socket
 * SDP if they say so.  0 to go on with the call, or -1 with errno.
 */
static int apply_rules(int fd, int role, const struct sockaddr *addr)
{
	static int warned;
	enum sdp_mode mode;

	if (!addr || !is_unused_tcp_socket(fd))
		return 0;
	if (md5_keyed(fd)) {
		sdp_log(LOG_DEBUG_LEVEL, "fd %d stays TCP: it has a TCP-MD5 key", fd);
		return 0;
	}
	mode = sdp_match(rules, nrules, role, program_invocation_short_name,
			 addr);
	if (mode == SDP_MODE_TCP)
		return 0;
	if (!convert(fd, mode == SDP_MODE_BOTH)) {
		sdp_log(LOG_DEBUG_LEVEL, "fd %d: SDP%s for %s", fd,
			mode == SDP_MODE_BOTH ? " with TCP fallback" : "",
			role == SDP_ROLE_CLIENT ? "connect" : "bind/listen");
		return 0;
	}
	if (mode == SDP_MODE_BOTH) {
		sdp_log(LOG_DEBUG_LEVEL, "fd %d stays TCP: %s", fd, strerror(errno));
		return 0;
	}
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		sdp_log(LOG_ERROR_LEVEL, "no SDP socket (%s): a rule says sdp, so the network is unreachable",
			strerror(errno));
	errno = ENETUNREACH;
	return -1;
}

EXPORT int socket(int domain, int type, int protocol)
{
	int fd;

	/* (another library's constructor may call it before ours ran) */
	if (!real_socket)
		real_socket = dlsym(RTLD_NEXT, "socket");
	fd = real_socket(domain, type, protocol);

	if (fd >= 0 && fd < MD5_FDS)
		__atomic_fetch_and(&MD5_WORD(fd), ~MD5_BIT(fd), __ATOMIC_RELAXED);
	return fd;
}

EXPORT int setsockopt(int fd, int level, int name, const void *val,
		      socklen_t len)
{
	int ret;

	if (!real_setsockopt)
		real_setsockopt = dlsym(RTLD_NEXT, "setsockopt");
	ret = real_setsockopt(fd, level, name, val, len);
	if (!ret && level == IPPROTO_TCP &&
	    (name == TCP_MD5SIG || name == TCP_MD5SIG_EXT) && fd >= 0 &&
	    fd < MD5_FDS)
		__atomic_fetch_or(&MD5_WORD(fd), MD5_BIT(fd), __ATOMIC_RELAXED);
	return ret;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	if (apply_rules(fd, SDP_ROLE_CLIENT, addr))
		return -1;
	return real_connect(fd, addr, len);
}

EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	if (apply_rules(fd, SDP_ROLE_SERVER, addr))
		return -1;
	return real_bind(fd, addr, len);
}

/* A listen() with no bind() before: the address it will listen on. */
EXPORT int listen(int fd, int backlog)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);

	if (!getsockname(fd, (struct sockaddr *)&addr, &len) &&
	    apply_rules(fd, SDP_ROLE_SERVER, (struct sockaddr *)&addr))
		return -1;
	return real_listen(fd, backlog);
}
