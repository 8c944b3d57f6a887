// SPDX-License-Identifier: GPL-2.0
/*
 * Read zero-copy, the sink's side.  The peer's SrcAvail advertises a
 * buffer of its caller's; we RDMA-Read it, a piece at a time, and report
 * each piece in an RdmaRdCompl.  A reader that waits for data in
 * recvmsg() with room for a page or more gets the bytes straight into its
 * own pages: no copy at either end.  Otherwise (a reader with a small
 * buffer, a non-blocking or in-kernel reader, nobody reading yet) the
 * bytes go into chunks that join the receive queue, as far as receive
 * space allows, and the reader copies them out as it would a Data
 * message's.  A SrcAvail blocks nothing: its bytes come after everything
 * queued, and the peer sends no other payload until it is done.
 *
 * SrcAvailCancel: we read no more, report what was read and answer
 * SendSM.  No chunks for the bytes when the receive queue is empty: we
 * refuse the rest with SendSM, and the peer sends it by buffered copy.
 */
#include <linux/sched/signal.h>
#include <linux/skbuff.h>
#include <linux/uio.h>
#include <net/sock.h>

#include "sdp.h"
#include "sdp_wire.h"

/* A reader waiting for its read looks again this often. */
#define SDP_RD_RECHECK	(HZ / 4)

/*
 * How long a direct read may take: the transport's retries end a silent
 * peer's read much sooner; a peer that answers it a packet at a time is
 * not let to hold the reader longer.
 */
#define SDP_RD_DEADLINE	(60 * HZ)

static int sdp_rd_process(struct sock *sk, struct sdp_conn *conn,
			  struct sdp_wc *wc, gfp_t gfp);

/* The sink's state, before the first SrcAvail is taken in. */
int sdp_rd_prepare(struct sdp_conn *conn, gfp_t gfp)
{
	struct sdp_rd *rd;
	unsigned int i;

	if (conn->rd)
		return 0;
	rd = kzalloc_obj(*rd, gfp);
	if (!rd)
		return -ENOMEM;
	for (i = 0; i < SDP_RD_WRS; i++) {
		rd->wc[i].cqe.done = sdp_cq_done;
		rd->wc[i].process = sdp_rd_process;
	}
	conn->rd = rd;
	sdp_conn_mem_add(conn, sizeof(*rd));
	return 0;
}

/* Unmaps the read's pages and lets go of them; a reader's are dirty. */
static void sdp_rd_release(struct sdp_conn *conn, struct sdp_rd *rd)
{
	struct ib_device *ibdev = conn->dev->ibdev;

	while (rd->npages) {
		unsigned int i = --rd->npages;

		ib_dma_unmap_page(ibdev, rd->sge[i].addr, rd->sge[i].length,
				  DMA_FROM_DEVICE);
		if (rd->to_user)
			set_page_dirty_lock(rd->page[i]);
		put_page(rd->page[i]);
	}
}

/* Maps @len bytes of @page from @off for the read, as its next SGE. */
static int sdp_rd_map(struct sdp_conn *conn, struct sdp_rd *rd,
		      struct page *page, u32 off, u32 len)
{
	struct ib_device *ibdev = conn->dev->ibdev;
	u64 dma = ib_dma_map_page(ibdev, page, off, len, DMA_FROM_DEVICE);

	if (ib_dma_mapping_error(ibdev, dma))
		return -ENOMEM;
	rd->page[rd->npages] = page;
	rd->sge[rd->npages].addr = dma;
	rd->sge[rd->npages].length = len;
	rd->sge[rd->npages].lkey = conn->dev->pd->local_dma_lkey;
	rd->npages++;
	return 0;
}

/*
 * Posts the RDMA Reads of the next rd->bytes of the SrcAvail into the
 * mapped pages, rd_sges SGEs a request.  Socket lock held.
 */
static int sdp_rd_post(struct sock *sk, struct sdp_conn *conn)
{
	struct sdp_rd *rd = conn->rd;
	u64 raddr = rd->vaddr + rd->done;
	unsigned int w, i = 0;
	int ret;

	rd->nwr = DIV_ROUND_UP(rd->npages, conn->rd_sges);
	for (w = 0; w < rd->nwr; w++) {
		struct ib_rdma_wr *wr = &rd->wr[w];
		unsigned int n = min(conn->rd_sges, rd->npages - i);
		unsigned int k;

		memset(wr, 0, sizeof(*wr));
		wr->wr.wr_cqe = &rd->wc[w].cqe;
		wr->wr.opcode = IB_WR_RDMA_READ;
		wr->wr.sg_list = &rd->sge[i];
		wr->wr.num_sge = n;
		wr->remote_addr = raddr;
		wr->rkey = rd->rkey;
		if (w + 1 < rd->nwr)
			wr->wr.next = &rd->wr[w + 1].wr;
		else
			wr->wr.send_flags = IB_SEND_SIGNALED;
		for (k = 0; k < n; k++)
			raddr += rd->sge[i + k].length;
		i += n;
	}
	local_bh_disable();
	ret = ib_post_send(conn->id->qp, &rd->wr[0].wr, NULL);
	local_bh_enable();
	if (!ret)
		sdp_sk(sk)->rx_rd_busy = true;
	return ret;
}

/* The most bytes one read takes: its pages, of @unit bytes each at most. */
static u32 sdp_rd_max(const struct sdp_conn *conn, u32 unit)
{
	return min_t(u32, SDP_RD_PAGES, conn->rd_sges * SDP_RD_WRS) * unit;
}

/*
 * The peer reads no more of its SrcAvail than the first rd->done bytes
 * (it cancelled, or we refuse): done with it; the bytes read are
 * reported, then SendSM.
 */
static void sdp_rd_stop(struct sock *sk, struct sdp_conn *conn)
{
	conn->send_sm_due = true;
	sdp_rd_ended(sk, conn);
}

/*
 * The peer's SrcAvail is done with: all its bytes are in, or it was
 * cancelled.  Its answers (RdmaRdCompl, SendSM) go first; then a DisConn
 * that came after it takes effect, which may tear the connection down.
 * Socket locked.
 */
void sdp_rd_ended(struct sock *sk, struct sdp_conn *conn)
{
	conn->rd_active = false;
	sdp_rx_update_full(sk, conn);
	sdp_tx_control(sk);
	/* (an aborted connection takes nothing more from the peer) */
	if (conn->disconn_held && !conn->aborted && !conn->dying) {
		conn->disconn_held = false;
		sdp_disconn_rcvd(sk);
	}
}

/* Whether a new read of the SrcAvail may start. */
static bool sdp_rd_ready(const struct sock *sk, const struct sdp_conn *conn)
{
	return conn->rd_active && !sdp_sk(sk)->rx_rd_busy &&
	       !conn->rd->npages && !conn->rd->cancelled && !conn->dying &&
	       !conn->aborted;
}

/*
 * Reads the next piece of the SrcAvail into chunks for the receive queue,
 * as much as receive space allows, but at least a chunk when the queue
 * is empty, so that the reader always gets something.
 */
static void sdp_rd_to_queue(struct sock *sk, struct sdp_conn *conn)
{
	struct sdp_dev *dev = conn->dev;
	struct sdp_rd *rd = conn->rd;
	u32 csize = sdp_chunk_size(dev);
	u32 want = min(rd->len - rd->done, sdp_rd_max(conn, csize));
	int room = READ_ONCE(sk->sk_rcvbuf) - atomic_read(&sk->sk_rmem_alloc);
	u32 got = 0;

	if (room < (int)csize) {
		if (sdp_sk(sk)->rx_queued)
			return;		/* the reader makes room, and kicks */
		room = csize;
	}
	want = min_t(u32, want, rounddown(room, csize));
	rd->to_user = false;
	while (got < want) {
		struct page *page = sdp_dev_take_spare(dev);
		u32 len = min(want - got, csize);

		if (!page)
			page = sdp_chunk_alloc(dev, GFP_ATOMIC);
		if (!page)
			break;
		if (sdp_rd_map(conn, rd, page, 0, len)) {
			if (!sdp_dev_keep_spare(dev, page))
				put_page(page);
			break;
		}
		got += len;
	}
	if (!got) {
		sdp_stat_inc(sock_net(sk), SDP_MIB_RX_MEMORY_STALLS);
		if (!sdp_sk(sk)->rx_queued)
			sdp_rd_stop(sk, conn);
		return;
	}
	rd->bytes = got;
	if (sdp_rd_post(sk, conn)) {
		sdp_rd_release(conn, rd);
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_ERROR,
			  "cannot post an RDMA Read");
	}
}

/**
 * sdp_rd_kick - starts the next read of the peer's SrcAvail, if any
 * @sk: the socket, locked
 *
 * A reader that waits with room for it gets it (it is woken); else its
 * bytes go to the receive queue, as receive space allows.  Called when a
 * SrcAvail arrives, when a read completes, and when the reader made room.
 */
void sdp_rd_kick(struct sock *sk)
{
	struct sdp_conn *conn = sdp_sk(sk)->conn;

	if (!conn || !conn->rd || !sdp_rd_ready(sk, conn))
		return;
	if (sdp_sk(sk)->rx_rd_waiters) {
		sk->sk_data_ready(sk);
		return;
	}
	sdp_rd_to_queue(sk, conn);
}

/* SrcAvail: the peer offers @len bytes at @vaddr, @rkey.  Socket locked. */
void sdp_rd_src_avail(struct sock *sk, struct sdp_conn *conn, u32 len,
		      u32 rkey, u64 vaddr)
{
	struct sdp_rd *rd = conn->rd;

	if (conn->rd_active || sdp_sk(sk)->rx_rd_busy) {
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_PROTOCOL,
			  "SrcAvail while another is pending");
		return;
	}
	if (!len) {
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_PROTOCOL,
			  "SrcAvail of no bytes");
		return;
	}
	if (sock_flag(sk, SOCK_DEAD)) {
		/* As TCP resets when data reaches a closed socket. */
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_LOCAL,
			  "data after close");
		return;
	}
	rd->len = len;
	rd->rkey = rkey;
	rd->vaddr = vaddr;
	rd->done = 0;
	rd->unacked = 0;
	rd->cancelled = false;
	conn->rd_active = true;
	sdp_rx_update_full(sk, conn);
	sdp_rd_kick(sk);
}

/* SrcAvailCancel: the peer wants its buffer back.  Socket locked. */
void sdp_rd_src_cancel(struct sock *sk, struct sdp_conn *conn)
{
	/* Nothing pending: it crossed our last RdmaRdCompl. */
	if (!conn->rd_active || conn->rd->cancelled)
		return;
	conn->rd->cancelled = true;
	/* A read under way finishes first (sdp_rd_process()). */
	if (!sdp_sk(sk)->rx_rd_busy)
		sdp_rd_stop(sk, conn);
}

/*
 * The chunks of a completed read join the receive queue, in skbs of at
 * most MAX_SKB_FRAGS chunks.  -ENOMEM, with nothing done, when there is
 * no @gfp memory for the skbs.
 */
static int sdp_rd_queue(struct sock *sk, struct sdp_conn *conn, gfp_t gfp)
{
	struct sdp_rd *rd = conn->rd;
	u32 csize = sdp_chunk_size(conn->dev);
	struct sk_buff_head queue;
	struct sk_buff *skb = NULL;
	unsigned int i;

	__skb_queue_head_init(&queue);
	for (i = 0; i < rd->npages; i += MAX_SKB_FRAGS) {
		skb = alloc_skb(0, gfp);
		if (!skb) {
			__skb_queue_purge(&queue);
			return -ENOMEM;
		}
		__skb_queue_tail(&queue, skb);
	}
	for (i = 0; i < rd->npages; i++) {
		if (i % MAX_SKB_FRAGS == 0)
			skb = __skb_dequeue(&queue);
		ib_dma_unmap_page(conn->dev->ibdev, rd->sge[i].addr,
				  rd->sge[i].length, DMA_FROM_DEVICE);
		skb_add_rx_frag(skb, i % MAX_SKB_FRAGS, rd->page[i], 0,
				rd->sge[i].length, csize);
		if ((i + 1) % MAX_SKB_FRAGS == 0 || i + 1 == rd->npages) {
			SDP_SKB_CB(skb)->offset = 0;
			SDP_SKB_CB(skb)->copied = false;
			skb_set_owner_r(skb, sk);
			__skb_queue_tail(&sk->sk_receive_queue, skb);
		}
	}
	rd->npages = 0;
	WRITE_ONCE(sdp_sk(sk)->rx_queued, sdp_sk(sk)->rx_queued + rd->bytes);
	return 0;
}

/*
 * A request of an RDMA Read completed: the last one ends the read (an RC
 * QP completes in order; after an error, every later request flushes).
 * Socket locked.  A connection that is no longer the socket's leaves the
 * pages to its free.
 */
static int sdp_rd_process(struct sock *sk, struct sdp_conn *conn,
			  struct sdp_wc *wc, gfp_t gfp)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_rd *rd = conn->rd;
	bool last = wc == &rd->wc[rd->nwr - 1];
	bool ok = wc->status == IB_WC_SUCCESS;

	if (ssk->conn != conn)
		return 0;
	if (!ok)
		sdp_wc_failed(sk, wc->status, "an RDMA Read");
	if (!last)
		return 0;
	if (ok && !rd->to_user && sdp_rd_queue(sk, conn, gfp))
		return -ENOMEM;

	ssk->rx_rd_busy = false;
	if (!ok) {
		ssk->rx_rd_result = -ECONNRESET;
		if (!rd->to_user)
			sdp_rd_release(conn, rd);
		sdp_wake_sleepers(sk);
		return 0;
	}
	ssk->rx_rd_result = rd->bytes;
	rd->done += rd->bytes;
	rd->unacked += rd->bytes;
	conn->rd_compl_due = true;
	ssk->bytes_received += rd->bytes;
	sdp_stat_add(sock_net(sk), SDP_MIB_RX_BYTES, rd->bytes);
	sdp_stat_add(sock_net(sk), SDP_MIB_RX_READ_ZCOPY_BYTES, rd->bytes);
	if (rd->to_user)
		sdp_stat_add(sock_net(sk), SDP_MIB_RX_READ_ZCOPY_DIRECT_BYTES,
			     rd->bytes);
	if (rd->done == rd->len)
		sdp_rd_ended(sk, conn);
	else if (rd->cancelled)
		sdp_rd_stop(sk, conn);
	sdp_tx_control(sk);
	/* The reader whose pages it filled, or a source waiting for the QP. */
	sdp_wake_sleepers(sk);
	if (!rd->to_user && (ssk->rx_sleepers || sdp_rx_readable(sk)))
		sk->sk_data_ready(sk);
	sdp_rd_kick(sk);
	return 0;
}

/*
 * Whether the caller of recvmsg() may take the SrcAvail's bytes into its
 * own pages: now (@now: nothing is queued before them, and no read is
 * under way), or once one comes.  It needs room for a page, or for all
 * that is left, and not to peek.
 */
bool sdp_rd_direct_wanted(const struct sock *sk, const struct msghdr *msg,
			  int flags, bool now)
{
	const struct sdp_conn *conn = sdp_sk(sk)->conn;

	if (!conn || !conn->read_zcopy || (flags & MSG_PEEK) ||
	    !user_backed_iter(&msg->msg_iter))
		return false;
	if (!now)
		return iov_iter_count(&msg->msg_iter) >= PAGE_SIZE;
	return conn->rd && sdp_rd_ready(sk, conn) &&
	       skb_queue_empty(&sk->sk_receive_queue) &&
	       (iov_iter_count(&msg->msg_iter) >= PAGE_SIZE ||
		iov_iter_count(&msg->msg_iter) >= conn->rd->len - conn->rd->done);
}

/*
 * Pins and maps up to @max bytes of @to, within one of its segments, for
 * the read.  Returns the bytes, or an error with nothing taken.
 */
static ssize_t sdp_rd_map_user(struct sdp_conn *conn, struct sdp_rd *rd,
			       struct iov_iter *to, size_t max)
{
	unsigned int i, n;
	size_t start, left;
	ssize_t got;

	got = iov_iter_get_pages2(to, rd->page, max, sdp_rd_max(conn, 1),
				  &start);
	if (got <= 0)
		return got ? got : -EFAULT;
	n = DIV_ROUND_UP(start + got, PAGE_SIZE);
	rd->to_user = true;
	left = got;
	for (i = 0; i < n; i++) {
		u32 len = min_t(size_t, left, PAGE_SIZE - start);

		if (sdp_rd_map(conn, rd, rd->page[i], start, len))
			goto fail;
		left -= len;
		start = 0;
	}
	return got;
fail:
	sdp_rd_release(conn, rd);
	while (i < n)
		put_page(rd->page[i++]);
	iov_iter_revert(to, got);
	return -ENOMEM;
}

/**
 * sdp_rd_direct - reads the peer's SrcAvail straight into the caller's pages
 * @sk: the socket, locked; sdp_rd_direct_wanted(now) holds
 * @msg: the caller's message
 * @max: the most bytes to take
 *
 * Waits for the read: the device writes into the caller's pages until it
 * completes, or until the connection's drain, so the caller returns only
 * then.  A fatal signal (the bytes would go to a reader that is gone),
 * or a read that outlasts SDP_RD_DEADLINE, aborts the connection, whose
 * drain ends the read soon.  Returns the bytes read, or a negative error (the connection
 * failed).
 */
int sdp_rd_direct(struct sock *sk, struct msghdr *msg, size_t max)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_conn *conn = ssk->conn;
	struct sdp_rd *rd = conn->rd;
	unsigned long deadline;
	bool aborted = false;
	ssize_t got;
	int ret;

	deadline = jiffies + SDP_RD_DEADLINE;
	got = sdp_rd_map_user(conn, rd, &msg->msg_iter,
			      min_t(size_t, max, rd->len - rd->done));
	if (got <= 0)
		return got;
	rd->bytes = got;
	if (sdp_rd_post(sk, conn)) {
		sdp_rd_release(conn, rd);
		iov_iter_revert(&msg->msg_iter, got);
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_ERROR,
			  "cannot post an RDMA Read");
		return -ECONNRESET;
	}

	add_wait_queue(sk_sleep(sk), &wait);
	while (READ_ONCE(ssk->rx_rd_busy)) {
		if (!aborted && fatal_signal_pending(current)) {
			sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_LOCAL,
				  "reader killed during an RDMA Read");
			aborted = true;
		} else if (!aborted && time_after(jiffies, deadline)) {
			sdp_abort(sk, -ETIMEDOUT, SDP_MIB_ABORT_ERROR,
				  "an RDMA Read outlasted its time limit");
			aborted = true;
		}
		release_sock(sk);
		if (READ_ONCE(ssk->rx_rd_busy))
			sdp_wait_woken(sk, &wait, aborted ?
				       TASK_UNINTERRUPTIBLE : TASK_KILLABLE,
				       SDP_RD_RECHECK);
		lock_sock(sk);
	}
	remove_wait_queue(sk_sleep(sk), &wait);

	ret = ssk->rx_rd_result;
	/* Once the connection is not the socket's, its free took the pages. */
	if (ssk->conn == conn)
		sdp_rd_release(conn, rd);
	if (ret < 0)
		iov_iter_revert(&msg->msg_iter, got);
	return ret;
}

/*
 * Frees the sink's state.  From sdp_tx_trim() when no SrcAvail is
 * pending and no read under way; or with the connection, its QP drained:
 * the pages of a read that never completed go back, and a reader that
 * waits for it learns that it failed.
 */
void sdp_rd_free(struct sdp_conn *conn)
{
	struct sdp_sock *ssk = sdp_sk(conn->sk);
	struct sdp_rd *rd = conn->rd;

	if (!rd)
		return;
	sdp_rd_release(conn, rd);
	if (READ_ONCE(ssk->rx_rd_busy)) {
		WRITE_ONCE(ssk->rx_rd_result, -ECONNRESET);
		WRITE_ONCE(ssk->rx_rd_busy, false);
		sdp_wake_sleepers(conn->sk);
	}
	conn->rd = NULL;
	sdp_conn_mem_add(conn, -(long)sizeof(*rd));
	kfree(rd);
}
