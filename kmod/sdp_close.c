// SPDX-License-Identifier: GPL-2.0
/*
 * SDP connection release: DisConn is the FIN, with TCP's states on the
 * way (FIN_WAIT1/2, CLOSE_WAIT, LAST_ACK, CLOSING); the connection is
 * torn down once both DisConns went through, or when the time limit of
 * an orderly close runs out.  An abort tears it down at once, and the
 * peer, seeing the CM disconnect without a DisConn, reads ECONNRESET.
 */
#include <linux/jiffies.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "sdp.h"
#include "sdp_trace.h"

/*
 * Shuts @sk down both ways, then reports @err (positive) unless an error
 * came first.  In that order: sdp_poll() reads them locklessly, and a poll
 * that sees the error must see a closed socket (EPOLLHUP), not a writable
 * one.  Socket lock held.
 */
void sdp_shutdown_with_error(struct sock *sk, int err)
{
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	if (sk->sk_err)
		return;
	smp_wmb();	/* pairs with the smp_rmb() in sdp_poll() */
	WRITE_ONCE(sk->sk_err, err);
	sk_error_report(sk);
}

/*
 * The connection was reset: as tcp_reset(), its users see ECONNRESET, or
 * EPIPE in CLOSE_WAIT, unless an error came first.  Socket lock held.
 */
void sdp_set_reset(struct sock *sk)
{
	if (sk->sk_err || sk->sk_state == TCP_CLOSE)
		return;
	sdp_shutdown_with_error(sk, sk->sk_state == TCP_CLOSE_WAIT ?
				    EPIPE : ECONNRESET);
}

/* The connection is gone: the socket is closed.  Socket lock held. */
void sdp_set_closed(struct sock *sk)
{
	trace_sdp_close(sk);
	sdp_sk(sk)->tx_credits = 0;
	sdp_tx_drop_held(sk);
	sk->sk_shutdown = SHUTDOWN_MASK;
	sk->sk_state = TCP_CLOSE;
	sk->sk_state_change(sk);
}

/* Orderly close: our side is done sending.  Socket lock held. */
void sdp_send_shutdown(struct sock *sk)
{
	if (sk->sk_state == TCP_ESTABLISHED)
		sk->sk_state = TCP_FIN_WAIT1;
	else if (sk->sk_state == TCP_CLOSE_WAIT)
		sk->sk_state = TCP_LAST_ACK;
	else
		return;
	sk->sk_shutdown |= SEND_SHUTDOWN;
	sdp_sk(sk)->disconn_pending = true;
	sdp_tx_control(sk);
}

/* The peer's DisConn: EOF after the data before it.  Socket lock held. */
void sdp_disconn_rcvd(struct sock *sk)
{
	sdp_sk(sk)->disconn_rcvd = true;
	sk->sk_shutdown |= RCV_SHUTDOWN;
	sock_set_flag(sk, SOCK_DONE);
	switch (sk->sk_state) {
	case TCP_ESTABLISHED:
		sk->sk_state = TCP_CLOSE_WAIT;
		break;
	case TCP_FIN_WAIT1:
		sk->sk_state = TCP_CLOSING;
		break;
	case TCP_FIN_WAIT2:
		sk->sk_state = TCP_TIME_WAIT;
		break;
	}
	sk->sk_state_change(sk);
	sdp_check_closed(sk);
}

/*
 * Both DisConns went through and nothing is in flight, nor owed to the
 * peer's SrcAvail (its RdmaRdCompl or SendSM may wait for a credit):
 * tear down.
 */
void sdp_check_closed(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	const struct sdp_conn *conn = ssk->conn;

	if (ssk->disconn_sent && ssk->disconn_rcvd &&
	    ssk->tx_head == ssk->tx_tail &&
	    !(conn && (conn->rd_compl_due || conn->send_sm_due)))
		sdp_conn_teardown(sk, 0);
}

/*
 * Aborts the connection: its users see @err (negative), the peer
 * ECONNRESET.  @reason is counted, @why traced, and logged (rate-limited)
 * when the peer broke the protocol or the transport failed.  Socket lock
 * held.
 */
void sdp_abort(struct sock *sk, int err, enum sdp_mib reason, const char *why)
{
	struct sockaddr_storage peer;

	trace_sdp_abort(sk, err, why);
	sdp_stat_inc(sock_net(sk), reason);
	if (reason == SDP_MIB_ABORT_PROTOCOL || reason == SDP_MIB_ABORT_ERROR) {
		sdp_fill_sockaddr(sk, (struct sockaddr *)&peer, true);
		pr_warn_ratelimited("sdp: %pISpc: %s, connection aborted\n",
				    &peer, why);
	}
	sdp_sk(sk)->tx_credits = 0;
	if (sdp_sk(sk)->conn)
		sdp_sk(sk)->conn->aborted = true;
	sdp_shutdown_with_error(sk, -err);
	sdp_conn_teardown(sk, 0);
}

/*
 * Whether a request of the socket's connection flushed as expected: by the
 * teardown or an abort, or before the connection is up (a rejected
 * connect: the CM's event says what happened).  Otherwise the QP went to
 * the error state by itself, and the connection is dead: Soft-RoCE on 7.x
 * does that, flushing every request, when a packet cannot leave (the link
 * went down).  Socket lock held.
 */
bool sdp_flush_expected(struct sock *sk)
{
	const struct sdp_conn *conn = sdp_sk(sk)->conn;

	return conn->dying || conn->aborted || !sdp_connected(sk);
}

/*
 * A request of the socket's connection (@what: "a send", ...) that did
 * not complete: false if it did.  An expected flush (sdp_flush_expected())
 * is just that; any other failure aborts, and a dead peer (the
 * transport's retries ran out) is a timeout.  The log line names the
 * request: the first to fail is the one a QP that failed by itself
 * flushed first.  Socket lock held.
 */
bool sdp_wc_failed(struct sock *sk, enum ib_wc_status status,
		   const char *what)
{
	char why[64];
	int err = -ECONNRESET;

	switch (status) {
	case IB_WC_SUCCESS:
		return false;
	case IB_WC_WR_FLUSH_ERR:
		if (sdp_flush_expected(sk))
			return true;
		break;
	case IB_WC_RETRY_EXC_ERR:
	case IB_WC_RNR_RETRY_EXC_ERR:
		err = -ETIMEDOUT;
		break;
	default:
		break;
	}
	snprintf(why, sizeof(why), "%s, on %s", ib_wc_status_msg(status), what);
	sdp_abort(sk, err, SDP_MIB_ABORT_ERROR, why);
	return true;
}

/* The states in which a connection is up, or closing in order. */
#define SDP_CONNECTED_STATES (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT | \
			      TCPF_FIN_WAIT1 | TCPF_FIN_WAIT2 | TCPF_CLOSING | \
			      TCPF_LAST_ACK | TCPF_TIME_WAIT)

bool sdp_connected(const struct sock *sk)
{
	return (1 << sk->sk_state) & SDP_CONNECTED_STATES;
}

/*
 * close() of a connected socket: as tcp_close(), unread data or a zero
 * SO_LINGER abort; otherwise DisConn, and the connection outlives the
 * socket until the peer answers or the time limit runs out.  A non-zero
 * SO_LINGER waits for the answer that long.  Socket lock held.
 */
void sdp_close_connected(struct sock *sk)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	const struct sdp_conn *conn = sdp_sk(sk)->conn;
	long timeo;

	/* The bytes of a SrcAvail not read yet are unread data too. */
	if (sdp_sk(sk)->rx_queued || (conn && conn->rd_active)) {
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_LOCAL,
			  "close with unread data");
		return;
	}
	if (sock_flag(sk, SOCK_LINGER) && !sk->sk_lingertime) {
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_LOCAL, "SO_LINGER 0");
		return;
	}

	sdp_send_shutdown(sk);
	sdp_conn_teardown(sk, msecs_to_jiffies(sdp_close_timeout_ms));
	sdp_check_closed(sk);

	if (!sock_flag(sk, SOCK_LINGER))
		return;
	timeo = sk->sk_lingertime;
	add_wait_queue(sk_sleep(sk), &wait);
	while ((1 << sk->sk_state) & (TCPF_FIN_WAIT1 | TCPF_CLOSING |
				       TCPF_LAST_ACK)) {
		if (!timeo || signal_pending(current))
			break;
		sk_wait_event(sk, &timeo, !((1 << sk->sk_state) &
			      (TCPF_FIN_WAIT1 | TCPF_CLOSING | TCPF_LAST_ACK)),
			      &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
}

/*
 * TCP's disconnect of a listener or of a connect under way: back to
 * TCP_CLOSE, waking accept() or connect(); the listener's children are
 * reset.  Called and returns with the socket lock held, dropping it to
 * free the connection.
 */
static void sdp_disconnect(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk), *child, *tmp;
	struct sdp_conn *conn;
	LIST_HEAD(children);

	list_splice_init(&ssk->accept_queue, &children);
	if (sk->sk_state == TCP_SYN_SENT)
		sk->sk_err = ECONNRESET;
	conn = sdp_conn_take(sk);
	sk->sk_state = TCP_CLOSE;
	sk->sk_state_change(sk);
	release_sock(sk);

	sdp_conn_destroy(conn, true);
	list_for_each_entry_safe(child, tmp, &children, accept_node) {
		list_del_init(&child->accept_node);
		sdp_child_end(&child->isk.sk, true);
	}
	lock_sock(sk);
}

/* Follows inet_shutdown(). */
int sdp_shutdown(struct socket *sock, int how)
{
	struct sock *sk = sock->sk;
	int err = 0;

	/* SHUT_RD, SHUT_WR, SHUT_RDWR become RCV_SHUTDOWN, SEND_SHUTDOWN, both. */
	how++;
	if ((how & ~SHUTDOWN_MASK) || !how)
		return -EINVAL;

	lock_sock(sk);
	if (sock->state == SS_CONNECTING) {
		if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV |
					   TCPF_CLOSE))
			sock->state = SS_DISCONNECTING;
		else
			sock->state = SS_CONNECTED;
	}

	switch (sk->sk_state) {
	case TCP_CLOSE:
		err = -ENOTCONN;
		sk->sk_shutdown |= how;
		break;
	case TCP_LISTEN:
		if (!(how & RCV_SHUTDOWN))
			break;
		sdp_fb_shutdown(sk, how);
		fallthrough;
	case TCP_SYN_SENT:
		sdp_disconnect(sk);
		sock->state = SS_UNCONNECTED;
		break;
	default:
		sk->sk_shutdown |= how;
		if (how & SEND_SHUTDOWN)
			sdp_send_shutdown(sk);
		break;
	}
	sk->sk_state_change(sk);
	release_sock(sk);
	return err;
}
