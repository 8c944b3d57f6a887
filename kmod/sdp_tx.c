// SPDX-License-Identifier: GPL-2.0
/*
 * SDP send path: Data messages copied into the send ring (buffered copy),
 * the control messages (credit updates, DisConn), credit accounting with
 * the last-credit rule, and the write-space wake-ups.
 *
 * A send buffer that is not full may be held back for more, as TCP holds
 * a segment that is not full: while the program corks (TCP_CORK, or
 * MSG_MORE on its last send), and while a send that asks for a completion
 * is in flight, as TCP's autocorking holds a segment while earlier ones
 * have not left the host.  An in-kernel sender such as SunRPC's server,
 * which writes a reply a page at a time, so fills whole buffers instead
 * of sending one message per page.  The held bytes lie in the send slot
 * tx_head, counted in sk_wmem_queued; they are posted when the slot
 * fills, when the completion comes, when the cork is removed or has held
 * them for 200 ms (checked by the watchdog), before a writer waits for
 * room, before DisConn, and with a credit update that is due.
 */
#include <linux/uio.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "sdp.h"
#include "sdp_wire.h"
#include "sdp_trace.h"

/*
 * Send slots not taken by a message in flight.  Read without the lock, a
 * tail newer than the head looks like a full ring: none is counted.
 */
static u32 sdp_tx_slots_free(const struct sdp_sock *ssk)
{
	u32 used = READ_ONCE(ssk->tx_head) - READ_ONCE(ssk->tx_tail);

	return used < sdp_tx_ring_size ? sdp_tx_ring_size - used : 0;
}

static bool sdp_tx_slot_free(const struct sdp_sock *ssk)
{
	return sdp_tx_slots_free(ssk) > 0;
}

/*
 * The proto's stream_memory_free: what a Data message with payload needs
 * beside send-buffer space (which sk_stream_memory_free() checks first):
 * a send slot and two credits, as the last one is kept for a credit
 * update.  Held bytes go first, as a message of their own when the next
 * bytes cannot join them (copied bytes after spliced pages), so they
 * count as one more: else a send on a writable socket could take nothing,
 * which SunRPC's client takes for a memory shortage and waits 250 ms
 * for.  In-kernel senders (SunRPC) ask it through sk_stream_memory_free()
 * and sk_stream_is_writeable() before they wait for sk_write_space.
 */
bool sdp_stream_memory_free(const struct sock *sk, int wake)
{
	const struct sdp_sock *ssk = sdp_sk(sk);
	u32 held = READ_ONCE(ssk->tx_held) ? 1 : 0;

	return READ_ONCE(ssk->tx_credits) > 1 + held &&
	       sdp_tx_slots_free(ssk) > held &&
	       !READ_ONCE(ssk->tx_src_active);
}

/*
 * Room for a Data message with payload: send-buffer space, a send slot
 * and two credits.  Read without the socket lock by poll().
 */
bool sdp_writable(const struct sock *sk)
{
	return READ_ONCE(sk->sk_wmem_queued) < READ_ONCE(sk->sk_sndbuf) &&
	       sdp_stream_memory_free(sk, 0);
}

/* The payload of one Data message at most. */
static u32 sdp_tx_payload_max(const struct sdp_sock *ssk)
{
	u32 max = ssk->peer_rcv_size - sizeof(struct sdp_bsdh);

	return ssk->user_mss ? min_t(u32, max, ssk->user_mss) : max;
}

/* Held bytes wait no longer than this under TCP_CORK or MSG_MORE (tcp(7)). */
#define SDP_CORK_CEILING	(HZ / 5)

/* At most this many sends in a row go without a completion. */
#define SDP_TX_SIGNAL_EVERY	8

/*
 * Whether the send about to be posted asks for a completion.  One
 * completion frees its slot and every one before it, so most sends of a
 * stream go without; but the last one a sender posts before it stops
 * (@more false) or may have to wait, for a slot, send-buffer space or a
 * credit (and may give up waiting), must ask, or nothing would free them.
 * (sk_wmem_queued counts the payload already: sdp_sendmsg().)
 */
static bool sdp_tx_signal(const struct sock *sk, bool more)
{
	const struct sdp_sock *ssk = sdp_sk(sk);

	return !more || (ssk->tx_head + 1) % SDP_TX_SIGNAL_EVERY == 0 ||
	       ssk->tx_credits <= 2 ||
	       ssk->tx_head + 1 - ssk->tx_tail >= sdp_tx_ring_size ||
	       sk->sk_wmem_queued + sizeof(struct sdp_bsdh) >=
	       READ_ONCE(sk->sk_sndbuf);
}

/*
 * Posts the message whose payload (@payload bytes: the held ones, or 0)
 * is already in the next send slot, with the @ext_len bytes of extended
 * header at @ext after its BSDH; @more: the caller posts another right
 * after.  Every message tells the peer our posted buffers and the last
 * message we received.  Socket lock held; the caller checked for a credit
 * and a slot.
 */
static int sdp_post_msg(struct sock *sk, struct sdp_conn *conn, u8 mid,
			const void *ext, u32 ext_len, u32 payload, bool more)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	const struct sdp_dev *dev = conn->dev;
	unsigned int slot = ssk->tx_head % sdp_tx_ring_size;
	struct sdp_tx_slot *tx = &conn->tx_ring[slot];
	struct sdp_zc *zc = conn->tx_zc ? &conn->tx_zc[slot] : NULL;
	struct sdp_msg_hdr *hdr = &conn->tx_hdr[slot];
	struct sdp_bsdh *bsdh = &hdr->bsdh;
	u32 hlen = sizeof(*bsdh) + ext_len;
	u64 hdr_dma = conn->tx_hdr_dma + slot * sizeof(*hdr);
	struct ib_sge sge[SDP_TX_SGES];
	struct ib_send_wr wr = {
		.wr_cqe		= &tx->wc.cqe,
		.sg_list	= sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
	};
	int ret;

	tx->len = hlen + payload;
	tx->seq = ssk->tx_head;
	if (sdp_tx_signal(sk, more))
		wr.send_flags = IB_SEND_SIGNALED;
	bsdh->mid = mid;
	bsdh->flags = 0;
	bsdh->bufs = htons(ssk->rx_posted);
	bsdh->len = htonl(tx->len);
	bsdh->mseq = htonl(ssk->tx_mseq + 1);
	bsdh->mseq_ack = htonl(ssk->rx_mseq);
	if (ext_len)
		memcpy(&hdr->srcah, ext, ext_len);
	ib_dma_sync_single_for_device(dev->ibdev, hdr_dma, hlen, DMA_TO_DEVICE);
	sge[0].addr = hdr_dma;
	sge[0].length = hlen;
	sge[0].lkey = dev->pd->local_dma_lkey;
	if (payload && zc && zc->n) {
		/* The payload goes from the caller's pages (sdp_zcopy.c). */
		wr.num_sge += sdp_zcopy_sge(conn, zc, sge + 1);
	} else if (payload) {
		sdp_buf_sync_for_device(dev, tx->buf, payload);
		wr.num_sge += sdp_buf_sge(dev, tx->buf, payload, sge + 1);
	}
	/*
	 * A device may send from a tasklet (Soft-RoCE does for kernel QPs).
	 * Raised in process context, it waits for ksoftirqd; with BHs off
	 * it runs at local_bh_enable(), in this context, as a send from
	 * TCP's xmit path would.
	 */
	local_bh_disable();
	ret = ib_post_send(conn->id->qp, &wr, NULL);
	local_bh_enable();
	if (ret)
		return ret;
	if (ssk->tx_head == ssk->tx_tail)
		ssk->tx_stamp = jiffies;	/* the clock starts now */

	ssk->tx_mseq++;
	ssk->tx_head++;
	ssk->tx_unsignaled = !(wr.send_flags & IB_SEND_SIGNALED);
	if (ssk->tx_head - ssk->tx_tail == 1)
		sdp_watchdog_arm(sk);
	ssk->tx_credits--;
	ssk->rx_adv = ssk->rx_posted;
	ssk->rx_since_adv = 0;
	if (payload)
		ssk->tx_held = 0;
	sk_wmem_queued_add(sk, hlen);	/* the payload is counted */
	sdp_stat_msg(sock_net(sk), SDP_MIB_TX_MSG, mid);
	ssk->bytes_sent += payload;
	sdp_stat_add(sock_net(sk), SDP_MIB_TX_BYTES, payload);
	return 0;
}

static int sdp_post(struct sock *sk, struct sdp_conn *conn, u8 mid,
		    u32 payload, bool more)
{
	return sdp_post_msg(sk, conn, mid, NULL, 0, payload, more);
}

/*
 * Posts a SrcAvail for @len bytes at @vaddr, @rkey (sdp_srcavail.c); the
 * sender waits for the answer, so it asks for a completion.  A SrcAvail
 * that cannot be posted aborts the connection.  Socket lock held; the
 * caller checked for room, as for a Data message with payload.
 */
int sdp_tx_post_src_avail(struct sock *sk, struct sdp_conn *conn,
			  u32 len, u32 rkey, u64 vaddr)
{
	struct sdp_srcah srcah = {
		.len	= htonl(len),
		.rkey	= htonl(rkey),
		.vaddr	= cpu_to_be64(vaddr),
	};
	int err;

	err = sdp_post_msg(sk, conn, SDP_MID_SRC_AVAIL, &srcah, sizeof(srcah),
			   0, false);
	if (err)
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_ERROR,
			  "cannot post a send");
	return err;
}

/*
 * The peer's view of our posted buffers has fallen well behind: it cannot
 * send data (it keeps its last credit), or it sees less than 2/3 of them.
 * A credit update consumes one of the peer's buffers, and the peer's own
 * update one of ours: with fewer than three posted on both sides each
 * update would call for the next one, for as long as nobody reads.  So an
 * update needs three posted.  Fewer are posted only while received data
 * waits for the reader (sdp_rx.c), and the peer gets its credits when the
 * reader makes room, as TCP opens a window only by a useful amount.
 */
static bool sdp_credit_update_due(const struct sdp_sock *ssk)
{
	u32 peer_view = ssk->rx_adv - ssk->rx_since_adv;

	return ssk->rx_posted >= SDP_RX_MIN_POSTED &&
	       ssk->rx_posted > peer_view &&
	       (peer_view < 2 || peer_view * 3 < ssk->rx_posted * 2);
}

/* Whether the held bytes may wait for more.  Socket lock held. */
static bool sdp_tx_hold(const struct sock *sk)
{
	const struct sdp_sock *ssk = sdp_sk(sk);

	if (ssk->cork || ssk->tx_held_more)
		return time_before(jiffies,
				   ssk->tx_held_stamp + SDP_CORK_CEILING);
	/* The completion of the last send pushes them (sdp_tx_process()). */
	return ssk->tx_head != ssk->tx_tail && !ssk->tx_unsignaled;
}

/*
 * Posts the held bytes as a Data message (@more as for sdp_post()); a
 * send that cannot be posted aborts the connection.  Socket lock held;
 * the caller checked for credits; the held bytes are in the slot.
 */
static int sdp_tx_post_held(struct sock *sk, struct sdp_conn *conn, bool more)
{
	int err = sdp_post(sk, conn, SDP_MID_DATA, sdp_sk(sk)->tx_held, more);

	if (err)
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_ERROR,
			  "cannot post a send");
	return err;
}

/*
 * Posts the held bytes, unless they may wait and @force is false; the
 * last credit is kept for a credit update.  Socket lock held.
 */
static void sdp_tx_push_held(struct sock *sk, struct sdp_conn *conn,
			     bool force)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	if (!ssk->tx_held || ssk->tx_credits < 2 || (!force && sdp_tx_hold(sk)))
		return;
	sdp_tx_post_held(sk, conn, false);
}

/*
 * Whatever holds the held bytes back, they go now (TCP_CORK cleared,
 * TCP_NODELAY set: TCP pushes its pending frames).  Socket lock held.
 */
void sdp_tx_push(struct sock *sk)
{
	struct sdp_conn *conn = sdp_sk(sk)->conn;

	if (conn && !conn->dying && conn->tx_ring)
		sdp_tx_push_held(sk, conn, true);
}

/*
 * The connection is gone: the bytes it held will never be sent, as TCP
 * purges its write queue.  Socket lock held.
 */
void sdp_tx_drop_held(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	sk_wmem_queued_add(sk, -(int)ssk->tx_held);
	ssk->tx_held = 0;
}

/*
 * A control message takes the next send slot: the payload buffer with
 * the bytes held in it moves on to the one after, if that one is free.
 * Rare: the held bytes go with the message instead whenever there are
 * credits for them.
 */
static bool sdp_tx_free_slot(struct sdp_sock *ssk, struct sdp_conn *conn)
{
	struct sdp_tx_slot *from, *to;

	if (!ssk->tx_held)
		return true;
	if (ssk->tx_head + 1 - ssk->tx_tail >= sdp_tx_ring_size)
		return false;
	from = &conn->tx_ring[ssk->tx_head % sdp_tx_ring_size];
	to = &conn->tx_ring[(ssk->tx_head + 1) % sdp_tx_ring_size];
	swap(from->buf, to->buf);
	if (conn->tx_zc)	/* (spliced pages: sdp_tx_splice()) */
		swap(conn->tx_zc[ssk->tx_head % sdp_tx_ring_size],
		     conn->tx_zc[(ssk->tx_head + 1) % sdp_tx_ring_size]);
	return true;
}

/*
 * Read zero-copy's control messages, which carry no payload, so that the
 * last credit will do: RdmaRdCompl before SendSM, as the source counts
 * the bytes read before it learns that no more will be; and
 * SrcAvailCancel.  Socket lock held.
 */
static void sdp_tx_read_zcopy_ctl(struct sock *sk, struct sdp_conn *conn)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	while (ssk->tx_credits >= 1 && !conn->dying && sdp_tx_slot_free(ssk)) {
		if (conn->rd_compl_due) {
			struct sdp_rrch rrch = {
				.len = htonl(conn->rd->unacked),
			};

			if (!sdp_tx_free_slot(ssk, conn) ||
			    sdp_post_msg(sk, conn, SDP_MID_RDMA_RD_COMPL, &rrch,
					 sizeof(rrch), 0, false))
				return;
			conn->rd->unacked = 0;
			conn->rd_compl_due = false;
		} else if (conn->send_sm_due) {
			if (!sdp_tx_free_slot(ssk, conn) ||
			    sdp_post(sk, conn, SDP_MID_SEND_SM, 0, false))
				return;
			conn->send_sm_due = false;
		} else if (conn->src && conn->src->cancel_due) {
			if (!sdp_tx_free_slot(ssk, conn) ||
			    sdp_post(sk, conn, SDP_MID_SRC_CANCEL, 0, false))
				return;
			conn->src->cancel_due = false;
		} else {
			return;
		}
	}
}

/*
 * Sends what is due: the held bytes, when they need not wait or must go
 * before a DisConn or with a credit update; a pending DisConn (it takes
 * two credits, so it is never the message that uses the last one), or a
 * credit update, for which the last credit is kept.  A sender that left
 * with its last message unsignaled (a bad address ended its copy) gets a
 * credit update that asks for a completion: without one, its sends would
 * never complete and the stall watchdog would take the peer for dead.
 * Right after an unsignaled send there is a slot and a credit for it
 * (sdp_tx_signal()).  Socket lock held.
 */
void sdp_tx_control(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_conn *conn = ssk->conn;
	bool force;

	if (!conn || conn->dying || !conn->tx_ring || !sdp_tx_slot_free(ssk))
		return;

	force = ssk->disconn_pending || sdp_credit_update_due(ssk);
	sdp_tx_push_held(sk, conn, force);
	sdp_tx_read_zcopy_ctl(sk, conn);
	if (conn->dying || !sdp_tx_slot_free(ssk))
		return;

	/*
	 * Our DisConn follows the bytes of a SrcAvail still out (a
	 * shutdown() beside a send), and whatever its sender sends about it
	 * (SrcAvailCancel, which the peer takes for a protocol error after
	 * DisConn): it goes once the SrcAvail is done (sdp_src_inv_process()).
	 */
	if (ssk->disconn_pending && !ssk->tx_held && ssk->tx_credits >= 2 &&
	    !ssk->tx_src_active) {
		if (!sdp_post(sk, conn, SDP_MID_DISCONN, 0, false)) {
			ssk->disconn_pending = false;
			ssk->disconn_sent = true;
		}
		return;
	}
	if (ssk->tx_credits >= 1 &&
	    (ssk->tx_unsignaled || sdp_credit_update_due(ssk)) &&
	    sdp_tx_free_slot(ssk, conn) &&
	    !sdp_post(sk, conn, SDP_MID_DATA, 0, false))
		sdp_stat_inc(sock_net(sk), SDP_MIB_CREDIT_UPDATES);
}

/* A send completed.  Socket locked (sdp_cq.c). */
int sdp_tx_process(struct sock *sk, struct sdp_conn *conn, struct sdp_wc *wc,
		   gfp_t gfp)
{
	struct sdp_tx_slot *tx = container_of(wc, struct sdp_tx_slot, wc);
	struct sdp_sock *ssk = sdp_sk(sk);

	if (ssk->conn != conn)
		return 0;
	/*
	 * An RC QP completes its sends in the order they were posted: this
	 * one, and those before it that asked for no completion, are done.
	 */
	while ((s32)(tx->seq - ssk->tx_tail) >= 0) {
		unsigned int slot = ssk->tx_tail % sdp_tx_ring_size;

		sk_wmem_queued_add(sk, -(int)conn->tx_ring[slot].len);
		if (conn->tx_zc)
			sdp_zcopy_release(conn, &conn->tx_zc[slot]);
		ssk->tx_tail++;
	}
	ssk->tx_stamp = jiffies;
	if (ssk->tx_tail == ssk->tx_head)
		conn->tx_idle = jiffies;
	sdp_zcopy_wakeup(sk);
	if (sdp_wc_failed(sk, wc->status, "a send"))
		return 0;
	/* Our DisConn has reached the peer: TCP's FIN acknowledged. */
	if (ssk->disconn_sent && ssk->tx_head == ssk->tx_tail &&
	    sk->sk_state == TCP_FIN_WAIT1)
		sk->sk_state = TCP_FIN_WAIT2;
	sdp_tx_control(sk);
	sdp_check_closed(sk);
	sdp_tx_wakeup(sk);
	return 0;
}

/* sk_write_space of SDP sockets: as sk_stream_write_space(), for SDP. */
void sdp_write_space(struct sock *sk)
{
	struct socket_wq *wq;

	if (!sdp_writable(sk))
		return;
	if (sk->sk_socket)
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);

	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_poll(&wq->wait, EPOLLOUT | EPOLLWRNORM |
						      EPOLLWRBAND);
	if (wq && wq->fasync_list && !(sk->sk_shutdown & SEND_SHUTDOWN))
		sock_wake_async(wq, SOCK_WAKE_SPACE, POLL_OUT);
	rcu_read_unlock();
}

/* Wakes writers that found no room, once there is some (tcp_check_space). */
void sdp_tx_wakeup(struct sock *sk)
{
	if (sk->sk_socket && test_bit(SOCK_NOSPACE, &sk->sk_socket->flags) &&
	    sdp_writable(sk))
		sk->sk_write_space(sk);
}

static void sdp_set_nospace(struct sock *sk)
{
	sk_set_bit(SOCKWQ_ASYNC_NOSPACE, sk);
	set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
}

/*
 * Gives send slot @tx the pages for its first @len bytes of payload: a
 * slot gets them with the first payload it carries, and keeps them while
 * the connection sends (sdp_tx_trim()).  Socket lock held, process
 * context.
 */
static int sdp_tx_buf_room(struct sock *sk, struct sdp_conn *conn,
			   struct sdp_tx_slot *tx, u32 len)
{
	long bytes;

	if (!tx->buf) {
		tx->buf = kzalloc_obj(*tx->buf, sk->sk_allocation);
		if (!tx->buf)
			return -ENOMEM;
		conn->tx_nbufs++;
		sdp_conn_mem_add(conn, sizeof(*tx->buf));
	}
	bytes = sdp_buf_alloc(conn->dev, tx->buf, len, DMA_TO_DEVICE,
			      sk->sk_allocation);
	if (bytes < 0)
		return bytes;
	sdp_conn_mem_add(conn, bytes);
	return 0;
}

/* Frees the payload pages of every send slot: none is in flight. */
void sdp_tx_free_bufs(struct sdp_conn *conn)
{
	unsigned int i;

	for (i = 0; i < sdp_tx_ring_size; i++) {
		struct sdp_tx_slot *tx = &conn->tx_ring[i];

		if (!tx->buf)
			continue;
		sdp_conn_mem_add(conn, -sdp_buf_free(conn->dev, tx->buf,
						     DMA_TO_DEVICE) -
				       (long)sizeof(*tx->buf));
		kfree(tx->buf);
		tx->buf = NULL;
	}
	conn->tx_nbufs = 0;
}

/* A send ring idle this long gives its payload pages back. */
#define SDP_TX_TRIM_AFTER	HZ

/* The connection has send memory that sdp_tx_trim() frees when idle. */
bool sdp_tx_trimmable(const struct sdp_conn *conn)
{
	return conn->tx_nbufs || conn->tx_zc || conn->src || conn->rd;
}

/*
 * Memory follows traffic: a connection whose send ring has been idle for
 * SDP_TX_TRIM_AFTER, with nothing held or in flight, frees the payload
 * pages of its slots, the page lists of zero-copy sends, and read
 * zero-copy's state when no SrcAvail is under way; the next send (or
 * SrcAvail) allocates them again.  Called by the watchdog, which runs while
 * there are pages to free.  Socket lock held.
 */
void sdp_tx_trim(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_conn *conn = ssk->conn;

	if (!conn || !sdp_tx_trimmable(conn) || ssk->tx_head != ssk->tx_tail ||
	    ssk->tx_held || time_before(jiffies, conn->tx_idle +
					SDP_TX_TRIM_AFTER))
		return;
	sdp_stat_inc(sock_net(sk), SDP_MIB_TX_TRIMS);
	sdp_tx_free_bufs(conn);
	sdp_zcopy_free(conn);
	if (conn->src && !conn->src->active && !ssk->tx_src_senders)
		sdp_src_free(conn);
	if (conn->rd && !conn->rd_active && !ssk->rx_rd_busy &&
	    !conn->rd->npages && !conn->rd_compl_due)
		sdp_rd_free(conn);
}

/* The page list of the next send slot, allocated on first use. */
static struct sdp_zc *sdp_tx_zc(struct sock *sk, struct sdp_conn *conn)
{
	if (!conn->tx_zc) {
		conn->tx_zc = kvcalloc(sdp_tx_ring_size, sizeof(*conn->tx_zc),
				       sk->sk_allocation);
		if (!conn->tx_zc)
			return NULL;
	}
	return &conn->tx_zc[sdp_sk(sk)->tx_head % sdp_tx_ring_size];
}

/* Whether the held bytes are spliced pages, not copies in the slot. */
static bool sdp_tx_held_spliced(const struct sdp_sock *ssk,
				const struct sdp_conn *conn)
{
	return ssk->tx_held && conn->tx_zc &&
	       conn->tx_zc[ssk->tx_head % sdp_tx_ring_size].n;
}

/*
 * Posts the held message, whose payload is @zc's pages; one that cannot be
 * posted lets go of them (the connection is aborted).  Socket lock held.
 */
static int sdp_tx_post_pages(struct sock *sk, struct sdp_conn *conn,
			     struct sdp_zc *zc, bool more)
{
	if (!sdp_tx_post_held(sk, conn, more))
		return 0;
	sdp_tx_drop_held(sk);
	sdp_zcopy_release(conn, zc);
	return -ECONNRESET;
}

/*
 * Adds pages of @msg that its sender hands over (sdp_msg_splice(), or
 * sendpage()) to the message held in the next send slot, referenced
 * instead of copied (sdp_splice_fill()); the message goes once it holds
 * @max bytes or all the pages it may, and until then waits as held bytes
 * do.  Returns the bytes taken; 0 when the next ones must be copied; an
 * error when the message could not be posted (-ECONNRESET: the
 * connection is aborted).  Socket lock held; the caller checked for room
 * and that what is held, if anything, is spliced too.
 */
static ssize_t sdp_tx_splice(struct sock *sk, struct sdp_conn *conn,
			     struct msghdr *msg, u32 max)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_zc *zc = sdp_tx_zc(sk, conn);
	size_t got;

	if (!zc)
		return 0;
	got = sdp_splice_fill(conn, zc, &msg->msg_iter, max - ssk->tx_held);
	if (!got)
		return 0;
	if (!ssk->tx_held)
		ssk->tx_held_stamp = jiffies;
	ssk->tx_held += got;
	sk_wmem_queued_add(sk, got);
	sdp_stat_add(sock_net(sk), SDP_MIB_TX_ZCOPY_BYTES, got);
	if ((ssk->tx_held >= max || zc->n >= conn->zc_frags) &&
	    sdp_tx_post_pages(sk, conn, zc, msg_data_left(msg) >= max))
		return -ECONNRESET;
	return got;
}

/*
 * Posts a Data message of up to @max bytes of @msg from the caller's
 * pages (sdp_zcopy.c), and moves sdp_sock.tx_zc_end past it.  Returns
 * the bytes sent; an error when it could take none (-EFAULT: a bad
 * address first), or when the message could not be posted (-ECONNRESET:
 * the connection is aborted).  Socket lock held; the caller checked for
 * room.
 */
static ssize_t sdp_tx_zcopy(struct sock *sk, struct sdp_conn *conn,
			    struct msghdr *msg, u32 max)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_zc *zc = sdp_tx_zc(sk, conn);
	ssize_t got;

	if (!zc)
		return -ENOMEM;
	got = sdp_zcopy_fill(conn, zc, &msg->msg_iter, max);
	if (got <= 0)
		return got;
	ssk->tx_held = got;
	sk_wmem_queued_add(sk, got);
	if (sdp_tx_post_pages(sk, conn, zc, msg_data_left(msg) >= max))
		return -ECONNRESET;
	sdp_stat_add(sock_net(sk), SDP_MIB_TX_ZCOPY_BYTES, got);
	ssk->tx_zc_end = ssk->tx_head;
	return got;
}

/* What a sender waits for, once its connection is going. */
static bool sdp_tx_conn_gone(const struct sock *sk, const void *unused)
{
	return READ_ONCE(sk->sk_err) || !READ_ONCE(sdp_sk(sk)->conn);
}

/* What a sender waits for, for send space or a credit. */
static bool sdp_tx_may_go(const struct sock *sk, const void *unused)
{
	return sdp_writable(sk) || sdp_tx_conn_gone(sk, NULL) ||
	       (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN);
}

/*
 * Follows tcp_sendmsg_locked(): copies into the send slot, posts each
 * buffer that fills, and leaves the last one to sdp_tx_control(), which
 * holds it back or posts it.  A large blocking send posts its whole
 * messages from the caller's pages instead, and waits for them; pages an
 * in-kernel sender hands over (@splice) go the same way, without a wait.
 */
static int sdp_do_sendmsg(struct socket *sock, struct msghdr *msg,
			  bool splice)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int flags = msg->msg_flags;
	size_t copied = 0, got;
	bool zc, zc_posted = false, src_ok = true;
	int zc_way = -1;	/* sdp_zcopy_pick()'s; -2: the send went both ways */
	size_t zc_copied0 = 0;
	u64 zc_start = 0;
	long timeo;
	int err;

	if (flags & MSG_OOB)
		return -EOPNOTSUPP;

	lock_sock(sk);
	timeo = sock_sndtimeo(sk, flags & MSG_DONTWAIT);
	if ((1 << sk->sk_state) & ~(TCPF_ESTABLISHED | TCPF_CLOSE_WAIT)) {
		err = sk_stream_wait_connect(sk, &timeo);
		if (err)
			goto error;
	}

	err = 0;
	zc = sdp_zcopy_wanted(msg, timeo);
	add_wait_queue(sk_sleep(sk), &wait);
	while (msg_data_left(msg)) {
		struct sdp_conn *conn = ssk->conn;
		struct sdp_tx_slot *tx;
		size_t chunk;
		u32 max;

		err = -EPIPE;
		if (sk->sk_err || (sk->sk_shutdown & SEND_SHUTDOWN) || !conn)
			break;
		if (conn->dying) {
			/* Reset or orderly end: the teardown tells which soon. */
			err = -EAGAIN;
			if (!timeo)
				break;
			err = sock_intr_errno(timeo);
			if (signal_pending(current))
				break;
			sdp_sk_wait(sk, &timeo, &wait, sdp_tx_conn_gone, NULL);
			continue;
		}

		if (!sdp_writable(sk)) {
			/* As TCP pushes before it waits for memory. */
			sdp_tx_push_held(sk, conn, true);
			if (ssk->tx_credits <= 1) {
				sdp_stat_inc(sock_net(sk), SDP_MIB_CREDIT_STALLS);
				trace_sdp_credit_stall(sk, ssk->tx_credits,
						       ssk->tx_head - ssk->tx_tail);
			}
			sdp_set_nospace(sk);
			sdp_watchdog_arm(sk);
			err = -EAGAIN;
			if (!timeo)
				break;
			err = sock_intr_errno(timeo);
			if (signal_pending(current))
				break;
			sdp_sk_wait(sk, &timeo, &wait, sdp_tx_may_go, NULL);
			continue;
		}

		if (zc && src_ok && sdp_src_wanted(sk, msg)) {
			bool stop = false;
			ssize_t sent = sdp_src_send(sk, conn, msg, &timeo,
						    &stop);

			if (sent > 0)
				copied += sent;
			if (stop || sent == -ECANCELED) {
				/* A failed connection: the loop's top tells how. */
				if (sk->sk_err || ssk->conn != conn || conn->dying)
					continue;
				err = timeo ? sock_intr_errno(timeo) : -EAGAIN;
				break;
			}
			/* Refused, or no registration: copy instead. */
			if (sent <= 0)
				src_ok = false;
			continue;
		}
		max = sdp_tx_payload_max(ssk);
		if (splice && conn->zc_frags >= 2 &&
		    (!ssk->tx_held || sdp_tx_held_spliced(ssk, conn))) {
			ssize_t sent = sdp_tx_splice(sk, conn, msg, max);

			if (sent < 0) {
				err = sent;
				break;
			}
			copied += sent;
			if (!sent)
				splice = false;	/* the rest is copied */
			continue;
		}
		/* Spliced pages and copied bytes do not share a message. */
		if (sdp_tx_held_spliced(ssk, conn)) {
			err = sdp_tx_post_pages(sk, conn, sdp_tx_zc(sk, conn),
						true);
			if (err)
				break;
			continue;
		}
		if (zc && conn->zc_frags >= 2 && !ssk->tx_held &&
		    msg_data_left(msg) >= max) {
			ssize_t sent;

			if (zc_way < 0 && sdp_zcopy_pays(conn)) {
				zc_way = sdp_zcopy_pick(ssk);
				zc_start = ktime_get_ns();
				zc_copied0 = copied;
			}
			if (zc_way <= 0) {
				sdp_stat_inc(sock_net(sk),
					     SDP_MIB_TX_ZCOPY_DECLINED);
				zc = false;
				continue;
			}
			sent = sdp_tx_zcopy(sk, conn, msg, max);
			if (sent == -ECONNRESET) {
				err = sent;
				break;
			}
			if (sent < 0) {
				/* The copy tells a bad address; or copy instead. */
				zc = false;
				zc_way = -2;
				continue;
			}
			copied += sent;
			zc_posted = true;
			continue;
		}
		if (ssk->tx_held < max) {
			tx = &conn->tx_ring[ssk->tx_head % sdp_tx_ring_size];
			chunk = min_t(size_t, msg_data_left(msg),
				      max - ssk->tx_held);
			err = sdp_tx_buf_room(sk, conn, tx,
					      ssk->tx_held + chunk);
			if (err)
				break;
			/* A bad address ends the copy: the bytes before it are sent. */
			got = sdp_buf_copy_from_iter(conn->dev, tx->buf,
						     ssk->tx_held, chunk,
						     &msg->msg_iter);
			err = -EFAULT;
			if (!got)
				break;
			if (!ssk->tx_held)
				ssk->tx_held_stamp = jiffies;
			ssk->tx_held += got;
			sk_wmem_queued_add(sk, got);
			copied += got;
			if (got < chunk)
				break;
		}
		/*
		 * A full buffer goes now; the one before a last partial buffer,
		 * which may be held, asks for the completion that pushes it.
		 */
		if (ssk->tx_held >= max &&
		    sdp_tx_post_held(sk, conn, msg_data_left(msg) >= max)) {
			err = -ECONNRESET;
			break;
		}
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	if (copied)
		ssk->tx_held_more = flags & MSG_MORE;
	/*
	 * Whatever ended the loop, what was posted asks for a completion, and
	 * the held bytes go unless they may wait; the watchdog ends a cork.
	 */
	sdp_tx_control(sk);
	if (ssk->tx_held)
		sdp_watchdog_arm(sk);
	if (zc_posted)
		sdp_zcopy_wait(sk);
	if (zc_way >= 0 && !msg_data_left(msg))
		sdp_zcopy_account(ssk, zc_way, ktime_get_ns() - zc_start,
				  copied - zc_copied0);
	if (copied) {
		release_sock(sk);
		return copied;
	}
error:
	err = sk_stream_error(sk, flags, err);
	release_sock(sk);
	return err;
}

int sdp_sendmsg(struct socket *sock, struct msghdr *msg, size_t size)
{
	return sdp_do_sendmsg(sock, msg,
			      sdp_msg_splice(msg) &&
			      iov_iter_is_bvec(&msg->msg_iter));
}

#ifdef SDP_HAVE_SENDPAGE
/*
 * The kernels before MSG_SPLICE_PAGES hand pages over a page at a time,
 * with MSG_SENDPAGE_NOTLAST between the pages of one send, which TCP
 * takes as MSG_MORE.
 */
ssize_t sdp_sendpage(struct socket *sock, struct page *page, int offset,
		     size_t size, int flags)
{
	struct bio_vec bvec;
	struct msghdr msg = {
		.msg_flags = flags & MSG_SENDPAGE_NOTLAST ?
			     (flags & ~MSG_SENDPAGE_NOTLAST) | MSG_MORE : flags,
	};

	if (!sendpage_ok(page))
		return sock_no_sendpage(sock, page, offset, size, flags);
	bvec_set_page(&bvec, page, size, offset);
	iov_iter_bvec(&msg.msg_iter, WRITE, &bvec, 1, size);
	return sdp_do_sendmsg(sock, &msg, true);
}
#endif
