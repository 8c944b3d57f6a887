// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_reuseport_test: two in-kernel SDP listeners with SO_REUSEPORT on one
 * address and port, the way only in-kernel users can make them (user space
 * cannot set SO_REUSEPORT on an SDP socket), to test the listen groups of
 * the SDP module's port table.  A test module: not installed, loaded by
 * the tests.
 *
 * debugfs, in /sys/kernel/debug/sdp_reuseport_test/:
 *   listen  write "ADDR PORT" (IPv4): creates listeners 1 and 2, sets
 *           SO_REUSEPORT on both, binds both to ADDR:PORT and listens; each
 *           accepts without blocking when its sk_data_ready says a
 *           connection is queued, counts it and closes it at once
 *           (-EBUSY while listeners are open; the counts start at 0)
 *   close1  write anything: closes listener 1 only
 *   close   write anything: closes the listeners that are open
 *   counts  "listener1=N listener2=N open1=0|1 open2=0|1 error1=E error2=E":
 *           connections accepted by each, whether each is open, and the
 *           first error its accept met other than -EAGAIN (0 if none)
 */
#include <linux/inet.h>
#include <linux/in.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include <uapi/linux/sdp.h>

#include "sdp_ktest.h"

#define RPT_LISTENERS	2
#define RPT_BACKLOG	16
#define RPT_CMD_SIZE	64	/* a command line and its NUL */

/**
 * struct rpt_listener - one listener and what it accepted
 * @sock: the listening socket, NULL when closed (under rpt_lock)
 * @accept_work: accepts what is queued, queued by rpt_data_ready
 * @accepted: connections accepted
 * @error: the first error of an accept other than -EAGAIN
 * @saved_data_ready: the socket's sk_data_ready before ours
 */
struct rpt_listener {
	struct socket	*sock;
	struct work_struct accept_work;
	atomic_t	accepted;
	atomic_t	error;
	void		(*saved_data_ready)(struct sock *sk);
};

static struct rpt_listener rpt_listeners[RPT_LISTENERS];
static DEFINE_MUTEX(rpt_lock);	/* opens and closes the listeners; rpt_counts */

/* Accepts and closes all that is queued; the socket stays until we end. */
static void rpt_accept_work(struct work_struct *work)
{
	struct rpt_listener *l = container_of(work, struct rpt_listener,
					      accept_work);
	struct socket *child;
	int ret;

	for (;;) {
		ret = kernel_accept(l->sock, &child, O_NONBLOCK);
		if (ret)
			break;
		atomic_inc(&l->accepted);
		sock_release(child);
	}
	if (ret != -EAGAIN)
		atomic_cmpxchg(&l->error, 0, ret);
}

/* SDP calls it with the listener's lock held, when a child is queued. */
static void rpt_data_ready(struct sock *sk)
{
	void (*saved)(struct sock *sk) = NULL;
	struct rpt_listener *l;

	read_lock_bh(&sk->sk_callback_lock);
	l = sk->sk_user_data;
	if (l) {
		saved = l->saved_data_ready;
		queue_work(system_wq, &l->accept_work);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (saved)
		saved(sk);
}

static void rpt_close_one(struct rpt_listener *l)
{
	struct sock *sk;

	if (!l->sock)
		return;
	sk = l->sock->sk;
	/* Under the socket lock: no rpt_data_ready runs after this. */
	lock_sock(sk);
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = l->saved_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);
	cancel_work_sync(&l->accept_work);
	sock_release(l->sock);
	l->sock = NULL;
}

static int rpt_open_one(struct rpt_listener *l, struct sockaddr_in *sin)
{
	struct sock *sk;
	int ret;

	ret = sock_create_kern(&init_net, AF_INET_SDP, SOCK_STREAM, 0,
			       &l->sock);
	if (ret) {
		l->sock = NULL;
		return ret;
	}
	sk = l->sock->sk;
	sock_set_reuseport(sk);
	write_lock_bh(&sk->sk_callback_lock);
	l->saved_data_ready = sk->sk_data_ready;
	sk->sk_user_data = l;
	sk->sk_data_ready = rpt_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);

	ret = kernel_bind(l->sock, (struct sockaddr_unsized *)sin, sizeof(*sin));
	if (!ret)
		ret = kernel_listen(l->sock, RPT_BACKLOG);
	return ret;
}

/* "ADDR PORT": both listeners, or none and an error. */
static int rpt_listen(const char *cmd)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char addr[16];
	u16 port;
	int i, ret = 0;

	if (sscanf(cmd, "%15s %hu", addr, &port) != 2 || !port ||
	    !in4_pton(addr, -1, (u8 *)&sin.sin_addr.s_addr, '\0', NULL))
		return -EINVAL;
	sin.sin_port = htons(port);

	for (i = 0; i < RPT_LISTENERS; i++)
		if (rpt_listeners[i].sock)
			return -EBUSY;
	for (i = 0; i < RPT_LISTENERS && !ret; i++) {
		atomic_set(&rpt_listeners[i].accepted, 0);
		atomic_set(&rpt_listeners[i].error, 0);
		ret = rpt_open_one(&rpt_listeners[i], &sin);
	}
	if (ret)
		for (i = 0; i < RPT_LISTENERS; i++)
			rpt_close_one(&rpt_listeners[i]);
	return ret;
}

static int rpt_close1(const char *cmd)
{
	if (!rpt_listeners[0].sock)
		return -ENOTCONN;
	rpt_close_one(&rpt_listeners[0]);
	return 0;
}

static int rpt_close_all(const char *cmd)
{
	int i;

	for (i = 0; i < RPT_LISTENERS; i++)
		rpt_close_one(&rpt_listeners[i]);
	return 0;
}

/* What the counts file shows, written before each read under rpt_lock. */
static void rpt_counts_update(char *buf, size_t size)
{
	struct rpt_listener *l = rpt_listeners;

	scnprintf(buf, size,
		  "listener1=%d listener2=%d open1=%d open2=%d error1=%d error2=%d\n",
		  atomic_read(&l[0].accepted), atomic_read(&l[1].accepted),
		  !!l[0].sock, !!l[1].sock, atomic_read(&l[0].error),
		  atomic_read(&l[1].error));
}

static struct sdp_ktest_cmd rpt_listen_cmd = {
	.run	= rpt_listen,
	.lock	= &rpt_lock,
	.size	= RPT_CMD_SIZE,
};

static struct sdp_ktest_cmd rpt_close1_cmd = {
	.run	= rpt_close1,
	.lock	= &rpt_lock,
	.size	= RPT_CMD_SIZE,
};

static struct sdp_ktest_cmd rpt_close_cmd = {
	.run	= rpt_close_all,
	.lock	= &rpt_lock,
	.size	= RPT_CMD_SIZE,
};

static char rpt_counts[160];

static struct sdp_ktest_text rpt_counts_text = {
	.buf	= rpt_counts,
	.size	= sizeof(rpt_counts),
	.lock	= &rpt_lock,
	.update	= rpt_counts_update,
};

static const struct sdp_ktest_file rpt_files[] = {
	{ .name = "listen",	.cmd = &rpt_listen_cmd },
	{ .name = "close1",	.cmd = &rpt_close1_cmd },
	{ .name = "close",	.cmd = &rpt_close_cmd },
	{ .name = "counts",	.text = &rpt_counts_text },
};

static int __init rpt_init(void)
{
	int i;

	for (i = 0; i < RPT_LISTENERS; i++)
		INIT_WORK(&rpt_listeners[i].accept_work, rpt_accept_work);
	return sdp_ktest_init("sdp_reuseport_test", rpt_files,
			      ARRAY_SIZE(rpt_files));
}

static void __exit rpt_exit(void)
{
	sdp_ktest_exit();
	mutex_lock(&rpt_lock);
	rpt_close_all(NULL);
	mutex_unlock(&rpt_lock);
}

module_init(rpt_init);
module_exit(rpt_exit);

MODULE_DESCRIPTION("Test of SO_REUSEPORT listener groups of SDP sockets");
MODULE_LICENSE("GPL");
