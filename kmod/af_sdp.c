// SPDX-License-Identifier: GPL-2.0
/*
 * AF_INET_SDP: the socket family, its socket calls, and the module.
 *
 * An SDP socket looks like a TCP socket to its user: the same addresses,
 * state numbers and errno values.  Underneath, each connection is an RC
 * queue pair set up with the RDMA CM (sdp_cm.c).
 */
#include <linux/module.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <net/ip.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "sdp.h"

#define CREATE_TRACE_POINTS
#include "sdp_trace.h"

/*
 * Credits per connection: a promise bounded by the socket's receive space,
 * not buffers set aside (sdp_dev.c).  A credit comes back only once the
 * peer's message was taken off the device and a credit update crossed the
 * link, so the credits must cover that round trip at the link's rate, as
 * TCP's window does: 64, as the historical SDP's ring.  With 16, a stream
 * of copied 64 KiB sends stalled on credits 350-650 times a second.
 */
unsigned int sdp_rx_ring_size = 64;
module_param_named(rx_ring_size, sdp_rx_ring_size, uint, 0444);
MODULE_PARM_DESC(rx_ring_size, "Credits per connection: receive buffers its peer may fill at once (3-4096)");

/*
 * The receive buffers each RDMA device shares among its connections
 * (sdp_dev.c): 128 of 64 KiB, 8 MiB a device, room for eight connections
 * that send at full speed at the same moment.
 */
unsigned int sdp_rx_pool_size = 128;
module_param_named(rx_pool_size, sdp_rx_pool_size, uint, 0444);
MODULE_PARM_DESC(rx_pool_size, "Receive buffers per RDMA device, shared by its connections (16-65536)");

/*
 * 64 KiB, the historical SDP's largest: half as many messages,
 * completions and credit updates per byte as 32 KiB, which took qperf's
 * sdp_bw at 64 KiB from about 0.8 to 0.9 of rc_bw on 6.1 and 7.3 with no
 * cost to 64 B latency.  The buffers are the device's, not a connection's
 * (the pool above), and are made of single pages (sdp_buf.c), so the size
 * costs neither idle memory nor a high-order allocation.
 */
unsigned int sdp_rx_buf_size = 65536;
module_param_named(rx_buf_size, sdp_rx_buf_size, uint, 0444);
MODULE_PARM_DESC(rx_buf_size, "Size of one receive buffer in bytes (1024-1048576)");

unsigned int sdp_tx_ring_size = 16;
module_param_named(tx_ring_size, sdp_tx_ring_size, uint, 0444);
MODULE_PARM_DESC(tx_ring_size, "Sends in flight per connection (2-4096)");

/*
 * A blocking reader that waits for the answer to what it sent spins up to
 * this long for it before it sleeps, as long as its waits are this short
 * (the historical SDP's recv_poll, which spun 700 us): a ping-pong's reply
 * comes while it spins, and the wake-up it saves is most of a small
 * message's latency.  The reader of a one-way stream, or one whose waits
 * are longer, such as one of many mostly idle connections, does not spin
 * (sdp_rx_busy_poll()).  1000 us covers a round trip of the emulated
 * link on a slow host (about 700 us), where 200 us met under 2% of the
 * replies and the spin was lost; a real link's takes a few us, and the
 * window only bounds the wait for a peer that answers late.  0 turns it
 * off.
 */
unsigned int sdp_recv_poll_us = 1000;
module_param_named(recv_poll_us, sdp_recv_poll_us, uint, 0644);
MODULE_PARM_DESC(recv_poll_us, "Microseconds a blocking reader spins for data before it sleeps, while its waits are that short (default 1000; 0: never)");

/*
 * Blocking sends of at least this many bytes from user memory go from the
 * caller's pages where that pays (sdp_zcopy.c): 64 KiB, as the historical
 * SDP's.
 */
unsigned int sdp_zcopy_thresh = 65536;
module_param_named(zcopy_thresh, sdp_zcopy_thresh, uint, 0644);
MODULE_PARM_DESC(zcopy_thresh, "Blocking sends of at least this many bytes go from the caller's pages where that pays (0: never)");

/*
 * Whether they do so also where the device raises its completions in
 * process context (sdp_zcopy_pays()); by default they are copied there.
 */
bool sdp_zcopy_task_cq;
module_param_named(zcopy_task_cq, sdp_zcopy_task_cq, bool, 0644);
MODULE_PARM_DESC(zcopy_task_cq, "Sends of zcopy_thresh bytes go from the caller's pages also on a device that raises completions in process context (default N: copied)");

/*
 * Whether a connection sends them from the pages only while that has
 * cost it less than copying them (sdp_zcopy_pick()), or always.
 */
bool sdp_zcopy_adapt = true;
module_param_named(zcopy_adapt, sdp_zcopy_adapt, bool, 0644);
MODULE_PARM_DESC(zcopy_adapt, "Sends of zcopy_thresh bytes go from the caller's pages only while that costs the connection less time than copying them (default Y; N: always)");

/*
 * Whether new sockets offer read zero-copy (SDP_READ_ZCOPY's default):
 * the peer RDMA-Reads such sends from the caller's pages, straight into
 * its reader's buffer when one waits (sdp_srcavail.c, sdp_rdma_read.c).
 */
bool sdp_read_zcopy = true;
module_param_named(read_zcopy, sdp_read_zcopy, bool, 0644);
MODULE_PARM_DESC(read_zcopy, "New sockets offer read zero-copy: the peer RDMA-Reads sends of read_zcopy_thresh bytes or more (default Y)");

/*
 * The least send that goes by SrcAvail, to a peer that takes part: a
 * send returns only once the peer has read it, so each costs a round
 * trip that a stream of Data messages does not wait for; 256 KiB makes
 * that a small part of the transfer.  Smaller ones down to zcopy_thresh
 * go from the caller's pages as Data messages.
 */
unsigned int sdp_max_user_conns = 16384;
module_param_named(max_user_conns, sdp_max_user_conns, uint, 0644);
MODULE_PARM_DESC(max_user_conns, "Connections of users' sockets (not the kernel's, as NFS's) per network namespace; more get ENOBUFS, or go TCP with fallback; 0: no bound (default 16384)");

unsigned int sdp_read_zcopy_thresh = 262144;
module_param_named(read_zcopy_thresh, sdp_read_zcopy_thresh, uint, 0644);
MODULE_PARM_DESC(read_zcopy_thresh, "Blocking sends of at least this many bytes (and zcopy_thresh) go by SrcAvail to a peer that offers read zero-copy");

unsigned int sdp_resolve_timeout_ms = 2000;
module_param_named(resolve_timeout_ms, sdp_resolve_timeout_ms, uint, 0644);
MODULE_PARM_DESC(resolve_timeout_ms, "Address and route resolution time limit in ms");

unsigned int sdp_retry_count = 5;
module_param_named(retry_count, sdp_retry_count, uint, 0444);
MODULE_PARM_DESC(retry_count, "RC transport retries before a peer is dead (0-7)");

unsigned int sdp_close_timeout_ms = 10000;
module_param_named(close_timeout_ms, sdp_close_timeout_ms, uint, 0644);
MODULE_PARM_DESC(close_timeout_ms, "Time an orderly close may take before it aborts, in ms");

unsigned int sdp_tx_stall_timeout_ms = 15000;
module_param_named(tx_stall_timeout_ms, sdp_tx_stall_timeout_ms, uint, 0644);
MODULE_PARM_DESC(tx_stall_timeout_ms, "Time a posted send may take before the connection times out, in ms");

/*
 * Long enough for an RDMA CM that answers, under Soft-RoCE on a slow
 * machine too; short beside the CM's own limit (about a minute), which a
 * peer with no RDMA device makes a connect() wait out.
 */
unsigned int sdp_fallback_timeout_ms = 5000;
module_param_named(fallback_timeout_ms, sdp_fallback_timeout_ms, uint, 0644);
MODULE_PARM_DESC(fallback_timeout_ms, "Time a connect() with TCP fallback gives SDP before it goes TCP, in ms (0: the RDMA CM's own)");

/*
 * Connection teardown work.  Unbound: nothing in it wants the CPU that
 * queued it, and the newest kernels warn at a workqueue that says neither.
 */
struct workqueue_struct *sdp_wq;

static struct proto sdp_proto = {
	.name		= "SDP",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct sdp_sock),
	.keepalive	= sdp_set_keepalive,
	.release_cb	= sdp_release_cb,
	.stream_memory_free = sdp_stream_memory_free,
};

static const struct proto_ops sdp_ops;

static void sdp_destruct(struct sock *sk)
{
	__skb_queue_purge(&sk->sk_receive_queue);
	sdp_sock_list_del(sk);
	sdp_fb_free(sk);
}

/* A new socket: a user's with @sock, or a passive child without. */
struct sock *sdp_sk_alloc(struct net *net, struct socket *sock, int kern)
{
	struct sdp_sock *ssk;
	struct sock *sk;

	sk = sk_alloc(net, PF_INET_SDP, GFP_KERNEL, &sdp_proto, kern);
	if (!sk)
		return NULL;

	sock_init_data(sock, sk);
	sk->sk_type = SOCK_STREAM;
	sk->sk_protocol = IPPROTO_TCP;
	sk->sk_destruct = sdp_destruct;
	sk->sk_write_space = sdp_write_space;
	sk->sk_ipv6only = net->ipv6.sysctl.bindv6only;

	ssk = sdp_sk(sk);
	ssk->addr_family = AF_INET;
	ssk->read_zcopy = READ_ONCE(sdp_read_zcopy);
	INIT_LIST_HEAD(&ssk->accept_queue);
	INIT_LIST_HEAD(&ssk->accept_node);
	INIT_LIST_HEAD(&ssk->listen_node);
	sdp_sock_list_add(sk);
	return sk;
}

/* Gives @sk a new connection, with a CM id not bound yet. */
int sdp_conn_new(struct sock *sk)
{
	struct sdp_conn *conn;

	conn = sdp_conn_alloc(sk, NULL);
	if (IS_ERR(conn))
		return PTR_ERR(conn);
	sdp_sk(sk)->conn = conn;
	return 0;
}

/*
 * An active open of a bound socket: its CM id takes the socket's address,
 * so that the peer sees its port.  The port table allowed the port; the
 * CM is told to let other bound ids share it, and refuses it only beside
 * a listener (SO_REUSEPORT) or another CM user.  Socket lock held.
 */
static int sdp_conn_bind(struct sock *sk)
{
	struct sockaddr_storage addr, cm_addr;
	struct rdma_cm_id *id = sdp_sk(sk)->conn->id;
	int ret;

	/* Bound by an attempt that failed before it started: as it is. */
	if (((struct sockaddr_in *)&id->route.addr.src_addr)->sin_port)
		return 0;
	sdp_fill_sockaddr(sk, (struct sockaddr *)&addr, false);
	sdp_cm_sockaddr((struct sockaddr *)&addr, &cm_addr);
	rdma_set_reuseaddr(id, 1);
	ret = rdma_bind_addr(id, (struct sockaddr *)&cm_addr);
	return ret == -EADDRNOTAVAIL ? -EADDRINUSE : ret;
}

/*
 * Wakes whoever sleeps on the socket: wake_up(), not the interruptible
 * kind, as the zero-copy waits sleep killable, or idle, past a signal.
 */
void sdp_wake_sleepers(struct sock *sk)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up(&wq->wait);
	rcu_read_unlock();
}

/* Reports @err (a negative errno) and closes the socket, as TCP does. */
void sdp_set_error(struct sock *sk, int err)
{
	sk->sk_err = -err;
	sk->sk_state = TCP_CLOSE;
	sk_error_report(sk);
	sk->sk_state_change(sk);
}

static int sdp_create(struct net *net, struct socket *sock, int protocol,
		      int kern)
{
	struct sock *sk;
	int ret;

	if (sock->type != SOCK_STREAM)
		return -ESOCKTNOSUPPORT;
	if (protocol && protocol != IPPROTO_TCP)
		return -EPROTONOSUPPORT;

	sock->state = SS_UNCONNECTED;
	sock->ops = &sdp_ops;
	sk = sdp_sk_alloc(net, sock, kern);
	if (!sk)
		return -ENOMEM;

	ret = sdp_conn_new(sk);
	if (ret) {
		sock_orphan(sk);
		sock->sk = NULL;
		sock_put(sk);
		return ret;
	}
	return 0;
}

/*
 * A passive child takes its listener's options, as TCP's accepted sockets
 * do (sk_clone_lock() and tcp_create_openreq_child()).
 */
void sdp_inherit(struct sock *sk, const struct sock *lsk)
{
	const struct sdp_sock *lssk = sdp_sk(lsk);
	struct sdp_sock *ssk = sdp_sk(sk);

	sock_copy_flags(sk, (struct sock *)lsk);
	sk->sk_rcvbuf = lsk->sk_rcvbuf;
	sk->sk_sndbuf = lsk->sk_sndbuf;
	sk->sk_userlocks = lsk->sk_userlocks;
	sk->sk_rcvtimeo = lsk->sk_rcvtimeo;
	sk->sk_sndtimeo = lsk->sk_sndtimeo;
	sk->sk_rcvlowat = lsk->sk_rcvlowat;
	sk->sk_lingertime = lsk->sk_lingertime;
	sk->sk_priority = lsk->sk_priority;
	sk->sk_mark = lsk->sk_mark;
	sk->sk_bound_dev_if = lsk->sk_bound_dev_if;
	sk->sk_reuse = lsk->sk_reuse;
	sk->sk_reuseport = lsk->sk_reuseport;
	sk->sk_ipv6only = lsk->sk_ipv6only;
	ssk->addr_family = lssk->addr_family;
	ssk->nodelay = lssk->nodelay;
	ssk->cork = lssk->cork;
	ssk->user_mss = lssk->user_mss;
	ssk->keepidle = lssk->keepidle;
	ssk->keepintvl = lssk->keepintvl;
	ssk->keepcnt = lssk->keepcnt;
	ssk->user_timeout = lssk->user_timeout;
	ssk->read_zcopy = lssk->read_zcopy;
}

/*
 * Takes @sk, a child that accept() never took, off its listener, which
 * it returns for sdp_child_release(); NULL if another path took it off
 * already (each child's @parent is cleared once, under its lock).  The
 * child is closed and orphaned.  Socket lock held.
 */
struct sock *sdp_child_unhook(struct sock *sk)
{
	struct sock *lsk = sdp_sk(sk)->parent;

	if (!lsk)
		return NULL;
	sdp_sk(sk)->parent = NULL;
	sk->sk_state = TCP_CLOSE;
	sock_orphan(sk);
	return lsk;
}

/*
 * The end of a child that sdp_child_unhook() took off @lsk: its place in
 * the listener's backlog and its reference on the listener go, and the
 * child's own reference, which accept() would have handed to its socket.
 * Nothing if @lsk is NULL.  No lock held; @sk may be freed.
 */
void sdp_child_release(struct sock *sk, struct sock *lsk)
{
	if (!lsk)
		return;
	lock_sock(lsk);
	sk_acceptq_removed(lsk);
	release_sock(lsk);
	sock_put(lsk);
	sock_put(sk);
}

/**
 * sdp_child_end - ends a child that accept() never took
 * @sk: the child
 * @destroy_id: destroy its CM id too; false in a CM handler of that id,
 *	which returns 1 for the CM to destroy it
 *
 * Takes the child off its listener (sdp_child_unhook()) and resets and
 * frees its connection, as TCP resets its queued connections.  No lock
 * held; @sk may be freed.
 *
 * Return: whether it had a connection to free: none when its teardown
 * owns it (the teardown destroys that CM id), or it never got one.
 */
bool sdp_child_end(struct sock *sk, bool destroy_id)
{
	struct sdp_conn *conn;
	struct sock *lsk;

	lock_sock(sk);
	conn = sdp_conn_take(sk);
	lsk = sdp_child_unhook(sk);
	release_sock(sk);

	sdp_conn_destroy(conn, destroy_id);
	sdp_child_release(sk, lsk);
	return conn;
}

static int sdp_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk, *child, *tmp;
	struct sdp_conn *conn = NULL;
	LIST_HEAD(children);

	if (!sk)
		return 0;
	ssk = sdp_sk(sk);

	/* First: no more connection requests come to it. */
	sdp_port_unbind(sk);
	lock_sock(sk);
	list_splice_init(&ssk->accept_queue, &children);
	if (ssk->conn && sdp_connected(sk)) {
		/* The connection closes on its own time, holding the socket. */
		sdp_close_connected(sk);
	} else {
		conn = sdp_conn_take(sk);
		sk->sk_state = TCP_CLOSE;
	}
	sk->sk_shutdown = SHUTDOWN_MASK;
	sock_orphan(sk);
	release_sock(sk);
	sock->sk = NULL;

	/* (orphaned, the socket can no longer take up a TCP connection) */
	sdp_fb_release(sk);
	/*
	 * An F_SETFL O_ASYNC that raced a fallback's handover, its
	 * sock_fasync() waiting for our lock meanwhile, left its entry here,
	 * where the file's close, now the TCP socket's, does not look.
	 */
	if (sock->wq.fasync_list && sock->file)
		fasync_helper(-1, sock->file, 0, &sock->wq.fasync_list);
	sdp_conn_destroy(conn, true);
	list_for_each_entry_safe(child, tmp, &children, accept_node) {
		list_del_init(&child->accept_node);
		sdp_child_end(&child->isk.sk, true);
	}
	sock_put(sk);
	return 0;
}

static int sdp_bind(struct socket *sock, struct sockaddr_unsized *addr, int len)
{
	struct sockaddr *uaddr = (struct sockaddr *)addr;
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sockaddr_in *sin = (struct sockaddr_in *)uaddr;
	struct sockaddr_in unspec;
	unsigned short port;
	int ret;

	/* As inet_bind(): AF_UNSPEC with INADDR_ANY means AF_INET. */
	if (len >= (int)sizeof(*sin) && sin->sin_family == AF_UNSPEC &&
	    sin->sin_addr.s_addr == htonl(INADDR_ANY)) {
		memcpy(&unspec, sin, sizeof(unspec));
		unspec.sin_family = AF_INET;
		uaddr = (struct sockaddr *)&unspec;
	}

	ret = sdp_check_sockaddr(uaddr, len);
	if (ret)
		return ret;

	port = ntohs(sin->sin_port);
	if (port && inet_port_requires_bind_service(sock_net(sk), port) &&
	    !ns_capable(sock_net(sk)->user_ns, CAP_NET_BIND_SERVICE))
		return -EACCES;

	ret = sdp_check_local(sock_net(sk), uaddr);
	if (ret)
		return ret;

	lock_sock(sk);
	ret = -EINVAL;
	if (sk->sk_state != TCP_CLOSE || ssk->bound ||
	    sdp_mapped_on_v6only(sk, uaddr))
		goto out;

	ret = sdp_port_bind(sk, uaddr);
	if (ret)
		goto out;
	ssk->addr_family = uaddr->sa_family;
	ssk->bound = true;
out:
	release_sock(sk);
	return ret;
}

static int sdp_listen(struct socket *sock, int backlog)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int ret;

	lock_sock(sk);
	ret = -EINVAL;
	if (sock->state != SS_UNCONNECTED)
		goto out;

	sk->sk_max_ack_backlog = backlog;
	if (sk->sk_state == TCP_LISTEN) {
		/* as TCP: a second listen() only sets the backlog */
		ret = sdp_fb_listen(sk, backlog);
		goto out;
	}

	ret = -EINVAL;
	if (sk->sk_state != TCP_CLOSE)
		goto out;

	/* An unbound socket listens on the IPv4 wildcard, as TCP's would. */
	if (!ssk->bound) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		ret = sdp_port_bind(sk, (struct sockaddr *)&any);
		if (ret)
			goto out;
		ssk->bound = true;
	}
	ret = sdp_fb_listen(sk, backlog);
	if (ret)
		goto out;
	ret = sdp_port_listen(sk, backlog);
	if (ret)
		goto out;
	sk->sk_state = TCP_LISTEN;
out:
	release_sock(sk);
	return ret;
}

static long sdp_wait_for_connect(struct sock *sk, long timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);

	add_wait_queue(sk_sleep(sk), &wait);
	while (sk->sk_state == TCP_SYN_SENT) {
		if (signal_pending(current) || !timeo)
			break;
		sk_wait_event(sk, &timeo, sk->sk_state != TCP_SYN_SENT, &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return timeo;
}

/* Follows __inet_stream_connect(), state by state. */
static int sdp_connect(struct socket *sock, struct sockaddr_unsized *addr,
		       int len, int flags)
{
	struct sockaddr *uaddr = (struct sockaddr *)addr;
	struct sock *sk = sock->sk;
	long timeo;
	int ret;

	ret = sdp_check_sockaddr(uaddr, len);
	if (ret)
		return ret;

	lock_sock(sk);
	switch (sock->state) {
	default:
		ret = -EINVAL;
		goto out;
	case SS_CONNECTED:
		ret = -EISCONN;
		goto out;
	case SS_CONNECTING:
		ret = -EALREADY;
		break;
	case SS_UNCONNECTED:
		ret = -EISCONN;
		if (sk->sk_state != TCP_CLOSE)
			goto out;
		ret = -ENETUNREACH;
		if (sdp_mapped_on_v6only(sk, uaddr))
			goto out;
		ret = sdp_sk(sk)->conn ? 0 : sdp_conn_new(sk);
		if (!ret && sdp_sk(sk)->bound)
			ret = sdp_conn_bind(sk);
		if (ret)
			goto out;
		ret = sdp_cm_connect(sk, uaddr);
		sdp_fb_prepare(sk);
		if (ret)
			ret = sdp_fb_connect(sk, ret);
		else
			sdp_fb_connect_begins(sk);
		if (ret)
			goto out;
		sock->state = SS_CONNECTING;
		ret = -EINPROGRESS;
		break;
	}

	timeo = sock_sndtimeo(sk, flags & O_NONBLOCK);
	if (sk->sk_state == TCP_SYN_SENT) {
		if (!timeo)
			goto out;
		timeo = sdp_wait_for_connect(sk, timeo);
		if (sk->sk_state == TCP_SYN_SENT) {
			if (signal_pending(current))
				ret = sock_intr_errno(timeo);
			goto out;	/* -EINPROGRESS when the time ran out */
		}
	}

	if (sdp_went_tcp(sk)) {
		release_sock(sk);
		return sdp_fb_connected(sk, uaddr, len, flags);
	}
	if (sk->sk_state == TCP_CLOSE) {
		ret = sock_error(sk) ? : -ECONNABORTED;
		sock->state = SS_UNCONNECTED;
		goto out;
	}
	sock->state = SS_CONNECTED;
	ret = 0;
out:
	release_sock(sk);
	return ret;
}

int sdp_accept(struct socket *sock, struct socket *newsock,
	       struct proto_accept_arg *arg)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *lsk = sock->sk;
	struct sdp_sock *lssk = sdp_sk(lsk);
	struct sdp_sock *child;
	struct sock *sk;
	long timeo;
	int ret;

	timeo = sock_rcvtimeo(lsk, arg->flags & O_NONBLOCK);
again:
	lock_sock(lsk);
	add_wait_queue(sk_sleep(lsk), &wait);
	for (;;) {
		if (lsk->sk_state != TCP_LISTEN) {
			ret = sock_error(lsk) ? : -EINVAL;
			break;
		}
		ret = 0;
		if (!list_empty(&lssk->accept_queue))
			break;
		ret = 1;	/* a TCP connection (fallback) */
		if (sdp_fb_acceptable(lsk))
			break;
		ret = -EAGAIN;
		if (!timeo)
			break;
		ret = sock_intr_errno(timeo);
		if (signal_pending(current))
			break;
		sk_wait_event(lsk, &timeo,
			      !list_empty(&lssk->accept_queue) ||
			      sdp_fb_acceptable(lsk) ||
			      lsk->sk_state != TCP_LISTEN, &wait);
	}
	remove_wait_queue(sk_sleep(lsk), &wait);
	if (ret == 1) {
		release_sock(lsk);
		ret = sdp_fb_accept(lsk, newsock, arg);
		if (ret == -EAGAIN && timeo)
			goto again;	/* another accept() took it */
		return ret;
	}
	if (ret) {
		release_sock(lsk);
		return ret;
	}

	child = list_first_entry(&lssk->accept_queue, struct sdp_sock,
				 accept_node);
	list_del_init(&child->accept_node);
	sk_acceptq_removed(lsk);
	release_sock(lsk);

	sk = &child->isk.sk;
	lock_sock(sk);
	if (sdp_conn_grow(sk))
		sdp_abort(sk, -ENOMEM, SDP_MIB_ABORT_ERROR,
			  "no memory for the rings");
	sock_graft(sk, newsock);
	newsock->state = SS_CONNECTED;
	child->parent = NULL;
	release_sock(sk);
	sock_put(lsk);	/* the child's reference on its listener */
	return 0;
}

static int sdp_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct sock *sk = sock->sk;
	int ret;

	/* (accept() asks the socket it made, whatever it carries) */
	if (sdp_went_tcp(sk)) {
		struct socket *tcp = sdp_sk(sk)->fb->tcp;

		return tcp->ops->getname(tcp, uaddr, peer);
	}
	lock_sock(sk);
	if (peer && (!inet_sk(sk)->inet_dport ||
		     ((1 << sk->sk_state) & (TCPF_CLOSE | TCPF_SYN_SENT |
					     TCPF_LISTEN)))) {
		ret = -ENOTCONN;
		goto out;
	}
	ret = sdp_fill_sockaddr(sk, uaddr, peer);
out:
	release_sock(sk);
	return ret;
}

/*
 * SO_RCVLOWAT, as tcp_set_rcvlowat(): at most half of what the receive
 * space may grow to, and that space made room for it; readers are woken
 * at once if what is queued is enough now.  Socket lock held.
 */
static int sdp_set_rcvlowat(struct sock *sk, int val)
{
	int cap;

	if (sk->sk_userlocks & SOCK_RCVBUF_LOCK)
		cap = sk->sk_rcvbuf >> 1;
	else
		cap = READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_rmem[2]) >> 1;
	val = min(val, cap);
	WRITE_ONCE(sk->sk_rcvlowat, val ? : 1);
	if (!(sk->sk_userlocks & SOCK_RCVBUF_LOCK) && 2 * val > sk->sk_rcvbuf)
		WRITE_ONCE(sk->sk_rcvbuf, 2 * val);
	if (sdp_rx_readable(sk))
		sk->sk_data_ready(sk);
	return 0;
}

static __poll_t sdp_poll(struct file *file, struct socket *sock,
			 poll_table *wait)
{
	struct sock *sk = sock->sk;
	__poll_t mask = 0;
	u8 shutdown;
	int state;

	/* Waiting first, reading after: a change after the read wakes us. */
	sock_poll_wait(file, sock, wait);

	/* The error before the rest, which the barrier orders after it. */
	if (READ_ONCE(sk->sk_err))
		mask |= EPOLLERR;
	/*
	 * Pairs with the smp_wmb() in sdp_shutdown_with_error(): an error
	 * seen comes with the shutdown before it (EPOLLHUP), not with a
	 * writable socket.
	 */
	smp_rmb();
	state = inet_sk_state_load(sk);
	shutdown = READ_ONCE(sk->sk_shutdown);

	/*
	 * A poll that took the file's socket just before the file went to
	 * TCP (sdp_fb_connect()) polls TCP's: ours, closed, is not the
	 * connection.  Our queue is the one waited on: TCP wakes it too.
	 */
	if (state == TCP_CLOSE && sdp_went_tcp(sk)) {
		struct socket *tcp = sdp_sk(sk)->fb->tcp;

		return tcp->ops->poll(file, tcp, NULL);
	}
	if (state == TCP_LISTEN)
		return list_empty_careful(&sdp_sk(sk)->accept_queue) &&
		       !sdp_fb_acceptable(sk) ? 0 : EPOLLIN | EPOLLRDNORM;

	/* As tcp_poll(). */
	if (shutdown == SHUTDOWN_MASK || state == TCP_CLOSE)
		mask |= EPOLLHUP;
	if (shutdown & RCV_SHUTDOWN)
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP;
	if (state != TCP_SYN_SENT && state != TCP_SYN_RECV) {
		if (!skb_queue_empty_lockless(&sk->sk_receive_queue) &&
		    sdp_rx_readable(sk))
			mask |= EPOLLIN | EPOLLRDNORM;
		if (!(shutdown & SEND_SHUTDOWN)) {
			if (sdp_writable(sk) || state == TCP_CLOSE) {
				mask |= EPOLLOUT | EPOLLWRNORM;
			} else {
				sk_set_bit(SOCKWQ_ASYNC_NOSPACE, sk);
				set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
				/* Space may have come since: look again. */
				smp_mb__after_atomic();
				if (sdp_writable(sk))
					mask |= EPOLLOUT | EPOLLWRNORM;
			}
		} else {
			mask |= EPOLLOUT | EPOLLWRNORM;
		}
	}
	return mask;
}

static const struct proto_ops sdp_ops = {
	.family		= PF_INET_SDP,
	.owner		= THIS_MODULE,
	.release	= sdp_release,
	.bind		= sdp_bind,
	.connect	= sdp_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sdp_accept_op,
	.getname	= sdp_getname,
	.poll		= sdp_poll,
	.ioctl		= sdp_ioctl,
	.listen		= sdp_listen,
	.shutdown	= sdp_shutdown,
	.setsockopt	= sdp_setsockopt,
	.getsockopt	= sdp_getsockopt,
	.sendmsg	= sdp_sendmsg,
#ifdef SDP_HAVE_SENDPAGE
	.sendpage	= sdp_sendpage,
#endif
	.recvmsg	= sdp_recvmsg,
	.mmap		= sock_no_mmap,
	.read_sock	= sdp_read_sock,
	.set_rcvlowat	= sdp_set_rcvlowat,
};

static const struct net_proto_family sdp_family_ops = {
	.family	= PF_INET_SDP,
	.create	= sdp_create,
	.owner	= THIS_MODULE,
};

static bool sdp_params_valid(void)
{
	return sdp_rx_ring_size >= SDP_RX_MIN_POSTED &&
	       sdp_rx_ring_size <= 4096 &&
	       sdp_tx_ring_size >= 2 && sdp_tx_ring_size <= 4096 &&
	       sdp_rx_pool_size >= 16 && sdp_rx_pool_size <= 65536 &&
	       sdp_rx_buf_size >= 1024 && sdp_rx_buf_size <= 1048576 &&
	       sdp_retry_count <= 7;
}

static int __init sdp_init(void)
{
	int ret;

	if (!sdp_params_valid()) {
		pr_err("sdp: module parameter out of range\n");
		return -EINVAL;
	}

	sdp_wq = alloc_workqueue("sdp", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!sdp_wq)
		return -ENOMEM;
	ret = proto_register(&sdp_proto, 1);
	if (ret)
		goto err_wq;
	ret = sdp_stats_init();
	if (ret)
		goto err_proto;
	ret = sdp_proc_init();
	if (ret)
		goto err_stats;
	sdp_fallback_init();
	ret = sdp_dev_init();
	if (ret)
		goto err_proc;
	ret = sock_register(&sdp_family_ops);
	if (ret)
		goto err_dev;

	pr_info("sdp: Sockets Direct Protocol %s, family %d\n", SDP_VERSION,
		PF_INET_SDP);
	return 0;

err_dev:
	sdp_dev_exit();
err_proc:
	sdp_proc_exit();
err_stats:
	sdp_stats_exit();
err_proto:
	proto_unregister(&sdp_proto);
err_wq:
	destroy_workqueue(sdp_wq);
	return ret;
}

static void __exit sdp_exit(void)
{
	sock_unregister(PF_INET_SDP);
	sdp_dev_exit();
	sdp_proc_exit();
	sdp_stats_exit();
	proto_unregister(&sdp_proto);
	destroy_workqueue(sdp_wq);
}

module_init(sdp_init);
module_exit(sdp_exit);

MODULE_DESCRIPTION("Sockets Direct Protocol (AF_INET_SDP) over RDMA");
MODULE_LICENSE("GPL");
MODULE_VERSION(SDP_VERSION);
MODULE_ALIAS_NETPROTO(PF_INET_SDP);
