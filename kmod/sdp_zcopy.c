// SPDX-License-Identifier: GPL-2.0
/*
 * Sends from the caller's own pages.  A blocking send of at least
 * sdp_zcopy_thresh bytes from user memory posts its whole messages from
 * the pages the caller named, referenced and mapped for the device for
 * the time of the send, instead of copying them into the send ring; only
 * the BSDH comes from the ring slot.  On the wire these are the same Data
 * messages, which the peer copies out of its receive buffers as ever.
 * The send returns once the device is done with the pages: a send that
 * returned has taken its bytes, as TCP's has, and the program may write
 * its buffer again.  It pays where the copy costs the sender more than
 * the wait: Soft-RoCE of 6.1, for one, completes a send in the sender's
 * own softirq, on the CPU that would have copied.  Where the device
 * raises its completions in process context instead (Soft-RoCE of the
 * newer kernels, from a kworker), each wait takes task switches at both
 * ends, and a stream of copied sends, which waits for no completion,
 * moves more: there the connection copies.
 *
 * Elsewhere the wait may still cost more than the copy it saves: a send
 * that waits for its completion has nothing else of the sender's in
 * flight beside it, while copied sends keep the send queue full, and
 * where copying is cheap beside the link (Soft-RoCE of 6.1 on the bed's
 * CPU) a stream of copied 64 KiB sends moved a fifth more.  So each
 * connection times both ways and takes the one that has cost it less
 * (sdp_zcopy_pick()).
 *
 * In-kernel senders that hand their pages over (SunRPC's server, which
 * sends a reply from the pages it read a file into; splice() and
 * sendfile()) have them referenced the same way at any size, and do not
 * wait: they will not change them.
 */
#include <linux/sched/signal.h>
#include <linux/uio.h>
#include <net/sock.h>

#include "sdp.h"

/* A waiting sender looks again this often, for wake-ups it may miss. */
#define SDP_ZC_RECHECK	(HZ / 4)

/* Whether the rest of @msg (@timeo: the send may block) goes from its pages. */
bool sdp_zcopy_wanted(struct msghdr *msg, long timeo)
{
	unsigned int thresh = READ_ONCE(sdp_zcopy_thresh);

	return thresh && timeo && msg_data_left(msg) >= thresh &&
	       user_backed_iter(&msg->msg_iter);
}

/*
 * Whether @conn's sends go from the caller's pages, as sdp_zcopy_wanted()
 * allows: not once its device raised a completion event in process
 * context, unless zcopy_task_cq asks for them there too.
 */
bool sdp_zcopy_pays(const struct sdp_conn *conn)
{
	return !READ_ONCE(conn->cq_in_task) || READ_ONCE(sdp_zcopy_task_cq);
}

/*
 * Large sends the way that cost more is tried again once in this many,
 * so that the choice follows the connection's traffic: at first once in
 * SDP_ZC_RETRY_MIN; each try that leaves it the costlier way doubles
 * that, up to SDP_ZC_RETRY_MAX, and a try that turns the choice round
 * starts over.  A try costs more than its own send: one from the pages
 * waits for its completion with the send queue emptied behind it.
 */
#define SDP_ZC_RETRY_MIN	16
#define SDP_ZC_RETRY_MAX	256

/* The least send whose time tells what a way costs. */
#define SDP_ZC_SAMPLE_MIN	(32 * 1024)

/*
 * The sends each way that a connection times in turns before it chooses.
 * Its first sends meet what later ones do not (the peer's accept() and
 * first credits, pages faulted in, send slots given their buffers), and a
 * choice made from one stalled send would hold until a try turned it
 * round: the least of these samples is the way's first cost.
 */
#define SDP_ZC_FIRST		4

/*
 * Whether this large send goes from the caller's pages or is copied: the
 * way that has cost @ssk's sends less time per byte so far, from this
 * choice to the send's return.  For sends from the pages that includes
 * the wait for their completion; for copied ones the waits for send
 * slots, in which the link's pace shows.  The first SDP_ZC_FIRST sends
 * each way go in turns, the pages first.  Socket lock held.
 */
bool sdp_zcopy_pick(struct sdp_sock *ssk)
{
	const u8 *samples = ssk->tx_zc_samples;
	bool pages;

	ssk->tx_zc_trial = false;
	if (!READ_ONCE(sdp_zcopy_adapt))
		return true;
	if (samples[0] < SDP_ZC_FIRST || samples[1] < SDP_ZC_FIRST)
		return samples[1] <= samples[0];
	pages = ssk->tx_zc_cost[1] <= ssk->tx_zc_cost[0];
	if (++ssk->tx_zc_turns < SDP_ZC_RETRY_MIN << ssk->tx_zc_backoff)
		return pages;
	ssk->tx_zc_turns = 0;
	ssk->tx_zc_trial = true;
	return !pages;
}

/*
 * A large send that went wholly one way (@pages: from the caller's
 * pages) took @ns for @bytes: the least of that way's first samples, then
 * folded into its average a quarter at a time.  After a try of the way
 * that cost more, how soon the next comes follows what it showed.
 * Socket lock held.
 */
void sdp_zcopy_account(struct sdp_sock *ssk, bool pages, u64 ns,
		       size_t bytes)
{
	u32 *cost = &ssk->tx_zc_cost[pages];
	bool now_pages;
	u32 sample;

	if (bytes < SDP_ZC_SAMPLE_MIN)
		return;
	sample = min_t(u64, div64_u64(ns * 1024, bytes), U32_MAX);
	if (ssk->tx_zc_samples[pages] < SDP_ZC_FIRST) {
		if (ssk->tx_zc_samples[pages]++ == 0 || sample < *cost)
			*cost = sample;
		return;
	}
	*cost = *cost - *cost / 4 + sample / 4;
	if (!ssk->tx_zc_trial)
		return;
	ssk->tx_zc_trial = false;
	now_pages = ssk->tx_zc_cost[1] <= ssk->tx_zc_cost[0];
	if (now_pages == pages)		/* the try turned the choice round */
		ssk->tx_zc_backoff = 0;
	else if (SDP_ZC_RETRY_MIN << ssk->tx_zc_backoff < SDP_ZC_RETRY_MAX)
		ssk->tx_zc_backoff++;
}

/*
 * Takes up to @max bytes of @from into @zc: their pages referenced and
 * mapped, at most conn->zc_frags of them.  Returns the bytes taken, or
 * an error when it could take none (-EFAULT: a bad address first).
 */
ssize_t sdp_zcopy_fill(const struct sdp_conn *conn, struct sdp_zc *zc,
		       struct iov_iter *from, size_t max)
{
	struct ib_device *dev = conn->id->device;
	size_t done = 0;
	ssize_t ret = 0;

	while (done < max && zc->n < conn->zc_frags) {
		unsigned int first = zc->n, i, npages;
		size_t start, left;
		ssize_t got;

		got = iov_iter_get_pages2(from, &zc->page[first], max - done,
					  conn->zc_frags - first, &start);
		if (got <= 0) {
			ret = got;
			break;
		}
		npages = DIV_ROUND_UP(start + got, PAGE_SIZE);
		left = got;
		for (i = first; i < first + npages; i++) {
			u32 len = min_t(size_t, left, PAGE_SIZE - start);
			u64 dma = ib_dma_map_page(dev, zc->page[i], start, len,
						  DMA_TO_DEVICE);

			if (ib_dma_mapping_error(dev, dma)) {
				/* Give back what is not mapped, from here on. */
				iov_iter_revert(from, left);
				while (i < first + npages)
					put_page(zc->page[i++]);
				return done ? done : -ENOMEM;
			}
			zc->dma[i] = dma;
			zc->len[i] = len;
			zc->n++;
			left -= len;
			done += len;
			start = 0;
		}
	}
	return done ? done : (ret ? ret : -EFAULT);
}

/*
 * Adds up to @max bytes of @from, an in-kernel sender's pages handed
 * over for splicing (sdp_msg_splice(), or sendpage()), to @zc: each page
 * referenced and mapped, until @zc holds conn->zc_frags.  Unlike a user's
 * pages, they are the device's without a wait: their owner may not change
 * them, and they go when the message's completion lets go of them, as
 * TCP's skbs let go of spliced pages.  Returns the bytes taken; 0 when
 * the first page must be copied instead (sdp_iter_get_page()).
 */
size_t sdp_splice_fill(const struct sdp_conn *conn, struct sdp_zc *zc,
		       struct iov_iter *from, size_t max)
{
	struct ib_device *dev = conn->id->device;
	size_t done = 0;

	while (done < max && zc->n < conn->zc_frags) {
		struct page *page;
		size_t off;
		ssize_t got;
		u64 dma;

		got = sdp_iter_get_page(from, max - done, &page, &off);
		if (got <= 0)
			break;
		dma = ib_dma_map_page(dev, page, off, got, DMA_TO_DEVICE);
		if (ib_dma_mapping_error(dev, dma)) {
			iov_iter_revert(from, got);
			put_page(page);
			break;
		}
		zc->page[zc->n] = page;
		zc->dma[zc->n] = dma;
		zc->len[zc->n] = got;
		zc->n++;
		done += got;
	}
	return done;
}

/* Appends the SGEs of @zc's pages to @sge; returns how many. */
unsigned int sdp_zcopy_sge(const struct sdp_conn *conn,
			   const struct sdp_zc *zc, struct ib_sge *sge)
{
	unsigned int i;

	for (i = 0; i < zc->n; i++) {
		sge[i].addr = zc->dma[i];
		sge[i].length = zc->len[i];
		sge[i].lkey = conn->dev->pd->local_dma_lkey;
	}
	return zc->n;
}

/* The device is done with @zc's pages: unmaps and lets go of them. */
void sdp_zcopy_release(const struct sdp_conn *conn, struct sdp_zc *zc)
{
	while (zc->n) {
		zc->n--;
		ib_dma_unmap_page(conn->id->device, zc->dma[zc->n],
				  zc->len[zc->n], DMA_TO_DEVICE);
		put_page(zc->page[zc->n]);
	}
}

/* Lets go of the pages of every send slot; the QP is drained. */
void sdp_zcopy_free(struct sdp_conn *conn)
{
	unsigned int i;

	if (!conn->tx_zc)
		return;
	for (i = 0; i < sdp_tx_ring_size; i++)
		sdp_zcopy_release(conn, &conn->tx_zc[i]);
	kvfree(conn->tx_zc);
	conn->tx_zc = NULL;
}

/*
 * Whether a zero-copy send still has to wait.  Without the socket lock
 * (@locked false) only the socket's own fields are looked at: the
 * connection may be freed meanwhile.
 */
static bool sdp_zcopy_busy(const struct sock *sk, bool locked)
{
	const struct sdp_sock *ssk = sdp_sk(sk);

	if (READ_ONCE(sk->sk_err) ||
	    (s32)(READ_ONCE(ssk->tx_tail) - ssk->tx_zc_end) >= 0)
		return false;
	return !locked || (ssk->conn && !ssk->conn->dying);
}

/*
 * Waits until the messages posted from the caller's pages are complete,
 * up to sdp_sock.tx_zc_end; or the connection failed or is going, and its
 * teardown lets go of the pages.  A signal does not end the wait, which
 * the transport's retries bound: the caller's buffer is the device's
 * until then.  Only a fatal one does, as the pages stay referenced.
 * Socket lock held; dropped while waiting.
 */
void sdp_zcopy_wait(struct sock *sk)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sdp_sock *ssk = sdp_sk(sk);

	ssk->tx_zc_waiters++;
	add_wait_queue(sk_sleep(sk), &wait);
	while (sdp_zcopy_busy(sk, true) && !fatal_signal_pending(current)) {
		release_sock(sk);
		if (sdp_zcopy_busy(sk, false))
			sdp_wait_woken(sk, &wait, signal_pending(current) ?
				       TASK_KILLABLE : TASK_INTERRUPTIBLE,
				       SDP_ZC_RECHECK);
		lock_sock(sk);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	ssk->tx_zc_waiters--;
}

/* Sends completed: wakes a zero-copy sender they were the last for. */
void sdp_zcopy_wakeup(struct sock *sk)
{
	const struct sdp_sock *ssk = sdp_sk(sk);

	if (!ssk->tx_zc_waiters || (s32)(ssk->tx_tail - ssk->tx_zc_end) < 0)
		return;
	sdp_wake_sleepers(sk);
}
