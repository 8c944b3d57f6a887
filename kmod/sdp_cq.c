// SPDX-License-Identifier: GPL-2.0
/*
 * SDP work completions: where and when each one is processed.
 *
 * Each connection has its own completion queue, polled in softirq
 * (irq_poll), where TCP receives its segments.  A device raises the
 * queue's event from its interrupt (a real HCA), or from a tasklet
 * (Soft-RoCE of 6.1), and the poll runs as that context returns.
 * Soft-RoCE of 6.12 and 7.x raises it from a kworker, with interrupts
 * off and its queue's lock held: there the softirq could only wake
 * ksoftirqd, one more task switch for every event.  So an event raised
 * in process context goes to a task of the socket's calls that sleeps
 * for what completions bring, when there is one (sdp_wait_woken()): it
 * is woken, and polls the queue in its own softirq section, as busy
 * polling would.  Without such a task, the event goes to irq_poll as
 * any other.  Either way irq_poll's scheduled bit lets one poll run at a
 * time, and the poll arms the event again when the queue is empty.
 *
 * A completion is processed as TCP processes a segment: at once, under
 * the socket's spinlock, when no process owns the socket;
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
#include <linux/sched.h>
#include <net/sock.h>

#include "sdp.h"

/* Completions one poll takes from the queue at a time, and per softirq. */
#define SDP_CQ_BATCH	8
#define SDP_CQ_BUDGET	256

/*
 * The poll arms the queue's event before it lets go of irq_poll's
 * scheduled bit, so that once irq_poll_disable() has the bit, no poll
 * touches the queue any more (sdp_cq_destroy()).  An event that comes in
 * between finds the bit still set and only leaves @cq_kicked, which the
 * poll looks at once it let go.
 */
static int sdp_cq_poll(struct irq_poll *iop, int budget)
{
	struct sdp_conn *conn = container_of(iop, struct sdp_conn, iop);
	struct ib_wc wcs[SDP_CQ_BATCH];
	int done = 0, n, i;

	WRITE_ONCE(conn->cq_kicked, false);
	while (done < budget) {
		n = ib_poll_cq(conn->cq, min(SDP_CQ_BATCH, budget - done), wcs);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			if (wcs[i].wr_cqe)
				wcs[i].wr_cqe->done(conn->cq, &wcs[i]);
			else
				WARN_ON_ONCE(wcs[i].status == IB_WC_SUCCESS);
		}
		done += n;
		if (n < SDP_CQ_BATCH)
			break;		/* empty */
	}
	if (done)
		sdp_stat_add(sock_net(conn->sk), SDP_MIB_CQ_COMPLETIONS, done);
	if (done < budget) {
		/* What came after the last poll and before the arming. */
		if (ib_req_notify_cq(conn->cq, IB_CQ_NEXT_COMP |
				     IB_CQ_REPORT_MISSED_EVENTS) > 0)
			return budget;	/* irq_poll keeps it scheduled */
		irq_poll_complete(iop);
		smp_mb__after_atomic();	/* pairs with sdp_cq_event() */
		if (READ_ONCE(conn->cq_kicked))
			irq_poll_sched(iop);
	}
	return done;
}

/*
 * Hands the event to a waiting task of the socket's calls, if one is
 * there to take it.  The pairing of @cq_event's exchange with the
 * waiters' count (sdp_wait_woken()) makes sure that either a waiter or
 * the handler takes every event.
 */
static bool sdp_cq_hand_over(struct sdp_conn *conn)
{
	struct sock *sk = conn->sk;
	struct sdp_sock *ssk = sdp_sk(sk);

	if (!atomic_read(&ssk->cq_waiters))
		return false;
	xchg(&ssk->cq_event, conn);
	if (atomic_read(&ssk->cq_waiters)) {
		sdp_stat_inc(sock_net(sk), SDP_MIB_CQ_HANDOVERS);
		sdp_wake_sleepers(sk);
		return true;
	}
	/* The waiter left meanwhile: unless it took the event, we do. */
	return !xchg(&ssk->cq_event, NULL);
}

/*
 * The queue's event, armed by the last poll.  Called by the device with
 * its queue's lock held, where the queue cannot be polled.
 */
static void sdp_cq_event(struct ib_cq *cq, void *context)
{
	struct sdp_conn *conn = context;
	const struct net *net = sock_net(conn->sk);

	sdp_stat_inc(net, SDP_MIB_CQ_EVENTS);
	WRITE_ONCE(conn->cq_kicked, true);
	smp_mb();	/* before the scheduled bit is looked at */
	if (in_task()) {
		sdp_stat_inc(net, SDP_MIB_CQ_TASK_EVENTS);
		if (!READ_ONCE(conn->cq_in_task))
			WRITE_ONCE(conn->cq_in_task, true);
		if (sdp_cq_hand_over(conn))
			return;
	}
	irq_poll_sched(&conn->iop);
}

/*
 * Polls the queue whose event was handed to the socket's waiters, in
 * this task's softirq section: the poll runs at local_bh_enable().  The
 * connection may be torn down meanwhile: sdp_cq_destroy() takes the
 * event back, and the connection's memory outlives a softirq section.
 */
void sdp_cq_take_event(struct sdp_sock *ssk)
{
	struct sdp_conn *conn;

	if (!READ_ONCE(ssk->cq_event))
		return;
	local_bh_disable();
	conn = xchg(&ssk->cq_event, NULL);
	if (conn)
		irq_poll_sched(&conn->iop);
	local_bh_enable();
}

/**
 * sdp_wait_woken - wait_woken() for a task of the socket's calls
 * @sk: the socket, released by the caller
 * @wait: the caller's entry on the socket's wait queue
 * @state: the task state to sleep in
 * @timeout: as for wait_woken()
 *
 * Between release_sock() and lock_sock() only: it may process
 * completions, which needs the socket not owned by this task.
 */
long sdp_wait_woken(struct sock *sk, struct wait_queue_entry *wait,
		    unsigned int state, long timeout)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	sdp_cq_wait_begin(ssk);
	timeout = wait_woken(wait, state, timeout);
	sdp_cq_wait_end(ssk);
	return timeout;
}

/**
 * sdp_sk_wait - sk_wait_event() whose sleep is sdp_wait_woken()
 * @sk: the socket, locked; released while waiting
 * @timeo: the time left, updated
 * @wait: the caller's entry on the socket's wait queue
 * @ready: ends the wait; checked once more with the socket released
 * @arg: for @ready
 *
 * The caller checks its state again when this returns, as after
 * sk_wait_event().
 */
void sdp_sk_wait(struct sock *sk, long *timeo, struct wait_queue_entry *wait,
		 bool (*ready)(const struct sock *sk, const void *arg),
		 const void *arg)
{
	release_sock(sk);
	if (!ready(sk, arg))
		*timeo = sdp_wait_woken(sk, wait, TASK_INTERRUPTIBLE, *timeo);
	sched_annotate_sleep();
	lock_sock(sk);
}

/*
 * A task of the socket's calls is about to wait for what completions
 * bring, with the socket released: it takes over the events raised in
 * process context until sdp_cq_wait_end(), in which it takes the last.
 * A task that does not sleep meanwhile (it spins) calls
 * sdp_cq_take_event() as it spins.
 */
void sdp_cq_wait_begin(struct sdp_sock *ssk)
{
	atomic_inc(&ssk->cq_waiters);
}

void sdp_cq_wait_end(struct sdp_sock *ssk)
{
	atomic_dec(&ssk->cq_waiters);
	smp_mb__after_atomic();	/* pairs with sdp_cq_hand_over()'s xchg */
	sdp_cq_take_event(ssk);
}

/* Makes the connection's completion queue and arms its event. */
int sdp_cq_create(struct sdp_conn *conn, int nr_cqe)
{
	static atomic_t next_vector = ATOMIC_INIT(0);
	struct ib_device *ibdev = conn->id->device;
	struct ib_cq_init_attr attr = {
		.cqe		= nr_cqe,
		.comp_vector	= (unsigned int)atomic_inc_return(&next_vector) %
				  max(ibdev->num_comp_vectors, 1),
	};
	struct ib_cq *cq;

	cq = ib_create_cq(ibdev, sdp_cq_event, NULL, conn, &attr);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	conn->cq = cq;
	irq_poll_init(&conn->iop, SDP_CQ_BUDGET, sdp_cq_poll);
	ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	return 0;
}

/*
 * Frees the completion queue of a connection whose QP is destroyed: no
 * event comes any more.  An event still handed to the socket's waiters
 * is taken back; a waiter that took it schedules a poll before
 * irq_poll_disable() or not at all.  irq_poll_disable() waits for a
 * scheduled poll, and a poll that let go no longer touches the queue
 * (sdp_cq_poll()).
 */
void sdp_cq_destroy(struct sdp_conn *conn)
{
	cmpxchg(&sdp_sk(conn->sk)->cq_event, conn, NULL);
	irq_poll_disable(&conn->iop);
	ib_destroy_cq(conn->cq);
	conn->cq = NULL;
}

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

	/*
	 * Softirq, but for the drain of a QP with an SRQ (6.12 and later),
	 * which polls from the teardown's process context.
	 */
	local_bh_disable();
	bh_lock_sock(sk);
	if (sock_owned_by_user(sk) || !list_empty(&conn->backlog) ||
	    !conn->started)
		list_add_tail(&wc->node, &conn->backlog);
	else if (wc->process(sk, conn, wc, GFP_ATOMIC) == -ENOMEM)
		sdp_backlog_stall(conn, wc);
	bh_unlock_sock(sk);
	local_bh_enable();
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
