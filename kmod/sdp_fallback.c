// SPDX-License-Identifier: GPL-2.0
/*
 * TCP fallback (SOL_SDP, SDP_FALLBACK): a socket that asks for it carries
 * a TCP socket of its own where SDP cannot go, as SMC carries its clcsock.
 *
 * Active side: when the peer refuses SDP (no SDP listener), no RDMA device
 * routes to it, or the RDMA CM does not answer within fallback_timeout_ms,
 * the socket makes a TCP socket with its options and its bound address and
 * connects that to the same peer.  Passive side: listen() listens on TCP
 * too, on the same address and port, and accept() takes connections of
 * either kind; a TCP one gets an SDP socket of its own that carries it.
 *
 * A socket that carries a TCP connection hands its file over to the TCP
 * socket (file->private_data), so that every later call on the file is
 * TCP's own: data, options at every level, SO_ERROR, ioctls, sendfile,
 * names.  The SDP socket stays behind the file's inode: close() comes to
 * it, and it releases the TCP socket.  Those who polled the file before
 * the handover wait on the SDP socket's queue: the TCP socket's callbacks
 * wake them too.  The TCP socket keeps TCP's calls, but for getsockopt(),
 * which answers SOL_SDP (SDP_PATH: TCP).
 */
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/inet_connection_sock.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "sdp.h"

/*
 * For IPv4 and IPv6: TCP's socket calls with our getsockopt() (ops), and
 * TCP's own (base), copied at module load from sockets of the kernel's
 * (inet6_stream_ops is not exported to modules before 7.x).  The owner of
 * ops is this module: a TCP socket that has them holds a reference on it,
 * which its release drops.
 */
static struct { struct proto_ops ops; const struct proto_ops *base; } sdp_tcp[2] __ro_after_init;

static int sdp_family_index(int family)
{
	return family == AF_INET6;
}

static int sdp_tcp_getsockopt(struct socket *sock, int level, int optname,
			      char __user *optval, int __user *optlen)
{
	const struct proto_ops *tcp_ops =
		sdp_tcp[sdp_family_index(sock->sk->sk_family)].base;
	int len, val;

	if (level != SOL_SDP)
		return tcp_ops->getsockopt(sock, level, optname, optval,
					   optlen);
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	switch (optname) {
	case SDP_FALLBACK:
		val = 1;
		break;
	case SDP_PATH:
		val = SDP_PATH_TCP;
		break;
	default:
		return -ENOPROTOOPT;
	}
	len = min_t(unsigned int, len, sizeof(int));
	if (put_user(len, optlen) || copy_to_user(optval, &val, len))
		return -EFAULT;
	return 0;
}

void __init sdp_fallback_init(void)
{
	static const int families[] = { AF_INET, AF_INET6 };
	struct socket *sock;
	int i;

	for (i = 0; i < ARRAY_SIZE(families); i++) {
		/* No IPv6 in the kernel: IPv6 sockets have no fallback. */
		if (sock_create_kern(&init_net, families[i], SOCK_STREAM,
				     IPPROTO_TCP, &sock))
			continue;
		sdp_tcp[i].base = sock->ops;
		sdp_tcp[i].ops = *sock->ops;
		sdp_tcp[i].ops.owner = THIS_MODULE;
		sdp_tcp[i].ops.getsockopt = sdp_tcp_getsockopt;
		sock_release(sock);
	}
}

/*
 * The SDP socket a TCP socket wakes; under its sk_callback_lock.  None for
 * a TCP listener's child before accept() takes it: it has the listener's
 * callbacks (sk_clone_lock()), but not its user data (NOCOPY).
 */
static struct sock *sdp_fb_owner(struct sock *tsk)
{
	return __locked_read_sk_user_data_with_flags(tsk, 0);
}

static void sdp_fb_wake(struct sock *sk, __poll_t key)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq)) {
		if (key)
			wake_up_interruptible_poll(&wq->wait, key);
		else
			wake_up_interruptible_all(&wq->wait);
	}
	rcu_read_unlock();
}

/*
 * A callback of a TCP socket that an SDP socket carries: TCP's own, then
 * a wake-up of the SDP socket's waiters with @key (0: all, as for a state
 * change).
 */
static void sdp_fb_forward(struct sock *tsk, enum sdp_fb_callback which,
			   __poll_t key)
{
	struct sock *sk;

	read_lock_bh(&tsk->sk_callback_lock);
	sk = sdp_fb_owner(tsk);
	if (sk) {
		sdp_sk(sk)->fb->saved[which](tsk);
		sdp_fb_wake(sk, key);
	}
	read_unlock_bh(&tsk->sk_callback_lock);
}

static void sdp_fb_state_change(struct sock *tsk)
{
	sdp_fb_forward(tsk, SDP_FB_STATE_CHANGE, 0);
}

static void sdp_fb_data_ready(struct sock *tsk)
{
	sdp_fb_forward(tsk, SDP_FB_DATA_READY,
		       EPOLLIN | EPOLLRDNORM | EPOLLRDBAND);
}

static void sdp_fb_write_space(struct sock *tsk)
{
	sdp_fb_forward(tsk, SDP_FB_WRITE_SPACE,
		       EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND);
}

static void sdp_fb_error_report(struct sock *tsk)
{
	sdp_fb_forward(tsk, SDP_FB_ERROR_REPORT, EPOLLERR);
}

/* Gives @tsk the callbacks @fb saved.  Its sk_callback_lock held. */
static void sdp_fb_restore(struct sock *tsk, const struct sdp_fallback *fb)
{
	tsk->sk_state_change = fb->saved[SDP_FB_STATE_CHANGE];
	tsk->sk_data_ready = fb->saved[SDP_FB_DATA_READY];
	tsk->sk_write_space = fb->saved[SDP_FB_WRITE_SPACE];
	tsk->sk_error_report = fb->saved[SDP_FB_ERROR_REPORT];
}

/* @sk's TCP socket wakes @sk's waiters too.  Socket lock held. */
static void sdp_fb_hook(struct sock *sk, struct socket *tcp)
{
	struct sdp_fallback *fb = sdp_sk(sk)->fb;
	struct sock *tsk = tcp->sk;

	write_lock_bh(&tsk->sk_callback_lock);
	fb->saved[SDP_FB_STATE_CHANGE] = tsk->sk_state_change;
	fb->saved[SDP_FB_DATA_READY] = tsk->sk_data_ready;
	fb->saved[SDP_FB_WRITE_SPACE] = tsk->sk_write_space;
	fb->saved[SDP_FB_ERROR_REPORT] = tsk->sk_error_report;
	__rcu_assign_sk_user_data_with_flags(tsk, sk, SK_USER_DATA_NOCOPY);
	tsk->sk_state_change = sdp_fb_state_change;
	tsk->sk_data_ready = sdp_fb_data_ready;
	tsk->sk_write_space = sdp_fb_write_space;
	tsk->sk_error_report = sdp_fb_error_report;
	write_unlock_bh(&tsk->sk_callback_lock);

	spin_lock(&fb->lock);
	fb->tcp = tcp;
	spin_unlock(&fb->lock);
}

/* Undoes sdp_fb_hook(): no callback uses @sk once it returns. */
static void sdp_fb_unhook(struct sdp_fallback *fb, struct socket *tcp)
{
	struct sock *tsk = tcp->sk;

	write_lock_bh(&tsk->sk_callback_lock);
	rcu_assign_sk_user_data(tsk, NULL);
	sdp_fb_restore(tsk, fb);
	write_unlock_bh(&tsk->sk_callback_lock);
}

/*
 * Hands the file of @sk over to @tcp, which @sk carries from now on and
 * which sdp_fb_hook() gave it, and gives @tcp our getsockopt().  Socket
 * lock held.
 */
static void sdp_fb_handover(struct sock *sk, struct socket *tcp)
{
	struct socket *sock = sk->sk_socket;
	struct file *file = sock->file;

	module_put(tcp->ops->owner);
	__module_get(THIS_MODULE);
	tcp->ops = &sdp_tcp[sdp_family_index(tcp->sk->sk_family)].ops;

	WRITE_ONCE(sdp_sk(sk)->fb->path, SDP_PATH_TCP);
	if (sock_flag(sk, SOCK_FASYNC))
		sock_set_flag(tcp->sk, SOCK_FASYNC);
	tcp->wq.fasync_list = sock->wq.fasync_list;
	sock->wq.fasync_list = NULL;
	tcp->file = file;
	WRITE_ONCE(file->private_data, tcp);
}

/*
 * The options set on @sk, given to its new TCP socket @tsk, as a TCP
 * socket that was set the same way would have them.  Socket lock held;
 * takes @tsk's inside it.
 */
static void sdp_fb_copy_options(struct sock *tsk, struct sock *sk)
{
	const struct sdp_sock *ssk = sdp_sk(sk);
	const int flags[] = { SOCK_LINGER, SOCK_URGINLINE };
	int i;

	lock_sock(tsk);
	for (i = 0; i < ARRAY_SIZE(flags); i++)
		sock_valbool_flag(tsk, flags[i], sock_flag(sk, flags[i]));
	tsk->sk_userlocks |= sk->sk_userlocks &
			     (SOCK_SNDBUF_LOCK | SOCK_RCVBUF_LOCK);
	if (sk->sk_userlocks & SOCK_SNDBUF_LOCK)
		WRITE_ONCE(tsk->sk_sndbuf, sk->sk_sndbuf);
	if (sk->sk_userlocks & SOCK_RCVBUF_LOCK)
		WRITE_ONCE(tsk->sk_rcvbuf, sk->sk_rcvbuf);
	WRITE_ONCE(tsk->sk_rcvtimeo, sk->sk_rcvtimeo);
	WRITE_ONCE(tsk->sk_sndtimeo, sk->sk_sndtimeo);
	WRITE_ONCE(tsk->sk_rcvlowat, sk->sk_rcvlowat);
	tsk->sk_lingertime = sk->sk_lingertime;
	tsk->sk_priority = sk->sk_priority;
	tsk->sk_mark = sk->sk_mark;
	/* (SO_BINDTODEVICE: a socket meant for one device or VRF) */
	WRITE_ONCE(tsk->sk_bound_dev_if, READ_ONCE(sk->sk_bound_dev_if));
	tsk->sk_reuse = sk->sk_reuse;
	tsk->sk_reuseport = sk->sk_reuseport;
	tsk->sk_ipv6only = sk->sk_ipv6only;
	tcp_sk(tsk)->rx_opt.user_mss = ssk->user_mss;
	release_sock(tsk);

	if (sock_flag(sk, SOCK_KEEPOPEN))
		sock_set_keepalive(tsk);
	if (ssk->nodelay)
		tcp_sock_set_nodelay(tsk);
	if (ssk->cork)
		tcp_sock_set_cork(tsk, true);
	if (ssk->keepidle)
		tcp_sock_set_keepidle(tsk, ssk->keepidle);
	if (ssk->keepintvl)
		tcp_sock_set_keepintvl(tsk, ssk->keepintvl);
	if (ssk->keepcnt)
		tcp_sock_set_keepcnt(tsk, ssk->keepcnt);
	if (ssk->user_timeout)
		tcp_sock_set_user_timeout(tsk, ssk->user_timeout);
}

/*
 * A TCP socket for @sk, of the family of @sk's addresses, with its options
 * and, if @sk is bound, its address.  It is the user's socket, made as
 * the user's own would be (a socket of the namespace, referencing it),
 * in the user's context: connect() and listen() call it.  Socket lock
 * held.
 */
static int sdp_fb_create(struct sock *sk, struct socket **tcp)
{
	int family = sdp_sk(sk)->addr_family;
	struct sockaddr_storage addr;
	int len, ret;

	*tcp = NULL;
	if (!sdp_tcp[sdp_family_index(family)].base)
		return -EAFNOSUPPORT;
	ret = __sock_create(sock_net(sk), family, SOCK_STREAM, IPPROTO_TCP,
			    tcp, 0);
	if (ret) {
		*tcp = NULL;
		return ret;
	}
	sdp_fb_copy_options((*tcp)->sk, sk);
	if (sdp_sk(sk)->bound) {
		len = sdp_fill_sockaddr(sk, (struct sockaddr *)&addr, false);
		ret = kernel_bind(*tcp, (struct sockaddr_unsized *)&addr, len);
		if (ret) {
			sock_release(*tcp);
			*tcp = NULL;
		}
	}
	return ret;
}

/* Which counter a failed SDP connect falls back by, or -1: no fallback. */
static int sdp_fb_reason(int err)
{
	switch (err) {
	case -ECONNREFUSED:
		return SDP_MIB_FALLBACK_REFUSED;
	case -ENETUNREACH:
	case -EHOSTUNREACH:
	case -EADDRNOTAVAIL:
	case -ENODEV:
	case -ENOBUFS:		/* (max_user_conns: no RDMA resources for it) */
		return SDP_MIB_FALLBACK_NO_DEVICE;
	case -ETIMEDOUT:
		return SDP_MIB_FALLBACK_TIMEOUT;
	default:
		return -1;
	}
}

/**
 * sdp_fb_connect - carries on over TCP after SDP's connect failed
 * @sk: a socket in SYN_SENT whose connection attempt ended with @err; it
 *	has no connection any more
 * @err: why, a negative errno
 *
 * With fallback on and a reason for it, connects a TCP socket to the same
 * peer, without waiting, and hands the file over to it: @sk goes to
 * TCP_CLOSE without an error, and its waiters wake and find the TCP
 * socket.  A TCP connect that fails at once is reported as TCP reports a
 * failed connect, by the TCP socket's SO_ERROR, and by sdp_fb_connected().
 * Socket lock held.
 *
 * Return: 0 when it went TCP, else @err or the error that kept it from it.
 */
int sdp_fb_connect(struct sock *sk, int err)
{
	struct sdp_fallback *fb = sdp_sk(sk)->fb;
	struct net *net = sock_net(sk);
	struct sockaddr_storage dst;
	struct socket *tcp;
	int reason, len, ret;

	reason = sdp_fb_reason(err);
	if (!fb || !fb->enabled || fb->tcp || reason < 0 || !sk->sk_socket ||
	    !sk->sk_socket->file)
		return err;
	/* (a worker may be here: the socket connect() made, not one of its own) */
	tcp = fb->spare;
	fb->spare = NULL;
	if (!tcp) {
		sdp_stat_inc(net, SDP_MIB_FALLBACK_FAILS);
		return fb->spare_err ? : err;
	}
	sdp_stat_inc(net, reason);
	/*
	 * Connecting before the file is handed over: a poll of the file
	 * must never find the TCP socket unconnected (TCP_CLOSE, which
	 * polls as EPOLLHUP).  What TCP's callbacks say in between wakes
	 * our waiters, and they find the SDP socket still in SYN_SENT;
	 * the state change below wakes them for the TCP socket.
	 */
	sdp_fb_hook(sk, tcp);
	len = sdp_fill_sockaddr(sk, (struct sockaddr *)&dst, true);
	ret = kernel_connect(tcp, (struct sockaddr_unsized *)&dst, len,
			     O_NONBLOCK);
	sdp_fb_handover(sk, tcp);
	if (ret && ret != -EINPROGRESS) {
		fb->connect_err = ret;
		WRITE_ONCE(tcp->sk->sk_err, -ret);
		sk_error_report(tcp->sk);
	}
	/* after the handover: sdp_poll()'s acquire pairs with it */
	smp_store_release(&sk->sk_state, TCP_CLOSE);
	sk->sk_state_change(sk);
	return 0;
}

/*
 * connect() on @sk, which went TCP: its outcome, as TCP's connect()
 * gives it.  No lock held; @sk's user holds the socket.
 */
int sdp_fb_connected(struct sock *sk, struct sockaddr *uaddr, int len,
		     int flags)
{
	struct sdp_fallback *fb = sdp_sk(sk)->fb;
	struct socket *tcp = fb->tcp;
	int err = xchg(&fb->connect_err, 0);

	if (err) {
		WRITE_ONCE(tcp->sk->sk_err, 0);
		return err;
	}
	if ((flags & O_NONBLOCK) &&
	    inet_sk_state_load(tcp->sk) == TCP_SYN_SENT)
		return -EINPROGRESS;
	return tcp->ops->connect(tcp, (struct sockaddr_unsized *)uaddr, len,
				 flags);
}

/* The RDMA CM took too long: the attempt goes TCP. */
static void sdp_fb_timeout(struct work_struct *work)
{
	struct sdp_fallback *fb = container_of(to_delayed_work(work),
					       struct sdp_fallback, timer);
	struct sock *sk = fb->sk;
	struct sdp_conn *conn = NULL;

	lock_sock(sk);
	if (sk->sk_state == TCP_SYN_SENT && !fb->tcp)
		conn = sdp_conn_take(sk);
	if (conn)
		sdp_connect_failed(sk, -ETIMEDOUT);
	release_sock(sk);
	sdp_conn_destroy(conn, true);
	sock_put(sk);
}

/*
 * connect() on @sk, with fallback on: the TCP socket it may fall back to,
 * made now, in the caller's context (see sdp_fallback.spare).  Socket
 * lock held; after the connect's address family is known.
 */
void sdp_fb_prepare(struct sock *sk)
{
	struct sdp_fallback *fb = sdp_sk(sk)->fb;

	if (!fb || !fb->enabled || fb->tcp)
		return;
	/* (one of an earlier connect() has its options and address) */
	sdp_fb_drop_spare(sk);
	fb->spare_err = sdp_fb_create(sk, &fb->spare);
}

/*
 * The spare TCP socket goes: the SDP connection is up, the next
 * connect() makes its own, or the socket closes.  Socket lock held.
 */
void sdp_fb_drop_spare(struct sock *sk)
{
	struct sdp_fallback *fb = sdp_sk(sk)->fb;

	if (!fb || !fb->spare)
		return;
	sock_release(fb->spare);
	fb->spare = NULL;
}

/*
 * An SDP connect() of @sk begins: with fallback on, it has
 * fallback_timeout_ms to succeed or fail before it goes TCP.  Socket
 * lock held.
 */
void sdp_fb_connect_begins(struct sock *sk)
{
	struct sdp_fallback *fb = sdp_sk(sk)->fb;

	if (!fb || !fb->enabled || !sdp_fallback_timeout_ms)
		return;
	sock_hold(sk);
	if (!mod_delayed_work(sdp_wq, &fb->timer,
			      msecs_to_jiffies(sdp_fallback_timeout_ms)))
		return;
	sock_put(sk);	/* it was queued already, holding one */
}

/*
 * listen() on @sk, with fallback on: listens on TCP too, on @sk's address
 * and port, or sets the TCP listener's backlog.  Socket lock held.
 */
int sdp_fb_listen(struct sock *sk, int backlog)
{
	struct sdp_fallback *fb = sdp_sk(sk)->fb;
	struct socket *tcp;
	int ret;

	if (!fb || !fb->enabled)
		return 0;
	if (fb->tcp)
		return kernel_listen(fb->tcp, backlog);
	ret = sdp_fb_create(sk, &tcp);
	if (!ret)
		ret = kernel_listen(tcp, backlog);
	if (ret) {
		if (tcp)
			sock_release(tcp);
		return ret;
	}
	sdp_fb_hook(sk, tcp);
	return 0;
}

/* A listener with fallback: a TCP connection waits for accept(). */
bool sdp_fb_acceptable(const struct sock *lsk)
{
	const struct sdp_fallback *fb = sdp_sk(lsk)->fb;
	struct socket *tcp = fb ? READ_ONCE(fb->tcp) : NULL;

	return tcp && !reqsk_queue_empty(&inet_csk(tcp->sk)->icsk_accept_queue);
}

/*
 * accept() on @lsk takes a TCP connection: @newsock gets an SDP socket
 * that carries it.  -EAGAIN when another accept() took it first.  No lock
 * held.
 */
int sdp_fb_accept(struct sock *lsk, struct socket *newsock,
		  struct proto_accept_arg *arg)
{
	struct socket *tcp;
	struct sock *sk;
	int ret;

	if (!newsock->file)
		return -EOPNOTSUPP;
	ret = kernel_accept(sdp_sk(lsk)->fb->tcp, &tcp, O_NONBLOCK);
	if (ret)
		return ret;
	/* TCP's own callbacks again, for sdp_fb_hook() to save */
	write_lock_bh(&tcp->sk->sk_callback_lock);
	sdp_fb_restore(tcp->sk, sdp_sk(lsk)->fb);
	write_unlock_bh(&tcp->sk->sk_callback_lock);
	sk = sdp_sk_alloc(sock_net(lsk), newsock, arg->kern);
	if (!sk || sdp_fb_alloc(sk)) {
		if (sk) {
			sock_orphan(sk);
			newsock->sk = NULL;
			sock_put(sk);
		}
		sock_release(tcp);
		return -ENOMEM;
	}
	lock_sock(sk);
	sdp_sk(sk)->fb->enabled = true;
	sdp_sk(sk)->addr_family = tcp->sk->sk_family;
	sdp_fb_hook(sk, tcp);
	sdp_fb_handover(sk, tcp);
	release_sock(sk);
	newsock->state = SS_CONNECTED;
	sdp_stat_inc(sock_net(lsk), SDP_MIB_FALLBACK_ACCEPTS);
	return 0;
}

/* shutdown() of a listener with fallback: of its TCP listener too. */
void sdp_fb_shutdown(struct sock *sk, int how)
{
	struct sdp_fallback *fb = sdp_sk(sk)->fb;

	if (fb && fb->tcp && fb->path != SDP_PATH_TCP)
		kernel_sock_shutdown(fb->tcp, how - 1);
}

/* SDP_FALLBACK set on @sk's user socket.  Socket lock held. */
int sdp_fb_alloc(struct sock *sk)
{
	struct sdp_fallback *fb;

	if (sdp_sk(sk)->fb)
		return 0;
	fb = kzalloc_obj(*fb, GFP_KERNEL);
	if (!fb)
		return -ENOMEM;
	fb->sk = sk;
	spin_lock_init(&fb->lock);
	INIT_DELAYED_WORK(&fb->timer, sdp_fb_timeout);
	sdp_sk(sk)->fb = fb;
	return 0;
}

/*
 * The user closed @sk: its TCP socket goes, and the timer stops.  After
 * sock_orphan(), so that no fallback starts any more (sdp_fb_connect()
 * wants the user's socket); no lock held.  The rest goes with @sk
 * (sdp_fb_free()).
 */
void sdp_fb_release(struct sock *sk)
{
	struct sdp_fallback *fb = sdp_sk(sk)->fb;
	struct socket *tcp;

	if (!fb)
		return;
	if (cancel_delayed_work_sync(&fb->timer))
		sock_put(sk);
	lock_sock(sk);
	sdp_fb_drop_spare(sk);
	release_sock(sk);
	spin_lock(&fb->lock);
	tcp = fb->tcp;
	fb->tcp = NULL;
	spin_unlock(&fb->lock);
	if (!tcp)
		return;
	sdp_fb_unhook(fb, tcp);
	tcp->file = NULL;
	sock_release(tcp);
}

void sdp_fb_free(struct sock *sk)
{
	kfree(sdp_sk(sk)->fb);
	sdp_sk(sk)->fb = NULL;
}

/*
 * For /proc/net/sdp: @show the TCP connection @sk carries, which stays
 * while it shows; false if it carries none.
 */
bool sdp_fb_proc(struct sock *sk, struct seq_file *seq,
		 void (*show)(struct seq_file *seq, const struct sock *tsk))
{
	struct sdp_fallback *fb = sdp_sk(sk)->fb;
	bool shown = false;

	if (!fb)
		return false;
	spin_lock(&fb->lock);
	if (fb->tcp && fb->path == SDP_PATH_TCP) {
		show(seq, fb->tcp->sk);
		shown = true;
	}
	spin_unlock(&fb->lock);
	return shown;
}
