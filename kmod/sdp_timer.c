// SPDX-License-Identifier: GPL-2.0
/*
 * SDP keepalive, TCP_USER_TIMEOUT, stalled transport and the ceiling of a
 * cork, checked by a per-connection watchdog that runs only while there
 * is one to watch; it also gives the send pages of a connection that
 * stopped sending back (sdp_tx_trim()).
 *
 * A posted send normally completes, or fails once the RC transport's
 * retries run out.  Soft-RoCE on a link that is down retries for ever
 * without failing, so a send (or probe) that has not completed after
 * tx_stall_timeout_ms ends the connection as the retries would have.  A
 * writer that waits for credits, or for the peer to read its SrcAvail,
 * has nothing in flight, so it gets a probe every second, as TCP probes a
 * zero window; TCP_USER_TIMEOUT bounds its wait as it bounds TCP's.
 *
 * Keepalive probes are zero-length RDMA Writes, as in the historical SDP:
 * they take no receive buffer and no credit at the peer, and the RC
 * transport's own retries tell a dead peer (the probe completes in
 * error).  A probe unanswered for TCP_KEEPCNT intervals ends it too.
 */
#include <net/sock.h>
#include <net/tcp.h>

#include "sdp.h"

#define SDP_WATCHDOG_PERIOD	(HZ / 4)

/* A writer waits for credits from the peer, or for it to read a SrcAvail. */
static bool sdp_credit_blocked(const struct sock *sk)
{
	return (sdp_sk(sk)->tx_credits <= 1 && sk->sk_socket &&
		test_bit(SOCK_NOSPACE, &sk->sk_socket->flags)) ||
	       sdp_sk(sk)->tx_src_active;
}

static bool sdp_watchdog_wanted(const struct sock *sk)
{
	const struct sdp_sock *ssk = sdp_sk(sk);

	return sock_flag(sk, SOCK_KEEPOPEN) || ssk->user_timeout ||
	       ssk->tx_head != ssk->tx_tail || ssk->conn->probe_inflight ||
	       sdp_credit_blocked(sk) || ssk->tx_held || sdp_tx_trimmable(ssk->conn);
}

static unsigned long sdp_keepidle(const struct sock *sk)
{
	int t = sdp_sk(sk)->keepidle;

	return t ? t * HZ :
	       READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_keepalive_time);
}

static unsigned long sdp_keepintvl(const struct sock *sk)
{
	int t = sdp_sk(sk)->keepintvl;

	return t ? t * HZ :
	       READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_keepalive_intvl);
}

static int sdp_keepcnt(const struct sock *sk)
{
	int n = sdp_sk(sk)->keepcnt;

	return n ? : READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_keepalive_probes);
}

/* The probe completed.  Socket locked (sdp_cq.c). */
static int sdp_probe_process(struct sock *sk, struct sdp_conn *conn,
			     struct sdp_wc *wc, gfp_t gfp)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	conn->probe_inflight = false;
	if (ssk->conn == conn && !conn->aborted) {
		if (wc->status == IB_WC_SUCCESS) {
			ssk->probes = 0;
			ssk->rx_stamp = jiffies;
		} else if (wc->status != IB_WC_WR_FLUSH_ERR ||
			   !sdp_flush_expected(sk)) {
			sdp_abort(sk, -ETIMEDOUT, SDP_MIB_ABORT_ERROR,
				  "keepalive probe failed");
		}
	}
	return 0;
}

static void sdp_probe(struct sock *sk, struct sdp_conn *conn)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe		= &conn->probe_wc.cqe,
			.opcode		= IB_WR_RDMA_WRITE,
			.send_flags	= IB_SEND_SIGNALED,
		},
	};

	if (!conn->probe_inflight &&
	    !ib_post_send(conn->id->qp, &wr.wr, NULL)) {
		conn->probe_inflight = true;
		conn->probe_posted = jiffies;
	}
	sdp_sk(sk)->probe_stamp = jiffies;
}

/*
 * A sender waits: data in flight, a writer blocked for credits, or a
 * SrcAvail the peer has not read.
 */
static bool sdp_tx_waiting(const struct sock *sk)
{
	const struct sdp_sock *ssk = sdp_sk(sk);

	return ssk->tx_head != ssk->tx_tail || ssk->tx_src_active ||
	       (sk->sk_socket && test_bit(SOCK_NOSPACE, &sk->sk_socket->flags));
}

static void sdp_watchdog(struct work_struct *work)
{
	struct sdp_conn *conn = container_of(to_delayed_work(work),
					     struct sdp_conn, watchdog);
	struct sock *sk = conn->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	unsigned long stall = msecs_to_jiffies(sdp_tx_stall_timeout_ms);
	unsigned long now = jiffies;

	lock_sock(sk);
	if (ssk->conn != conn || conn->dying || conn->aborted ||
	    !sdp_connected(sk) || !sdp_watchdog_wanted(sk))
		goto out;

	if ((ssk->tx_head != ssk->tx_tail &&
	     time_after(now, ssk->tx_stamp + stall)) ||
	    (conn->probe_inflight && time_after(now, conn->probe_posted + stall))) {
		sdp_abort(sk, -ETIMEDOUT, SDP_MIB_ABORT_ERROR,
			  "sends do not complete");
		goto out;
	}
	/* A cork holds the held bytes 200 ms at most. */
	if (ssk->tx_held)
		sdp_tx_control(sk);
	sdp_tx_trim(sk);
	if (conn->dying)
		goto out;
	if (sdp_credit_blocked(sk) && !conn->probe_inflight &&
	    time_after_eq(now, ssk->probe_stamp + HZ))
		sdp_probe(sk, conn);

	if (ssk->user_timeout && sdp_tx_waiting(sk) &&
	    time_after(now, ssk->tx_stamp +
		       msecs_to_jiffies(ssk->user_timeout))) {
		sdp_abort(sk, -ETIMEDOUT, SDP_MIB_ABORT_TIMEOUT,
			  "TCP_USER_TIMEOUT");
		goto out;
	}

	/* As TCP: after keepidle, a probe every keepintvl; keepcnt unanswered
	 * probes and the peer is dead.  A probe still in flight counts as
	 * unanswered and is not posted again.
	 */
	if (sock_flag(sk, SOCK_KEEPOPEN) &&
	    time_after_eq(now, ssk->rx_stamp + sdp_keepidle(sk)) &&
	    (!ssk->probes ||
	     time_after_eq(now, ssk->probe_stamp + sdp_keepintvl(sk)))) {
		if (ssk->probes >= sdp_keepcnt(sk)) {
			sdp_abort(sk, -ETIMEDOUT, SDP_MIB_ABORT_TIMEOUT,
				  "keepalive");
			goto out;
		}
		sdp_probe(sk, conn);
		ssk->probes++;
	}
	queue_delayed_work(sdp_wq, &conn->watchdog, SDP_WATCHDOG_PERIOD);
out:
	release_sock(sk);
}

void sdp_watchdog_init(struct sdp_conn *conn)
{
	INIT_DELAYED_WORK(&conn->watchdog, sdp_watchdog);
	conn->probe_wc.cqe.done = sdp_cq_done;
	conn->probe_wc.process = sdp_probe_process;
}

/*
 * Starts the watchdog if the socket asks for keepalive or a user timeout.
 * Socket lock held; called when either is set and when the connection
 * comes up.
 */
void sdp_watchdog_arm(struct sock *sk)
{
	struct sdp_conn *conn = sdp_sk(sk)->conn;

	if (conn && !conn->dying && sdp_connected(sk) &&
	    sdp_watchdog_wanted(sk))
		queue_delayed_work(sdp_wq, &conn->watchdog, SDP_WATCHDOG_PERIOD);
}

/* struct proto's keepalive: SO_KEEPALIVE set or cleared.  Socket locked. */
void sdp_set_keepalive(struct sock *sk, int on)
{
	sdp_sk(sk)->rx_stamp = jiffies;
	sdp_sk(sk)->probes = 0;
	if (on) {
		sock_set_flag(sk, SOCK_KEEPOPEN);
		sdp_watchdog_arm(sk);
	}
}
