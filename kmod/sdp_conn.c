// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs objects of one SDP connection: its completion queue, the RC
 * queue pair owned by the RDMA CM id, which receives from the device's
 * shared receive queue (sdp_dev.c), its credits and its send ring; and
 * the connection's teardown.
 */
#include <linux/slab.h>

#include "sdp.h"
#include "sdp_wire.h"

static void sdp_qp_event(struct ib_event *event, void *context)
{
	/* A QP on a shared receive queue that went to error: expected. */
	if (event->event == IB_EVENT_QP_LAST_WQE_REACHED)
		return;
	pr_warn_ratelimited("sdp: QP event %s\n", ib_event_msg(event->event));
}

/*
 * Credits a passive child gives before accept() takes it: what the
 * HelloAck announces, room for a first burst of the peer's data.  The
 * rest, and the send ring, wait for accept() (sdp_conn_grow()), so that
 * a listener's backlog of children that nobody accepts takes little
 * receive space, as TCP's holds little more than what the peer sent
 * within its initial window.  A child sends nothing before accept(): it
 * does not need a send ring.
 */
#define SDP_CHILD_RX_BUFS	4

static void sdp_teardown_work(struct work_struct *work);
static void sdp_teardown_finish(struct work_struct *work);

/*
 * How long the teardown waits for the answer to its DREQ.  Over RoCE the
 * CM resends a DREQ after about 6 s (twice the packet life time plus the
 * CM response time): this leaves room for one resend.
 */
#define SDP_DREP_WAIT	(8 * HZ)

/*
 * Allocates the connection of @sk around @id, or around a new CM id in the
 * socket's namespace when @id is NULL.  The connection holds a reference
 * on the socket.
 */
struct sdp_conn *sdp_conn_alloc(struct sock *sk, struct rdma_cm_id *id)
{
	struct sdp_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL);

	if (!conn)
		return ERR_PTR(-ENOMEM);
	if (!id)
		id = rdma_create_id(sock_net(sk), sdp_cm_handler, sk,
				    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		kfree(conn);
		return ERR_CAST(id);
	}
	conn->sk = sk;
	conn->id = id;
	INIT_DELAYED_WORK(&conn->teardown, sdp_teardown_work);
	INIT_DELAYED_WORK(&conn->finish, sdp_teardown_finish);
	sdp_watchdog_init(conn);
	sdp_backlog_init(conn);
	sock_hold(sk);
	return conn;
}

/**
 * sdp_conn_count - counts a connection against max_user_conns
 * @conn: a connection about to connect, or a passive child's
 *
 * Each connection takes a QP, a CQ and pinned buffers of the device, which
 * no memory cgroup sees: a local user must not take them all, and starve
 * the host's NFS mounts.  The connections of users' sockets count, per
 * network namespace; the kernel's own (NFS, kernel RPC) do not.
 *
 * Return: 0, or -ENOBUFS past the bound (counted as ConnLimitDrops).
 */
int sdp_conn_count(struct sdp_conn *conn)
{
	struct sock *sk = conn->sk;
	struct sdp_net *sn = sdp_net(sock_net(sk));
	unsigned int max = READ_ONCE(sdp_max_user_conns);

	if (sk->sk_kern_sock || conn->counted)
		return 0;
	if (atomic_inc_return(&sn->user_conns) > max && max) {
		atomic_dec(&sn->user_conns);
		sdp_stat_inc(sock_net(sk), SDP_MIB_CONN_LIMIT);
		return -ENOBUFS;
	}
	conn->counted = true;
	return 0;
}

/* Counts @bytes more (or fewer) of buffers that the connection holds. */
void sdp_conn_mem_add(struct sdp_conn *conn, long bytes)
{
	struct sdp_sock *ssk = sdp_sk(conn->sk);

	WRITE_ONCE(ssk->buf_bytes, ssk->buf_bytes + bytes);
	sdp_mem_add(bytes);
}

/*
 * Gives the connection its send ring: the slots, and their headers, mapped
 * once for the device.  Payload pages come with the first payload a slot
 * carries (sdp_tx.c).
 */
static int sdp_conn_alloc_tx(struct sdp_conn *conn)
{
	struct ib_device *ibdev = conn->dev->ibdev;
	size_t hdr = sdp_tx_ring_size * sizeof(struct sdp_msg_hdr);
	unsigned int i;
	u64 dma;

	conn->tx_ring = kvcalloc(sdp_tx_ring_size, sizeof(*conn->tx_ring),
				 GFP_KERNEL);
	if (!conn->tx_ring)
		return -ENOMEM;
	for (i = 0; i < sdp_tx_ring_size; i++) {
		conn->tx_ring[i].wc.cqe.done = sdp_cq_done;
		conn->tx_ring[i].wc.process = sdp_tx_process;
	}
	conn->tx_hdr = kzalloc(hdr, GFP_KERNEL);
	if (!conn->tx_hdr)
		return -ENOMEM;
	dma = ib_dma_map_single(ibdev, conn->tx_hdr, hdr, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, dma)) {
		kfree(conn->tx_hdr);
		conn->tx_hdr = NULL;
		return -ENOMEM;
	}
	conn->tx_hdr_dma = dma;
	conn->tx_idle = jiffies;
	sdp_conn_mem_add(conn, hdr);
	return 0;
}

/* Frees the send ring and its pages; the QP is drained. */
static void sdp_conn_free_tx(struct sdp_conn *conn)
{
	size_t hdr = sdp_tx_ring_size * sizeof(struct sdp_msg_hdr);

	if (conn->tx_ring)
		sdp_tx_free_bufs(conn);
	if (conn->tx_hdr) {
		ib_dma_unmap_single(conn->dev->ibdev, conn->tx_hdr_dma, hdr,
				    DMA_TO_DEVICE);
		kfree(conn->tx_hdr);
		conn->tx_hdr = NULL;
		sdp_conn_mem_add(conn, -(long)hdr);
	}
	kvfree(conn->tx_ring);
	conn->tx_ring = NULL;
}

/*
 * Creates the verbs objects on the device the CM id was resolved to, and
 * gives the credits that the Hello / HelloAck announce.  An active open
 * gets its send ring and all its credits; a passive @child
 * SDP_CHILD_RX_BUFS credits and no send ring until accept() takes it
 * (sdp_conn_grow()).  Socket lock held.  On failure the caller frees what
 * was made with sdp_conn_destroy().
 */
int sdp_conn_create_qp(struct sdp_conn *conn, bool child)
{
	struct rdma_cm_id *id = conn->id;
	struct ib_qp_init_attr attr = {
		.event_handler	= sdp_qp_event,
		.qp_context	= conn,
		.sq_sig_type	= IB_SIGNAL_REQ_WR,
		.qp_type	= IB_QPT_RC,
		/*
		 * One more for ib_drain_qp(), one for a keepalive probe, and
		 * read zero-copy's: a registration and its invalidation, and
		 * the requests of an RDMA Read.
		 */
		.cap.max_send_wr = sdp_tx_ring_size + 2 + 2 + SDP_RD_WRS,
	};
	struct sdp_dev *dev;
	int ret;

	dev = sdp_dev_get(id->device);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	conn->dev = dev;
	/*
	 * A message that finds the pool empty is NAKed and resent after this
	 * (0.32 ms) rather than the CM's default of 655 ms (sdp_dev.c).
	 */
	ret = rdma_set_min_rnr_timer(id, IB_RNR_TIMER_000_32);
	if (ret)
		return ret;
	/* A message from the caller's pages: the BSDH, then the pages. */
	conn->zc_frags = min_t(u32, id->device->attrs.max_send_sge,
			       1 + SDP_ZC_FRAGS) - 1;
	attr.cap.max_send_sge = 1 + max(dev->nchunks, conn->zc_frags);
	attr.srq = dev->srq;

	/* Room for every send, and a receive for every credit. */
	ret = sdp_cq_create(conn, attr.cap.max_send_wr + sdp_rx_ring_size);
	if (ret)
		return ret;

	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	ret = rdma_create_qp(id, dev->pd, &attr);
	if (ret)
		return ret;
	conn->rd_sges = clamp_t(u32, min_t(u32, id->device->attrs.max_sge_rd,
					   attr.cap.max_send_sge),
				1, SDP_RD_PAGES);

	sdp_sk(conn->sk)->rx_posted = 0;
	if (child) {
		sdp_rx_give_credits(conn, min_t(unsigned int, sdp_rx_ring_size,
						SDP_CHILD_RX_BUFS), true);
		return 0;
	}
	sdp_rx_give_credits(conn, sdp_rx_ring_size, true);
	return sdp_conn_alloc_tx(conn);
}

/*
 * accept() took the passive child @sk: its connection gets its send ring
 * and the rest of its credits, given as receive space allows, and a
 * credit update tells the peer of them.  Nothing to do once the
 * connection is gone or going.  Socket lock held.
 */
int sdp_conn_grow(struct sock *sk)
{
	struct sdp_conn *conn = sdp_sk(sk)->conn;
	int ret;

	if (!conn || conn->dying || conn->tx_ring)
		return 0;
	ret = sdp_conn_alloc_tx(conn);
	if (ret)
		return ret;
	sdp_rx_give_credits(conn, sdp_rx_ring_size - sdp_sk(sk)->rx_posted -
				  conn->rx_withheld, false);
	sdp_rx_consumed(sk);
	return 0;
}

/*
 * As TCP's buffer autotuning grows the buffers of a socket whose program
 * did not size them: room for the whole receive (send) ring, twice over
 * for the bookkeeping, within tcp_rmem[2] (tcp_wmem[2]).
 */
static void sdp_conn_size_buffers(struct sock *sk)
{
	const struct net *net = sock_net(sk);
	int rx = 2 * sdp_rx_ring_size * sdp_rx_buf_size;
	int tx = 2 * sdp_tx_ring_size * sdp_rx_buf_size;

	if (!(sk->sk_userlocks & SOCK_RCVBUF_LOCK)) {
		rx = min(rx, READ_ONCE(net->ipv4.sysctl_tcp_rmem[2]));
		WRITE_ONCE(sk->sk_rcvbuf, max(sk->sk_rcvbuf, rx));
	}
	if (!(sk->sk_userlocks & SOCK_SNDBUF_LOCK)) {
		tx = min(tx, READ_ONCE(net->ipv4.sysctl_tcp_wmem[2]));
		WRITE_ONCE(sk->sk_sndbuf, max(sk->sk_sndbuf, tx));
	}
}

/*
 * The connection is up: the peer's Hello or HelloAck gave the credits we
 * start with and the largest message it takes.  Socket lock held.
 */
void sdp_conn_start(struct sock *sk, u16 peer_bufs, u32 peer_rcv_size,
		    u8 peer_cap)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	sdp_conn_size_buffers(sk);

	ssk->peer_rcv_size = min(peer_rcv_size, sdp_rx_msg_max());
	ssk->tx_credits = peer_bufs;
	ssk->tx_mseq = 0;
	ssk->tx_head = 0;
	ssk->tx_tail = 0;
	ssk->tx_unsignaled = false;
	ssk->rx_mseq = 0;
	ssk->rx_adv = ssk->rx_posted;
	ssk->rx_since_adv = 0;
	ssk->disconn_pending = false;
	ssk->disconn_sent = false;
	ssk->disconn_rcvd = false;
	ssk->rx_stamp = jiffies;
	ssk->tx_stamp = jiffies;
	ssk->probes = 0;
	ssk->tx_src_active = false;
	ssk->rx_rd_busy = false;
	ssk->conn->read_zcopy = ssk->read_zcopy &&
				(peer_cap & SDP_CAP_READ_ZCOPY);
	ssk->conn->started = true;
}

/* The capabilities the socket's Hello or HelloAck offers. */
u8 sdp_conn_cap(const struct sock *sk)
{
	return sdp_sk(sk)->read_zcopy ? SDP_CAP_READ_ZCOPY : 0;
}

/* Flushes the QP and reaps its completions; the handlers see them all. */
static void sdp_conn_drain(struct sdp_conn *conn)
{
	if (conn->id->qp)
		ib_drain_qp(conn->id->qp);
}

/*
 * Receive buffers whose completions were left on the backlog (the
 * connection was taken while its socket's owner held them) go back to
 * the device's pool.  The QP is destroyed: nothing joins the backlog.
 */
static void sdp_conn_drop_backlog(struct sdp_conn *conn)
{
	struct sdp_wc *wc, *tmp;

	list_for_each_entry_safe(wc, tmp, &conn->backlog, node) {
		list_del(&wc->node);
		if (wc->process == sdp_rx_process)
			sdp_dev_repost(conn->dev,
				       container_of(wc, struct sdp_buf, wc));
	}
}

/*
 * Frees the verbs objects, leaving the CM id.  The QP is drained first,
 * and the backlog's work stopped, so no completion handler touches a
 * buffer after it is freed.  Must not be called with the socket lock
 * held.
 */
static void sdp_conn_free_verbs(struct sdp_conn *conn)
{
	struct rdma_cm_id *id = conn->id;

	if (id->qp) {
		sdp_conn_drain(conn);
		rdma_destroy_qp(id);
	}
	cancel_work_sync(&conn->backlog_work);
	if (conn->dev) {
		sdp_conn_drop_backlog(conn);
		sdp_zcopy_free(conn);
		sdp_src_free(conn);
		sdp_rd_free(conn);
		sdp_conn_free_tx(conn);
	}
	if (conn->cq)
		sdp_cq_destroy(conn);
	if (conn->dev) {
		sdp_dev_put(conn->dev);
		conn->dev = NULL;
	}
}

/*
 * Tears a connection down and frees it, but for its teardown work, which
 * is either not queued or this very call's caller: the watchdog stopped,
 * a DREQ to the peer if there is a QP, the verbs objects freed, and the
 * CM id destroyed if @destroy_id.
 */
static void __sdp_conn_destroy(struct sdp_conn *conn, bool destroy_id)
{
	struct sock *sk = conn->sk;

	cancel_delayed_work_sync(&conn->watchdog);
	if (conn->id->qp)
		rdma_disconnect(conn->id);
	sdp_conn_free_verbs(conn);
	if (destroy_id)
		rdma_destroy_id(conn->id);
	WARN_ON_ONCE(delayed_work_pending(&conn->teardown));
	WARN_ON_ONCE(delayed_work_pending(&conn->finish));
	if (conn->counted)
		atomic_dec(&sdp_net(sock_net(sk))->user_conns);
	kfree_rcu(conn, rcu);
	sock_put(sk);
}

/**
 * sdp_conn_destroy - tears a connection down and frees it
 * @conn: a connection taken with sdp_conn_take(), or NULL
 * @destroy_id: destroy its CM id too; false in a CM handler of that id,
 *	which returns 1 for the CM to destroy it
 *
 * Waits for the teardown work, the watchdog and the completion handlers,
 * and with @destroy_id for a CM handler of the id: must not be called
 * with the socket lock held.
 */
void sdp_conn_destroy(struct sdp_conn *conn, bool destroy_id)
{
	if (!conn)
		return;
	cancel_delayed_work_sync(&conn->teardown);
	__sdp_conn_destroy(conn, destroy_id);
}

/*
 * Takes the connection out of @sk: the caller owns it and must free it.
 * NULL if there is none, or if its teardown has begun (the teardown owns
 * it).  Socket lock held.
 */
struct sdp_conn *sdp_conn_take(struct sock *sk)
{
	struct sdp_conn *conn = sdp_sk(sk)->conn;

	if (!conn || conn->dying)
		return NULL;
	sdp_sk(sk)->conn = NULL;
	return conn;
}

/*
 * Queues the teardown of @sk's connection after @delay jiffies (0: now;
 * an earlier request stands when it is sooner).  Socket lock held.
 */
void sdp_conn_teardown(struct sock *sk, unsigned long delay)
{
	struct sdp_conn *conn = sdp_sk(sk)->conn;

	if (!conn || conn->dying)
		return;
	if (delay) {
		if (queue_delayed_work(sdp_wq, &conn->teardown, delay))
			conn->deadline = jiffies + delay;
	} else {
		mod_delayed_work(sdp_wq, &conn->teardown, 0);
		conn->deadline = 0;
	}
}

/**
 * sdp_conn_cm_done - the CM is done with a connection
 * @conn: the socket's connection
 *
 * Nothing more comes from the CM for it: a teardown that waits for the
 * DREP goes on now.  Socket lock held.
 */
void sdp_conn_cm_done(struct sdp_conn *conn)
{
	conn->cm_done = true;
	if (conn->finish_queued)
		mod_delayed_work(sdp_wq, &conn->finish, 0);
}

/*
 * Ends a connection for good: disconnects, lets the completion handlers
 * see everything that arrived, and queues the end of the teardown
 * (sdp_teardown_finish()) for when the peer answered the DREQ (or sent
 * its own).
 */
static void sdp_teardown_work(struct work_struct *work)
{
	struct sdp_conn *conn = container_of(to_delayed_work(work),
					     struct sdp_conn, teardown);
	struct sock *sk = conn->sk;
	struct sdp_sock *ssk = sdp_sk(sk);

	lock_sock(sk);
	if (ssk->conn != conn || conn->dying) {
		release_sock(sk);
		return;		/* taken by a socket call, which frees it */
	}
	conn->dying = true;
	/*
	 * Until now sdp_conn_teardown() could queue this work again (a
	 * DisConn or the CM's DISCONNECTED while it waited for the lock), and
	 * it frees the connection at its end: take that queueing back.  Now
	 * that the connection is dying, nothing queues it any more.
	 */
	cancel_delayed_work(&conn->teardown);
	release_sock(sk);

	rdma_disconnect(conn->id);
	sdp_conn_drain(conn);

	/*
	 * All that arrived is in: unless both DisConns went through, this is
	 * a reset, which the socket's users learn now, not after the DREP.
	 * No peer reads a SrcAvail's pages any more: their registration goes
	 * now, not after the DREP wait, which the peer draws out, and their
	 * sender returns (sdp_src_wait()).
	 */
	lock_sock(sk);
	sdp_src_revoke(conn);
	if (!(ssk->disconn_sent && ssk->disconn_rcvd))
		sdp_set_reset(sk);
	/* Only an established CM id sends a DREQ; others have nothing to wait for. */
	conn->finish_queued = true;
	queue_delayed_work(sdp_wq, &conn->finish,
			   conn->established && !conn->cm_done ?
			   SDP_DREP_WAIT : 0);
	release_sock(sk);
}

/*
 * The end of the teardown: detaches the connection from the socket,
 * which is closed (reset, unless both DisConns went through), and frees
 * it, CM id included.
 */
static void sdp_teardown_finish(struct work_struct *work)
{
	struct sdp_conn *conn = container_of(to_delayed_work(work),
					     struct sdp_conn, finish);
	struct sock *sk = conn->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sock *lsk = NULL;

	lock_sock(sk);
	/*
	 * The CM's handler may have queued this work again since it began
	 * to run: take that back; from now on nothing queues it.
	 */
	conn->finish_queued = false;
	cancel_delayed_work(&conn->finish);
	ssk->conn = NULL;
	/*
	 * A passive child that never got its RTU: no CM event will come for
	 * the id destroyed here, so the child leaves its listener now.
	 */
	if (sk->sk_state == TCP_SYN_RECV)
		lsk = sdp_child_unhook(sk);
	if (ssk->disconn_sent && ssk->disconn_rcvd) {
		sdp_stat_inc(sock_net(sk), SDP_MIB_ORDERLY_CLOSES);
	} else {
		sdp_stat_inc(sock_net(sk), SDP_MIB_RESETS);
		if (conn->deadline && time_after_eq(jiffies, conn->deadline))
			sdp_stat_inc(sock_net(sk), SDP_MIB_ABORT_TIMEOUT);
	}
	sdp_set_closed(sk);
	release_sock(sk);

	__sdp_conn_destroy(conn, true);
	sdp_child_release(sk, lsk);
}
