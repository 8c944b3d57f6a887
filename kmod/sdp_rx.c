// SPDX-License-Identifier: GPL-2.0
/*
 * SDP receive path: messages arriving in the posted receive buffers, the
 * checks a peer's message must pass, the receive queue that recvmsg() and
 * read_sock() consume, and the credits returned to the peer as buffers
 * are reposted.
 *
 * The receive buffers are the device's, shared by its connections
 * (sdp_dev.c); a connection's credits are what it lets its peer send.
 * Small payload is copied out of the buffer into an skb on
 * sk_receive_queue, and the buffer goes back to the device's pool at
 * once.  The credit the message used comes back to the peer at once while
 * there is receive space; when there is none, it is withheld until the
 * reader makes room, and the peer runs out of credits: that is the flow
 * control.  A large payload moves in the chunks it arrived in, and the
 * buffer gets others: chunks a reader is done with, kept as spares, or
 * new ones.
 */
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/skbuff.h>
#include <net/sock.h>

#include "sdp.h"
#include "sdp_wire.h"

/* Room for one more credit's buffer, counting what waits to be read. */
static bool sdp_rx_has_room(struct sock *sk, const struct sdp_conn *conn)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	if (ssk->rx_posted < SDP_RX_MIN_POSTED && !ssk->rx_queued)
		return true;
	return atomic_read(&sk->sk_rmem_alloc) +
	       (ssk->rx_posted + 1) * sdp_buf_truesize(conn->dev) <=
	       READ_ONCE(sk->sk_rcvbuf);
}

/* Gives the credits withheld for want of receive space, as far as it allows. */
static void sdp_rx_refill(struct sock *sk, struct sdp_conn *conn)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	while (conn->rx_withheld && !conn->dying && sdp_rx_has_room(sk, conn)) {
		ssk->rx_posted++;
		conn->rx_withheld--;
	}
	sdp_rx_update_full(sk, conn);
}

/*
 * Whether the peer can send nothing more until the reader reads: credits
 * withheld for want of receive space, or a SrcAvail being read, whose
 * bytes come as the reader makes room.  Socket lock held.
 */
void sdp_rx_update_full(struct sock *sk, const struct sdp_conn *conn)
{
	WRITE_ONCE(sdp_sk(sk)->rx_full, conn->rx_withheld || conn->rd_active);
}

/**
 * sdp_rx_readable - whether the received data is for the reader to take
 * @sk: the socket; locked, or read locklessly by poll()
 *
 * As tcp_epollin_ready(): once sk_rcvlowat bytes are queued, or when the
 * peer can send nothing more until a read (sdp_rx_update_full()).
 * An in-kernel reader that knows how much it waits for (an RPC record)
 * sets SO_RCVLOWAT, and is woken once rather than for every message.
 */
bool sdp_rx_readable(const struct sock *sk)
{
	const struct sdp_sock *ssk = sdp_sk(sk);
	u32 queued = READ_ONCE(ssk->rx_queued);

	return queued && (queued >= READ_ONCE(sk->sk_rcvlowat) ||
			  READ_ONCE(ssk->rx_full));
}

/*
 * Gives the peer @n more credits: at once (@now), before the Hello or
 * HelloAck that announces them; or as receive space allows, and a credit
 * update tells the peer (sdp_rx_consumed()).  Socket lock held.
 */
void sdp_rx_give_credits(struct sdp_conn *conn, u32 n, bool now)
{
	if (now)
		sdp_sk(conn->sk)->rx_posted += n;
	else
		conn->rx_withheld += n;
}

/* Returns why the message in @rx is a protocol error, or NULL. */
static const char *sdp_rx_check(struct sock *sk, const struct sdp_bsdh *bsdh,
				u32 byte_len)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	if (byte_len < sizeof(*bsdh) || ntohl(bsdh->len) < sizeof(*bsdh))
		return "message shorter than its header";
	if (ntohl(bsdh->len) != byte_len)
		return "length field does not match the message";
	if (ntohl(bsdh->mseq) != ssk->rx_mseq + 1)
		return "sequence number out of order";
	if ((s32)(ssk->tx_mseq - ntohl(bsdh->mseq_ack)) < 0)
		return "acknowledges a message never sent";
	if (ssk->rx_since_adv >= ssk->rx_adv)
		return "sent without credit";
	if (ssk->rx_since_adv + 1 == ssk->rx_adv &&
	    ((bsdh->mid == SDP_MID_DATA && byte_len > sizeof(*bsdh)) ||
	     bsdh->mid == SDP_MID_SRC_AVAIL))
		return "payload on the last credit";
	/*
	 * After DisConn, credit updates only, and the sink's answers to our
	 * SrcAvail: they concern the other direction.
	 */
	if ((ssk->disconn_rcvd || ssk->conn->disconn_held) &&
	    (bsdh->mid != SDP_MID_DATA || byte_len > sizeof(*bsdh)) &&
	    bsdh->mid != SDP_MID_RDMA_RD_COMPL && bsdh->mid != SDP_MID_SEND_SM)
		return "message after DisConn";
	return NULL;
}

/* The length a control message must have; 0 for Data, of any length. */
static u32 sdp_rx_msg_len(u8 mid)
{
	switch (mid) {
	case SDP_MID_SRC_AVAIL:
		return sizeof(struct sdp_bsdh) + sizeof(struct sdp_srcah);
	case SDP_MID_RDMA_RD_COMPL:
		return sizeof(struct sdp_bsdh) + sizeof(struct sdp_rrch);
	case SDP_MID_DISCONN:
	case SDP_MID_ABORT_CONN:
	case SDP_MID_SRC_CANCEL:
	case SDP_MID_SEND_SM:
		return sizeof(struct sdp_bsdh);
	default:
		return 0;
	}
}

/*
 * Read zero-copy's messages (sdp_srcavail.c, sdp_rdma_read.c); only a
 * peer that offered it in its Hello or HelloAck may send them.  Socket
 * locked.
 */
static void sdp_rx_read_zcopy(struct sock *sk, struct sdp_conn *conn,
			      const struct sdp_msg_hdr *hdr)
{
	if (!conn->read_zcopy) {
		/* SendSM stops what we never started: nothing to do. */
		if (hdr->bsdh.mid != SDP_MID_SEND_SM)
			sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_PROTOCOL,
				  "read zero-copy message, not offered");
		return;
	}
	switch (hdr->bsdh.mid) {
	case SDP_MID_SRC_AVAIL:
		sdp_rd_src_avail(sk, conn, ntohl(hdr->srcah.len),
				 ntohl(hdr->srcah.rkey),
				 be64_to_cpu(hdr->srcah.vaddr));
		break;
	case SDP_MID_SRC_CANCEL:
		sdp_rd_src_cancel(sk, conn);
		break;
	case SDP_MID_RDMA_RD_COMPL:
		sdp_src_rd_compl(sk, conn, ntohl(hdr->rrch.len));
		break;
	case SDP_MID_SEND_SM:
		sdp_src_send_sm(sk, conn);
		break;
	}
}

/*
 * Payload of at least two chunks moves to the receive queue in the chunks
 * it arrived in, which then hold at most a third more than it: a copy
 * saved.  Less is copied, so a short message does not hold a chunk, and
 * small ones share pages.
 */
static u32 sdp_rx_copybreak(const struct sdp_conn *conn)
{
	return 2U << conn->dev->chunk_shift;
}

/*
 * The reader is done with @skb, about to be freed: the pages of its
 * chunks become spares if nothing else holds them.  An in-kernel reader's
 * actor may have taken a reference on them (as skb_splice_bits() does),
 * or a clone of the skb, which shares them without one.
 */
static void sdp_rx_recycle(struct sock *sk, struct sk_buff *skb)
{
	struct sdp_conn *conn = sdp_sk(sk)->conn;
	unsigned int i;

	if (!conn || SDP_SKB_CB(skb)->copied || skb_cloned(skb) ||
	    skb_shared(skb))
		return;
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		struct page *page = skb_frag_page(&skb_shinfo(skb)->frags[i]);

		if (page_ref_count(page) != 1)
			continue;
		if (!sdp_dev_keep_spare(conn->dev, page))
			return;
		get_page(page);
	}
}

/*
 * New chunks for the first @n of a receive buffer, into @fresh: spare
 * ones while the device has some, which saves the allocation and the
 * zeroing of fresh pages.  All of them or, on failure, none.
 */
static int sdp_rx_fresh_chunks(struct sdp_conn *conn, struct sdp_chunk *fresh,
			       unsigned int n, gfp_t gfp)
{
	struct sdp_dev *dev = conn->dev;
	unsigned int i, reused = 0;

	for (i = 0; i < n; i++) {
		struct page *page = sdp_dev_take_spare(dev);

		if (page)
			reused++;
		else
			page = sdp_chunk_alloc(dev, gfp);
		if (!page)
			goto fail;
		if (sdp_chunk_map(dev, &fresh[i], page, DMA_FROM_DEVICE)) {
			if (!sdp_dev_keep_spare(dev, page))
				put_page(page);
			goto fail;
		}
	}
	sdp_stat_add(sock_net(conn->sk), SDP_MIB_RX_PAGE_REUSES, reused);
	return 0;
fail:
	while (i--) {
		struct page *page = sdp_chunk_unmap(dev, &fresh[i],
						    DMA_FROM_DEVICE);

		if (!sdp_dev_keep_spare(dev, page))
			put_page(page);
	}
	return -ENOMEM;
}

/*
 * An skb whose fragments are the chunks of @rx that hold its @len bytes
 * of payload; @rx gets other chunks in their place.
 */
static struct sk_buff *sdp_rx_take_pages(struct sdp_conn *conn,
					 struct sdp_buf *rx, u32 len,
					 gfp_t gfp)
{
	const struct sdp_dev *dev = conn->dev;
	u32 n = ((len - 1) >> dev->chunk_shift) + 1;
	struct sdp_chunk fresh[SDP_BUF_CHUNKS];
	struct sk_buff *skb;
	u32 i, off = 0;

	skb = alloc_skb(0, gfp);
	if (!skb)
		return NULL;
	if (sdp_rx_fresh_chunks(conn, fresh, n, gfp)) {
		kfree_skb(skb);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct page *page = sdp_chunk_unmap(dev, &rx->chunk[i],
						    DMA_FROM_DEVICE);
		u32 size = min(len - off, sdp_chunk_size(dev));

		skb_add_rx_frag(skb, i, page, 0, size, sdp_chunk_size(dev));
		rx->chunk[i] = fresh[i];
		off += size;
	}
	return skb;
}

/*
 * The most one copied skb holds: as many pages as it has fragments, which
 * alloc_skb_with_frags() may have to fall back to when memory is
 * fragmented.
 */
#define SDP_RX_COPY_MAX	(MAX_SKB_FRAGS << PAGE_SHIFT)

/*
 * Payload up to this size is copied into the head of an skb, which the
 * slab gives, as TCP receives a short segment: a page of its own would
 * be zeroed (init_on_alloc, on in Debian's kernels) and freed again for
 * every message, the most of what a short message costs to receive.
 */
#define SDP_RX_HEAD_MAX	SKB_WITH_OVERHEAD(1024)

/*
 * A copy of the @len bytes of payload in @rx, appended to @queue in skbs
 * of at most SDP_RX_COPY_MAX bytes: all of them, or, on failure, none.
 * Large payloads land here only when no chunks were left to take their
 * pages' place (sdp_rx_take_pages()), so this must not need high orders.
 */
static int sdp_rx_copy(const struct sdp_conn *conn, const struct sdp_buf *rx,
		       u32 len, gfp_t gfp, struct sk_buff_head *queue)
{
	u32 off = 0;
	struct sk_buff *skb;
	unsigned int i;
	int err;

	if (len <= SDP_RX_HEAD_MAX) {
		skb = alloc_skb(len, gfp);
		if (!skb)
			return -ENOMEM;
		sdp_buf_read(conn->dev, rx, off, skb_put(skb, len), len);
		SDP_SKB_CB(skb)->copied = true;
		__skb_queue_tail(queue, skb);
		return 0;
	}
	while (off < len) {
		u32 size = min_t(u32, len - off, SDP_RX_COPY_MAX);

		skb = alloc_skb_with_frags(0, size,
					   conn->dev->chunk_shift - PAGE_SHIFT,
					   &err, gfp);
		if (!skb) {
			__skb_queue_purge(queue);
			return -ENOMEM;
		}
		skb->data_len = size;
		skb->len = size;
		SDP_SKB_CB(skb)->copied = true;
		for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
			skb_frag_t *frag = &skb_shinfo(skb)->frags[i];

			sdp_buf_read(conn->dev, rx, off, skb_frag_address(frag),
				     skb_frag_size(frag));
			off += skb_frag_size(frag);
		}
		__skb_queue_tail(queue, skb);
	}
	return 0;
}

/*
 * Adds @len bytes of payload to the copied skb at the tail of the receive
 * queue if its head or last page has room, as TCP coalesces its receive
 * queue: a stream of small messages then holds little more receive space
 * than its bytes, not an skb each (its truesize counts the room already).
 */
static bool sdp_rx_append(struct sock *sk, const struct sdp_conn *conn,
			  const struct sdp_buf *rx, u32 len)
{
	struct sk_buff *skb = skb_peek_tail(&sk->sk_receive_queue);
	skb_frag_t *frag;
	u32 end;

	if (!skb || !SDP_SKB_CB(skb)->copied || skb_cloned(skb))
		return false;
	if (!skb_shinfo(skb)->nr_frags) {
		if (skb_tailroom(skb) < len)
			return false;
		sdp_buf_read(conn->dev, rx, 0, skb_put(skb, len), len);
		return true;
	}
	frag = &skb_shinfo(skb)->frags[skb_shinfo(skb)->nr_frags - 1];
	end = skb_frag_off(frag) + skb_frag_size(frag);
	if (end + len > page_size(skb_frag_page(frag)))
		return false;
	sdp_buf_read(conn->dev, rx, 0,
		     skb_frag_address(frag) + skb_frag_size(frag), len);
	skb_frag_size_add(frag, len);
	skb->len += len;
	skb->data_len += len;
	return true;
}

/*
 * Queues the @len bytes of payload that arrived in @rx for the reader;
 * -ENOMEM, with nothing done, when there is no memory of the kind @gfp
 * allows for them.
 */
static int sdp_rx_data(struct sock *sk, struct sdp_conn *conn,
		       struct sdp_buf *rx, u32 len, gfp_t gfp)
{
	struct sk_buff_head queue;
	struct sk_buff *skb = NULL;

	__skb_queue_head_init(&queue);
	if (len >= sdp_rx_copybreak(conn))
		skb = sdp_rx_take_pages(conn, rx, len, gfp);
	if (skb)
		__skb_queue_tail(&queue, skb);
	else if (!sdp_rx_append(sk, conn, rx, len) &&
		 sdp_rx_copy(conn, rx, len, gfp, &queue))
		return -ENOMEM;
	while ((skb = __skb_dequeue(&queue))) {
		SDP_SKB_CB(skb)->offset = 0;
		skb_set_owner_r(skb, sk);
		__skb_queue_tail(&sk->sk_receive_queue, skb);
	}
	WRITE_ONCE(sdp_sk(sk)->rx_queued, sdp_sk(sk)->rx_queued + len);
	return 0;
}

/*
 * One message from the peer.  Returns the payload bytes queued for the
 * reader, or -ENOMEM, with nothing done, when @gfp memory ran out for
 * them.  Socket locked, @conn is the socket's.
 */
static int sdp_rx_msg(struct sock *sk, struct sdp_conn *conn,
		      struct sdp_buf *rx, u32 byte_len, gfp_t gfp)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_msg_hdr hdr;
	struct sdp_bsdh *bsdh = &hdr.bsdh;
	u32 len = byte_len - sizeof(*bsdh);
	const char *bad;
	int ret;

	/* The BSDH landed apart; an extended header begins the payload's. */
	sdp_dev_rx_bsdh(conn->dev, rx, bsdh);
	bad = sdp_rx_check(sk, bsdh, byte_len);
	if (!bad && len)
		sdp_buf_sync_for_cpu(conn->dev, rx, len);
	if (!bad && sdp_rx_msg_len(bsdh->mid) &&
	    byte_len != sdp_rx_msg_len(bsdh->mid))
		bad = "message of the wrong length for its id";
	if (!bad && bsdh->mid == SDP_MID_DATA && len && conn->rd_active)
		bad = "Data while a SrcAvail is pending";
	if (bad) {
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_PROTOCOL, bad);
		return 0;
	}
	if (sdp_rx_msg_len(bsdh->mid) > sizeof(*bsdh))
		sdp_buf_read(conn->dev, rx, 0, &hdr.srcah,
			     sdp_rx_msg_len(bsdh->mid) - sizeof(*bsdh));
	/* Memory for the sink's side first, as it may fail. */
	if (bsdh->mid == SDP_MID_SRC_AVAIL && conn->read_zcopy) {
		ret = sdp_rd_prepare(conn, gfp);
		if (ret)
			return ret;
	}
	if (bsdh->mid != SDP_MID_DATA)
		len = 0;
	if (bsdh->mid == SDP_MID_DATA && len) {
		if (sock_flag(sk, SOCK_DEAD)) {
			/* As TCP resets when data reaches a closed socket. */
			sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_LOCAL,
				  "data after close");
			return 0;
		}
		/* First, as it may fail: then nothing else is done. */
		ret = sdp_rx_data(sk, conn, rx, len, gfp);
		if (ret)
			return ret;
	}

	sdp_stat_msg(sock_net(sk), SDP_MIB_RX_MSG, bsdh->mid);
	sdp_stat_add(sock_net(sk), SDP_MIB_RX_BYTES, len);
	ssk->bytes_received += len;
	ssk->rx_mseq = ntohl(bsdh->mseq);
	ssk->rx_since_adv++;
	ssk->rx_stamp = jiffies;
	ssk->tx_stamp = jiffies;
	ssk->probes = 0;
	ssk->tx_credits = ntohs(bsdh->bufs) -
			  (ssk->tx_mseq - ntohl(bsdh->mseq_ack));

	switch (bsdh->mid) {
	case SDP_MID_DATA:
		return len;
	case SDP_MID_DISCONN:
		/* After a SrcAvail's bytes, as a FIN after the data before it. */
		if (conn->rd_active)
			conn->disconn_held = true;
		else
			sdp_disconn_rcvd(sk);
		return 0;
	case SDP_MID_ABORT_CONN:
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_PEER, "AbortConn");
		return 0;
	case SDP_MID_SRC_AVAIL:
	case SDP_MID_SRC_CANCEL:
	case SDP_MID_RDMA_RD_COMPL:
	case SDP_MID_SEND_SM:
		sdp_rx_read_zcopy(sk, conn, &hdr);
		return 0;
	default:
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_PROTOCOL,
			  "unsupported message id");
		return 0;
	}
}

/*
 * A receive completed.  Socket locked (sdp_cq.c).  Softirq and
 * release_sock() get -ENOMEM back when there was no GFP_ATOMIC memory for
 * the data, and leave the completion, and its buffer, for later; in
 * process context the connection aborts instead.  Otherwise the buffer
 * goes back to the device's pool, whatever became of the connection.
 */
int sdp_rx_process(struct sock *sk, struct sdp_conn *conn, struct sdp_wc *wc,
		   gfp_t gfp)
{
	struct sdp_buf *rx = container_of(wc, struct sdp_buf, wc);
	struct sdp_sock *ssk = sdp_sk(sk);
	int queued;

	if (ssk->conn != conn)
		goto repost;
	if (conn->aborted || sdp_wc_failed(sk, wc->status, "a receive")) {
		ssk->rx_posted--;
		goto repost;
	}
	queued = sdp_rx_msg(sk, conn, rx, wc->byte_len, gfp);
	if (queued == -ENOMEM) {
		if (!gfpflags_allow_blocking(gfp))
			return -ENOMEM;
		sdp_abort(sk, -ENOMEM, SDP_MIB_ABORT_ERROR,
			  "no memory for received data");
		queued = 0;
	}
	sdp_dev_repost(conn->dev, rx);
	ssk->rx_posted--;
	if (conn->aborted)
		return 0;

	/* The credit comes back as receive space allows. */
	conn->rx_withheld++;
	sdp_rx_refill(sk, conn);
	/* The peer may have given credits, or acknowledged our DisConn. */
	sdp_tx_control(sk);
	sdp_tx_wakeup(sk);
	if (queued && (ssk->rx_sleepers || sdp_rx_readable(sk)))
		sk->sk_data_ready(sk);
	return 0;
repost:
	sdp_dev_repost(conn->dev, rx);
	return 0;
}

/*
 * The reader consumed data: give credits back into the room it made, and
 * let the peer know when its view of our buffers has fallen well behind.
 * Socket lock held.
 */
void sdp_rx_consumed(struct sock *sk)
{
	struct sdp_conn *conn = sdp_sk(sk)->conn;

	if (!conn)
		return;
	sdp_rx_refill(sk, conn);
	sdp_tx_control(sk);
	sdp_rd_kick(sk);
}

/* Frees @len bytes at the head of the receive queue, read or peeked past. */
static void sdp_rx_eat(struct sock *sk, struct sk_buff *skb, u32 len)
{
	WRITE_ONCE(sdp_sk(sk)->rx_queued, sdp_sk(sk)->rx_queued - len);
	SDP_SKB_CB(skb)->offset += len;
	if (SDP_SKB_CB(skb)->offset >= skb->len) {
		__skb_unlink(skb, &sk->sk_receive_queue);
		sdp_rx_recycle(sk, skb);
		kfree_skb(skb);
	}
}

/*
 * The skb holding the byte @skip bytes past the head of the receive
 * queue, and that byte's offset in it.
 */
static struct sk_buff *sdp_rx_find(struct sock *sk, u32 skip, u32 *offset)
{
	struct sk_buff *skb;

	skb_queue_walk(&sk->sk_receive_queue, skb) {
		u32 avail = skb->len - SDP_SKB_CB(skb)->offset;

		if (skip < avail) {
			*offset = SDP_SKB_CB(skb)->offset + skip;
			return skb;
		}
		skip -= avail;
	}
	return NULL;
}

/*
 * A blocking reader about to sleep for data spins for it first, with the
 * socket unlocked so that completions are processed as they come, until
 * sdp_recv_poll_us after @since, when its call began to wait, or until
 * anything changes that would end its wait.  Another task that wants the
 * CPU meanwhile gets it first: where the device works in a kworker
 * (Soft-RoCE), that may be the very task that brings the data.  It
 * spins only for the answer to what it sent since its last read, and
 * only if its last call's wait was that short too (a ping-pong, a
 * request and its reply): the reader of a one-way stream, or one of many
 * mostly idle connections, would only take CPU time from the senders.
 * Returns whether data came.  Socket lock held; dropped while spinning.
 */
static bool sdp_rx_busy_poll(struct sock *sk, long timeo, u64 since)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	u32 usecs = READ_ONCE(sdp_recv_poll_us);
	bool got;
	u64 end;

	if (!usecs || !timeo || ssk->rx_wait_us > usecs ||
	    ssk->rx_sent_mark == (u32)ssk->bytes_sent)
		return false;
	end = since + usecs * NSEC_PER_USEC;
	if (local_clock() >= end)
		return false;
	sdp_stat_inc(sock_net(sk), SDP_MIB_RX_BUSY_POLLS);
	release_sock(sk);
	sdp_cq_wait_begin(ssk);
	while (skb_queue_empty_lockless(&sk->sk_receive_queue) &&
	       !READ_ONCE(sk->sk_err) &&
	       !(READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) &&
	       !need_resched() && !signal_pending(current) &&
	       local_clock() < end) {
		sdp_cq_take_event(ssk);
		if (single_task_running())
			cpu_relax();
		else
			schedule();	/* the other goes first */
	}
	sdp_cq_wait_end(ssk);
	lock_sock(sk);
	got = !skb_queue_empty(&sk->sk_receive_queue);
	if (got)
		sdp_stat_inc(sock_net(sk), SDP_MIB_RX_BUSY_POLL_HITS);
	return got;
}

static bool sdp_rx_arrived(const struct sock *sk, const void *last)
{
	return skb_peek_tail(&sk->sk_receive_queue) != last;
}

/*
 * sk_wait_data(), whose sleep may poll the completion queue
 * (sdp_wait_woken()).  Socket lock held; dropped while waiting.
 */
static void sdp_wait_data(struct sock *sk, long *timeo,
			  const struct sk_buff *last)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);

	add_wait_queue(sk_sleep(sk), &wait);
	sk_set_bit(SOCKWQ_ASYNC_WAITDATA, sk);
	sdp_sk_wait(sk, timeo, &wait, sdp_rx_arrived, last);
	sk_clear_bit(SOCKWQ_ASYNC_WAITDATA, sk);
	remove_wait_queue(sk_sleep(sk), &wait);
}

/* Follows tcp_recvmsg_locked(), without urgent data. */
int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len,
		int flags)
{
	struct sock *sk = sock->sk;
	int copied = 0, target, err = 0;
	struct sk_buff *skb, *last;
	u64 wait_start = 0;
	bool direct;
	long timeo;
	u32 offset;

	if (flags & MSG_OOB)
		return -EINVAL;
	if (flags & MSG_ERRQUEUE)
		return -EAGAIN;

	lock_sock(sk);
	if (sk->sk_state == TCP_LISTEN) {
		err = -ENOTCONN;
		goto out;
	}
	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	target = sock_rcvlowat(sk, flags & MSG_WAITALL, len);

	/* Once round even for len 0: TCP reports EAGAIN or EOF for it too. */
	do {
		skb = sdp_rx_find(sk, flags & MSG_PEEK ? copied : 0, &offset);
		if (skb && !len)
			break;		/* data queued, none asked for: 0 */
		if (skb) {
			u32 chunk = min_t(size_t, skb->len - offset, len - copied);

			if (skb_copy_datagram_msg(skb, offset, msg, chunk)) {
				if (!copied)
					copied = -EFAULT;
				break;
			}
			copied += chunk;
			if (!(flags & MSG_PEEK))
				sdp_rx_eat(sk, skb, chunk);
			continue;
		}
		/*
		 * The peer's SrcAvail, straight into the caller's pages, for a
		 * caller that may block: as long as it has room, whatever
		 * the low-water mark, as if the bytes were queued.
		 */
		if (timeo && !signal_pending(current) &&
		    sdp_rd_direct_wanted(sk, msg, flags, true)) {
			int got = sdp_rd_direct(sk, msg, len - copied);

			if (got < 0) {
				if (!copied)
					copied = got;
				break;
			}
			copied += got;
			continue;
		}

		if (copied >= target)
			break;
		if (copied) {
			if (sk->sk_err || sk->sk_state == TCP_CLOSE ||
			    (sk->sk_shutdown & RCV_SHUTDOWN) || !timeo ||
			    signal_pending(current))
				break;
		} else {
			if (sock_flag(sk, SOCK_DONE))
				break;
			if (sk->sk_err) {
				copied = sock_error(sk);
				break;
			}
			if (sk->sk_shutdown & RCV_SHUTDOWN)
				break;
			if (sk->sk_state == TCP_CLOSE) {
				copied = -ENOTCONN;
				break;
			}
			if (!timeo) {
				copied = -EAGAIN;
				break;
			}
			if (signal_pending(current)) {
				copied = sock_intr_errno(timeo);
				break;
			}
		}

		/* Room made so far goes back to the peer before we sleep. */
		sdp_rx_consumed(sk);
		if (!wait_start)
			wait_start = local_clock();
		if (sdp_rx_busy_poll(sk, timeo, wait_start))
			continue;
		last = skb_peek_tail(&sk->sk_receive_queue);
		/* A SrcAvail that comes meanwhile waits for us (sdp_rd_kick()). */
		direct = sdp_rd_direct_wanted(sk, msg, flags, false);
		sdp_sk(sk)->rx_rd_waiters += direct;
		sdp_sk(sk)->rx_sleepers++;
		sdp_wait_data(sk, &timeo, last);
		sdp_sk(sk)->rx_sleepers--;
		sdp_sk(sk)->rx_rd_waiters -= direct;
	} while (copied < len);
	sdp_rx_consumed(sk);
	/* For the next call's spin: how long this one waited, what was sent. */
	if (wait_start)
		sdp_sk(sk)->rx_wait_us = min_t(u64, U32_MAX,
					       div_u64(local_clock() - wait_start,
						       NSEC_PER_USEC));
	sdp_sk(sk)->rx_sent_mark = sdp_sk(sk)->bytes_sent;
	err = copied;
out:
	release_sock(sk);
	return err;
}

/*
 * sdp_read_sock - hands received data to @recv_actor without sleeping
 * @sk: the socket, locked by the caller
 * @desc: the actor's descriptor; reading stops when desc->count is 0
 * @recv_actor: gets an skb, an offset and a length, returns what it used
 *
 * The proto_ops.read_sock of SDP sockets, for in-kernel consumers (it is
 * what tcp_read_sock() is to TCP).  The actor may use part of what it is
 * given; the rest stays queued.  Buffers the reading frees are reposted
 * and their credits returned to the peer before it returns.
 * sk_data_ready is called with the socket locked, as TCP calls it: in
 * softirq under the socket's spinlock, or by the process that owns the
 * socket; so a consumer may call this straight from its data_ready
 * callback.
 *
 * Returns the bytes the actor used, or the actor's error if it used none.
 */
int sdp_read_sock(struct sock *sk, read_descriptor_t *desc,
		  sk_read_actor_t recv_actor)
{
	struct sk_buff *skb;
	int copied = 0;

	if (sk->sk_state == TCP_LISTEN)
		return -ENOTCONN;

	while (desc->count && (skb = skb_peek(&sk->sk_receive_queue))) {
		u32 offset = SDP_SKB_CB(skb)->offset;
		int used;

		used = recv_actor(desc, skb, offset, skb->len - offset);
		if (used <= 0) {
			if (!copied)
				copied = used;
			break;
		}
		used = min_t(u32, used, skb->len - offset);
		copied += used;
		sdp_rx_eat(sk, skb, used);
	}
	sdp_rx_consumed(sk);
	return copied;
}
EXPORT_SYMBOL_GPL(sdp_read_sock);
