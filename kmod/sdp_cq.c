// SPDX-License-Identifier: GPL-2.0
/*
 * SDP work completions: where and when each one is processed.
 *
 * The completion queue is polled in softirq (IB_POLL_SOFTIRQ), where TCP
 * receives its segments, and as TCP does there: a completion is processed
 * at once under the socket's spinlock when no process owns the socket;
 * while one does, it waits on the connection's backlog, and the owner
 * processes it when it releases the socket (sdp_release_cb(), which
 * release_sock() calls).  So no completion waits for a socket call to
 * finish, nothing sleeps on the socket lock in between, and a reader that
 * is busy copying data out processes the next arrivals on its own CPU.
 * Completions that come before the connection started wait there too:
 * the CM handler that starts it releases the socket.
 *
 * Neither softirq nor release_sock() may sleep: received data gets
 * GFP_ATOMIC memory.  When there is none, the completion goes back to the
 * head of the backlog, and a work item processes the backlog in process
 * context, where it may wait for memory; completions that come meanwhile
 * queue behind it, so they are still processed in order.
 */
#include <net/sock.h>

#include "sdp.h"

/* The first completion of the backlog needs memory that may take a wait. */
static void sdp_backlog_stall(struct sdp_conn *conn, struct sdp_wc *wc)
{
	sdp_stat_inc(sock_net(conn->sk), SDP_MIB_RX_MEMORY_STALLS);
	list_add(&wc->node, &conn->backlog);
	conn->backlog_stalled = true;
	queue_work(sdp_wq, &conn->backlog_work);
}

void sdp_cq_done(struct ib_cq *cq, struct ib_wc *ibwc)
{
	struct sdp_conn *conn = cq->cq_context;
	struct sdp_wc *wc = container_of(ibwc->wr_cqe, struct sdp_wc, cqe);
	struct sock *sk = conn->sk;

	wc->status = ibwc->status;
	wc->byte_len = ibwc->byte_len;

	bh_lock_sock(sk);
	if (sock_owned_by_user(sk) || !list_empty(&conn->backlog) ||
	    !conn->started)
		list_add_tail(&wc->node, &conn->backlog);
	else if (wc->process(sk, conn, wc, GFP_ATOMIC) == -ENOMEM)
		sdp_backlog_stall(conn, wc);
	bh_unlock_sock(sk);
}

/*
 * The proto's release_cb: release_sock() calls it with the socket's
 * spinlock held, before the owner lets go, so that nothing can join the
 * backlog unseen.
 */
void sdp_release_cb(struct sock *sk)
{
	struct sdp_conn *conn = sdp_sk(sk)->conn;
	struct sdp_wc *wc;

	if (!conn || conn->backlog_stalled || !conn->started)
		return;
	while ((wc = list_first_entry_or_null(&conn->backlog, struct sdp_wc,
					      node))) {
		list_del(&wc->node);
		if (wc->process(sk, conn, wc, GFP_ATOMIC) == -ENOMEM) {
			sdp_backlog_stall(conn, wc);
			return;
		}
	}
}

/*
 * Processes a stalled backlog with memory it may wait for.  What joins it
 * meanwhile is newer, and release_sock() processes it afterwards.
 */
static void sdp_backlog_work(struct work_struct *work)
{
	struct sdp_conn *conn = container_of(work, struct sdp_conn,
					     backlog_work);
	struct sock *sk = conn->sk;
	struct sdp_wc *wc, *tmp;
	LIST_HEAD(stalled);

	lock_sock(sk);
	if (sdp_sk(sk)->conn != conn) {
		release_sock(sk);
		return;		/* taken: its backlog goes with it */
	}
	spin_lock_bh(&sk->sk_lock.slock);
	list_splice_init(&conn->backlog, &stalled);
	conn->backlog_stalled = false;
	spin_unlock_bh(&sk->sk_lock.slock);

	list_for_each_entry_safe(wc, tmp, &stalled, node) {
		list_del(&wc->node);
		wc->process(sk, conn, wc, GFP_KERNEL);
	}
	release_sock(sk);
}

void sdp_backlog_init(struct sdp_conn *conn)
{
	INIT_LIST_HEAD(&conn->backlog);
	INIT_WORK(&conn->backlog_work, sdp_backlog_work);
}
