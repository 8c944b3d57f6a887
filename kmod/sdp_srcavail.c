// SPDX-License-Identifier: GPL-2.0
/*
 * Read zero-copy, the source's side.  A blocking send of at least
 * read_zcopy_thresh bytes from user memory, to a peer that takes part,
 * registers the caller's pages for remote reads and advertises them in a
 * SrcAvail; the sink RDMA-Reads them, into its reader's buffer or its own,
 * and reports what it read in RdmaRdCompl messages.  When all is read,
 * the registration is invalidated, the pages go back, and the send
 * returns: as with TCP, a send that returned has taken its bytes, and
 * the program may write or unmap its buffer.
 *
 * A sender that gives up waiting (a signal, SO_SNDTIMEO) sends
 * SrcAvailCancel; the sink answers with what it read and SendSM, and the
 * send returns the bytes read.  A sink that does not answer within
 * SDP_SRC_CANCEL_WAIT is taken for broken: the connection aborts.  SendSM
 * without a cancel means the sink refuses: the rest of the send goes by
 * buffered copy.
 *
 * The protection domain is the device's, shared by its connections (the
 * shared receive queue needs that), so a key is valid for one SrcAvail
 * only, from the registration to the invalidation, and each registration
 * gets a new one.
 */
#include <linux/sched/signal.h>
#include <linux/uio.h>
#include <net/sock.h>

#include "sdp.h"
#include "sdp_wire.h"

/* How long the sink has to answer a SrcAvailCancel. */
#define SDP_SRC_CANCEL_WAIT	(5 * HZ)

/* A waiting sender looks again this often, for wake-ups it may miss. */
#define SDP_SRC_RECHECK		(HZ / 4)

/*
 * Whether the rest of @msg, a send that sdp_zcopy_wanted(), goes by
 * SrcAvail: at least read_zcopy_thresh of it; the tail of a large send
 * is not worth the round trip.
 */
bool sdp_src_wanted(const struct sock *sk, struct msghdr *msg)
{
	const struct sdp_sock *ssk = sdp_sk(sk);

	return ssk->conn && ssk->conn->read_zcopy && !ssk->tx_held &&
	       msg_data_left(msg) >= READ_ONCE(sdp_read_zcopy_thresh);
}

/* The device is done with the pages: unmaps them and lets go of them. */
static void sdp_src_release(struct sdp_conn *conn, struct sdp_src *src)
{
	unsigned int i;

	if (!src->npages)
		return;
	ib_dma_unmap_sg(conn->dev->ibdev, src->sg, src->npages, DMA_TO_DEVICE);
	for (i = 0; i < src->npages; i++)
		put_page(src->page[i]);
	src->npages = 0;
}

/* The registration failed; the error reaches the sender by the QP. */
static int sdp_src_reg_process(struct sock *sk, struct sdp_conn *conn,
			       struct sdp_wc *wc, gfp_t gfp)
{
	if (sdp_sk(sk)->conn == conn)
		sdp_wc_failed(sk, wc->status, "a registration");
	return 0;
}

/*
 * The invalidation completed: the peer can no longer read the pages, and
 * they go back.  If it failed, the MR may still be valid: the pages wait
 * for the connection's free (sdp_src_free()).
 */
static int sdp_src_inv_process(struct sock *sk, struct sdp_conn *conn,
			       struct sdp_wc *wc, gfp_t gfp)
{
	struct sdp_src *src = conn->src;

	if (sdp_sk(sk)->conn != conn ||
	    sdp_wc_failed(sk, wc->status, "an invalidation"))
		return 0;
	sdp_src_release(conn, src);
	src->active = false;
	src->finishing = false;
	sdp_sk(sk)->tx_src_active = false;
	sdp_wake_sleepers(sk);
	sdp_tx_wakeup(sk);	/* other writers may go on */
	sdp_tx_control(sk);	/* and a DisConn held behind it */
	return 0;
}

/*
 * The sink has read all, or will read no more: the registration is
 * invalidated, and its completion gives the pages back.  Socket lock held.
 */
static void sdp_src_finish(struct sock *sk, struct sdp_conn *conn)
{
	struct sdp_src *src = conn->src;
	struct ib_send_wr wr = {
		.wr_cqe			= &src->inv_wc.cqe,
		.opcode			= IB_WR_LOCAL_INV,
		.send_flags		= IB_SEND_SIGNALED,
	};
	int ret;

	/* (dying: sdp_src_revoke() takes the registration, if not already) */
	if (src->finishing || conn->dying)
		return;
	wr.ex.invalidate_rkey = src->mr->rkey;
	local_bh_disable();
	ret = ib_post_send(conn->id->qp, &wr, NULL);
	local_bh_enable();
	if (ret) {
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_ERROR,
			  "cannot invalidate a SrcAvail's registration");
		return;
	}
	src->finishing = true;
}

/* RdmaRdCompl: the sink read @len more bytes.  Socket lock held. */
void sdp_src_rd_compl(struct sock *sk, struct sdp_conn *conn, u32 len)
{
	struct sdp_src *src = conn->src;

	if (conn->dying)
		return;		/* (its registration is revoked) */
	if (!src || !src->active || src->finishing || !len ||
	    len > src->len - src->acked) {
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_PROTOCOL,
			  "RdmaRdCompl for bytes never offered");
		return;
	}
	src->acked += len;
	sdp_stat_add(sock_net(sk), SDP_MIB_TX_READ_ZCOPY_BYTES, len);
	if (src->acked == src->len)
		sdp_src_finish(sk, conn);
	sdp_wake_sleepers(sk);
}

/*
 * SendSM: the sink reads no more of our SrcAvail.  One that comes after
 * the SrcAvail was read in full answers a cancel that crossed the last
 * RdmaRdCompl: nothing to do.  Socket lock held.
 */
void sdp_src_send_sm(struct sock *sk, struct sdp_conn *conn)
{
	struct sdp_src *src = conn->src;

	if (!src || !src->active || src->finishing)
		return;
	src->refused = true;
	sdp_stat_inc(sock_net(sk), SDP_MIB_SRC_AVAIL_REFUSED);
	sdp_src_finish(sk, conn);
	sdp_wake_sleepers(sk);
}

/* The connection's source state, made on its first SrcAvail. */
static struct sdp_src *sdp_src_get(struct sock *sk, struct sdp_conn *conn)
{
	struct ib_device *ibdev = conn->dev->ibdev;
	struct sdp_src *src = conn->src;
	u32 max_pages;

	if (src)
		return src;
	max_pages = min_t(u32, SDP_SRC_PAGES,
			  ibdev->attrs.max_fast_reg_page_list_len);
	if (!max_pages)
		return ERR_PTR(-EOPNOTSUPP);
	src = kvzalloc_obj(*src, sk->sk_allocation);
	if (!src)
		return ERR_PTR(-ENOMEM);
	src->mr = ib_alloc_mr(conn->dev->pd, IB_MR_TYPE_MEM_REG, max_pages);
	if (IS_ERR(src->mr)) {
		long err = PTR_ERR(src->mr);

		kvfree(src);
		return ERR_PTR(err);
	}
	src->max_pages = max_pages;
	src->reg_wc.cqe.done = sdp_cq_done;
	src->reg_wc.process = sdp_src_reg_process;
	src->inv_wc.cqe.done = sdp_cq_done;
	src->inv_wc.process = sdp_src_inv_process;
	conn->src = src;
	sdp_conn_mem_add(conn, sizeof(*src));
	return src;
}

/*
 * Takes up to SDP_SRC_PAGES pages of @from, within one of its segments
 * (one range of addresses, which one registration covers), maps them and
 * registers them.  Returns the bytes taken, or an error with nothing
 * taken.  Socket lock held.
 */
static ssize_t sdp_src_map(struct sdp_conn *conn, struct sdp_src *src,
			   struct iov_iter *from)
{
	struct ib_device *ibdev = conn->dev->ibdev;
	unsigned int i, n;
	size_t start, left;
	ssize_t got;
	int nents;

	got = iov_iter_get_pages2(from, src->page,
				  min_t(size_t, iov_iter_count(from),
					(size_t)src->max_pages << PAGE_SHIFT),
				  src->max_pages, &start);
	if (got <= 0)
		return got ? got : -EFAULT;
	n = DIV_ROUND_UP(start + got, PAGE_SIZE);
	sg_init_table(src->sg, n);
	left = got;
	for (i = 0; i < n; i++) {
		size_t len = min_t(size_t, left, PAGE_SIZE - start);

		sg_set_page(&src->sg[i], src->page[i], len, start);
		left -= len;
		start = 0;
	}
	nents = ib_dma_map_sg(ibdev, src->sg, n, DMA_TO_DEVICE);
	if (nents <= 0)
		goto unpin;
	if (ib_map_mr_sg(src->mr, src->sg, nents, NULL, PAGE_SIZE) != nents) {
		ib_dma_unmap_sg(ibdev, src->sg, n, DMA_TO_DEVICE);
		goto unpin;
	}
	src->npages = n;
	return got;
unpin:
	for (i = 0; i < n; i++)
		put_page(src->page[i]);
	iov_iter_revert(from, got);
	return -ENOMEM;
}

/*
 * Nothing the QP was asked to do is outstanding, and no other sender's
 * SrcAvail (a connection has one source state).
 */
static bool sdp_src_qp_idle(const struct sock *sk, const struct sdp_conn *conn)
{
	const struct sdp_sock *ssk = sdp_sk(sk);

	return ssk->tx_head == ssk->tx_tail && !ssk->rx_rd_busy &&
	       !conn->probe_inflight && !ssk->tx_src_busy;
}

/*
 * Soft-RoCE runs a fast registration again when it goes back to resend
 * what came before it and was not acknowledged yet, and then fails the
 * QP, the MR being registered already (6.1 logs "rxe_reg_fast_mr:
 * mr->lkey ... not free"; NFS over RDMA meets it too).  So the
 * registration waits until nothing the QP was asked to do is outstanding:
 * it then completes at once, with nothing before it to resend.  The
 * socket stays owned meanwhile, so the completion handlers post nothing
 * new (they wait on the backlog).  Returns 0, -ECANCELED on a signal, or
 * -EPIPE when the connection failed.  Socket lock held; dropped while
 * waiting.
 */
static int sdp_src_wait_idle(struct sock *sk, struct sdp_conn *conn)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sdp_sock *ssk = sdp_sk(sk);
	int err = 0;

	ssk->tx_zc_waiters++;	/* tx completions wake us (sdp_zcopy.c) */
	add_wait_queue(sk_sleep(sk), &wait);
	while (!sdp_src_qp_idle(sk, conn)) {
		/* A last send that asked for no completion gets one after it. */
		if (ssk->tx_unsignaled)
			sdp_tx_control(sk);
		ssk->tx_zc_end = ssk->tx_head;
		release_sock(sk);
		sdp_wait_woken(sk, &wait, TASK_INTERRUPTIBLE, SDP_SRC_RECHECK);
		lock_sock(sk);
		if (sk->sk_err || ssk->conn != conn || conn->dying) {
			err = -EPIPE;
			break;
		}
		if (signal_pending(current)) {
			err = -ECANCELED;
			break;
		}
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	ssk->tx_zc_waiters--;
	return err;
}

/* Posts the registration of the mapped pages, with a new key. */
static int sdp_src_register(struct sdp_conn *conn, struct sdp_src *src)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_cqe	= &src->reg_wc.cqe,
			.opcode	= IB_WR_REG_MR,
		},
		.mr	= src->mr,
		.access	= IB_ACCESS_REMOTE_READ,
	};
	int ret;

	ib_update_fast_reg_key(src->mr, ib_inc_rkey(src->mr->rkey));
	wr.key = src->mr->rkey;
	local_bh_disable();
	ret = ib_post_send(conn->id->qp, &wr.wr, NULL);
	local_bh_enable();
	return ret;
}

/*
 * Whether the connection is still the socket's and may go on with the
 * SrcAvail: not failed, not torn down.  Socket lock held.
 */
static bool sdp_src_live(const struct sock *sk, const struct sdp_conn *conn)
{
	return !sk->sk_err && sdp_sk(sk)->conn == conn && !conn->dying;
}

/*
 * Waits until the SrcAvail is done with: until no peer can read its pages
 * any more (tx_src_active clears when the invalidation completes, or when
 * the teardown of a failed connection revokes them: sdp_src_revoke()),
 * so that the program may reuse them once the send returns.  On a signal
 * or when the send's time runs out (@timeo), asks the sink to stop, and
 * waits for its answer, which SDP_SRC_CANCEL_WAIT bounds (then the
 * connection aborts).  A fatal signal cancels too, and waits for the
 * answer or the abort without being woken by signals.  Returns the bytes
 * the sink read, as last seen while the connection was live, and in
 * *@gave_up whether the send must stop short of them: it was cancelled,
 * or the connection failed, rather than refused by the sink.  Socket
 * lock held; dropped while waiting.
 */
static u32 sdp_src_wait(struct sock *sk, struct sdp_conn *conn, long *timeo,
			bool *gave_up)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_src *src = conn->src;
	bool live = true, cancelled = false;
	u32 acked = 0;

	add_wait_queue(sk_sleep(sk), &wait);
	while (ssk->tx_src_active) {
		unsigned int state = TASK_INTERRUPTIBLE;
		long t = SDP_SRC_RECHECK, left;
		bool charge = false;

		/* (once it is not live, the connection may be freed) */
		live = live && sdp_src_live(sk, conn);
		if (live) {
			acked = src->acked;
			cancelled = src->cancelled || src->finishing;
			if (!src->cancelled && !src->finishing &&
			    (!*timeo || signal_pending(current))) {
				src->cancelled = true;
				src->cancel_due = true;
				src->cancel_by = jiffies + SDP_SRC_CANCEL_WAIT;
				sdp_stat_inc(sock_net(sk),
					     SDP_MIB_SRC_AVAIL_CANCELS);
				sdp_tx_control(sk);
				continue;
			}
			if (src->cancelled && !src->finishing &&
			    time_after(jiffies, src->cancel_by)) {
				sdp_abort(sk, -ECONNRESET,
					  SDP_MIB_ABORT_PROTOCOL,
					  "SrcAvailCancel unanswered");
				continue;
			}
			charge = !cancelled;
			if (charge)
				t = min(*timeo, t);
		}
		/*
		 * Cancelled, finishing or failed, the end is bounded (the
		 * sink's answer, the invalidation, the abort, the teardown):
		 * no signal cuts that wait short, nor makes it spin.
		 */
		if (!charge)
			state = signal_pending(current) ? TASK_UNINTERRUPTIBLE :
							  TASK_KILLABLE;
		release_sock(sk);
		left = sdp_wait_woken(sk, &wait, state, t);
		if (charge && *timeo != MAX_SCHEDULE_TIMEOUT)
			*timeo -= min(*timeo, t - left);
		lock_sock(sk);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	if (live && sdp_src_live(sk, conn)) {
		acked = src->acked;
		*gave_up = src->cancelled || !src->refused;
	} else {
		*gave_up = true;
	}
	return acked;
}

static ssize_t __sdp_src_send(struct sock *sk, struct sdp_conn *conn,
			      struct msghdr *msg, long *timeo, bool *stop,
			      bool *busy)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_src *src;
	bool gave_up;
	ssize_t got;
	int ret;
	u32 acked;

	/*
	 * The source state after the wait, which drops the socket lock: the
	 * watchdog's sdp_tx_trim() frees it meanwhile when it is idle.
	 */
	ret = sdp_src_wait_idle(sk, conn);
	if (!ret && !sdp_src_live(sk, conn))
		ret = -EPIPE;	/* (its registration may be revoked) */
	if (ret) {
		*stop = true;
		return ret == -EPIPE ? -ECONNRESET : ret;
	}
	src = sdp_src_get(sk, conn);
	if (IS_ERR(src))
		return PTR_ERR(src);
	got = sdp_src_map(conn, src, &msg->msg_iter);
	if (got <= 0)
		return got;
	src->len = got;
	src->acked = 0;
	src->cancelled = false;
	src->cancel_due = false;
	src->refused = false;
	src->finishing = false;
	/* From here on, the connection's free lets go of the pages. */
	src->active = true;
	ssk->tx_src_active = true;
	ssk->tx_src_busy = true;
	*busy = true;
	if (sdp_src_register(conn, src)) {
		sdp_abort(sk, -ECONNRESET, SDP_MIB_ABORT_ERROR,
			  "cannot register a SrcAvail's pages");
		goto failed;
	}
	if (sdp_tx_post_src_avail(sk, conn, got, src->mr->rkey,
				  src->mr->iova))
		goto failed;
	sdp_stat_inc(sock_net(sk), SDP_MIB_SRC_AVAILS);
	sdp_watchdog_arm(sk);	/* a peer that never reads: sdp_timer.c */

	acked = sdp_src_wait(sk, conn, timeo, &gave_up);

	/* What the sink did not read is not sent. */
	iov_iter_revert(&msg->msg_iter, got - acked);
	*stop = gave_up && acked < got;
	if (acked)
		return acked;
	return *stop ? -ECANCELED : 0;

failed:
	/* (the registration may be valid: back once the teardown revoked it) */
	sdp_src_wait(sk, conn, timeo, &gave_up);
	iov_iter_revert(&msg->msg_iter, got);
	*stop = true;
	return -ECONNRESET;
}

/**
 * sdp_src_send - sends part of @msg by SrcAvail and waits for the sink
 * @sk: the socket, locked; there is room for a message with payload
 * @conn: its connection, which takes part in read zero-copy
 * @msg: the caller's message, from user memory
 * @timeo: the send's time left; decremented while it waits
 * @stop: set when the send must not go on (see below)
 *
 * Returns the bytes the sink read, which @msg is advanced past; 0 when it
 * refused (SendSM) before it read any: the caller sends the rest by
 * buffered copy; -ECANCELED when the send must not go on: the sender gave
 * up (a signal, or @timeo ran out) or the connection failed; -EFAULT for
 * a bad address; another error when the connection could not offer its
 * pages.  With a positive count, *@stop tells whether the send must not
 * go on; else the rest goes by buffered copy after a refusal, or by the
 * next SrcAvail.
 */
ssize_t sdp_src_send(struct sock *sk, struct sdp_conn *conn,
		     struct msghdr *msg, long *timeo, bool *stop)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	bool busy = false;
	ssize_t ret;

	/* The source state stays while a sender is here (sdp_tx_trim()). */
	ssk->tx_src_senders++;
	ret = __sdp_src_send(sk, conn, msg, timeo, stop, &busy);
	ssk->tx_src_senders--;
	/* Its result taken, another sender's SrcAvail may go. */
	if (busy) {
		ssk->tx_src_busy = false;
		sdp_wake_sleepers(sk);
	}
	return ret;
}

/*
 * The connection's QP is drained, and no peer may read the pages of its
 * SrcAvail any more: the MR goes first, then the pages, and their sender
 * returns (sdp_src_wait()).  The state itself stays until sdp_src_free():
 * a completion of it may still wait on the backlog.  Socket lock held,
 * or the connection no longer the socket's.
 */
void sdp_src_revoke(struct sdp_conn *conn)
{
	struct sdp_src *src = conn->src;

	if (!src || !src->mr)
		return;
	ib_dereg_mr(src->mr);
	src->mr = NULL;
	sdp_src_release(conn, src);
	if (src->active) {
		src->active = false;
		WRITE_ONCE(sdp_sk(conn->sk)->tx_src_active, false);
		sdp_wake_sleepers(conn->sk);
	}
}

/*
 * Frees the source state.  From sdp_tx_trim() when no SrcAvail is out; or
 * with the connection, its QP drained and its backlog dropped.
 */
void sdp_src_free(struct sdp_conn *conn)
{
	struct sdp_src *src = conn->src;

	if (!src)
		return;
	sdp_src_revoke(conn);
	conn->src = NULL;
	sdp_conn_mem_add(conn, -(long)sizeof(*src));
	kvfree(src);
}
