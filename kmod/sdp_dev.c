// SPDX-License-Identifier: GPL-2.0
/*
 * What the SDP connections on one RDMA device share: a protection domain
 * and a shared receive queue (SRQ) with its pool of receive buffers.
 *
 * A credit is a receive buffer the peer may fill.  Were the buffers a
 * connection's own, posted on its own receive queue, every connection
 * would hold them whether it moves data or not, and an idle one could
 * not give them back: a posted buffer stays the device's until a message
 * fills it.  As a NIC's receive ring serves every TCP connection behind
 * it, the pool serves every SDP connection on its device: a message takes
 * the next buffer; its completion, on the connection's own CQ, moves the
 * payload to that socket's receive queue (or copies it), and the buffer
 * goes straight back to the SRQ.  A connection's credits are then a
 * promise bounded by its socket's receive space (sdp_rx.c), not memory
 * set aside, and an idle connection holds no receive buffer.  Should more
 * messages arrive at once than the pool has buffers posted, the device
 * answers RNR NAK and the sender retries (rnr_retry_count 7: for ever,
 * after the min_rnr_timer we set, sdp_conn.c) until buffers are back: a
 * delay, never a loss.  (The annex's Bufs counts buffers posted for the
 * connection; ours counts the credits, which the pool backs.  The wire is
 * the same: a peer cannot tell.)
 *
 * Buffer memory is counted here for /proc/net/sdpstats: the pools', and
 * every connection's own (sdp_mem_add()).
 */
#include <linux/slab.h>

#include "sdp.h"
#include "sdp_wire.h"

/* Every device that has an sdp_dev, and the users of each. */
static LIST_HEAD(sdp_dev_list);
static DEFINE_MUTEX(sdp_dev_mutex);

/*
 * Bytes of buffers the module holds, and of those its pools hold; the
 * pools' buffers posted on their SRQs.
 */
static atomic_long_t sdp_mem_bytes = ATOMIC_LONG_INIT(0);
static atomic_long_t sdp_pool_bytes = ATOMIC_LONG_INIT(0);
static atomic_long_t sdp_pool_posted = ATOMIC_LONG_INIT(0);
/* Pools made since the module loaded. */
static atomic_long_t sdp_pool_count = ATOMIC_LONG_INIT(0);

void sdp_mem_add(long bytes)
{
	atomic_long_add(bytes, &sdp_mem_bytes);
}

long sdp_mem_total(void)
{
	return atomic_long_read(&sdp_mem_bytes);
}

long sdp_mem_pools(void)
{
	return atomic_long_read(&sdp_pool_bytes);
}

long sdp_pool_buffers_posted(void)
{
	return atomic_long_read(&sdp_pool_posted);
}

long sdp_pools_made(void)
{
	return atomic_long_read(&sdp_pool_count);
}

static void sdp_pool_mem_add(long bytes)
{
	atomic_long_add(bytes, &sdp_pool_bytes);
	sdp_mem_add(bytes);
}

static void sdp_srq_event(struct ib_event *event, void *context)
{
	pr_warn_ratelimited("sdp: SRQ event %s\n", ib_event_msg(event->event));
}

/*
 * The largest message we take, which the Hello and HelloAck announce: a
 * BSDH and a receive buffer's payload.  The BSDH lands in a slot of its
 * own (sdp_dev.rx_hdr), so that a full message fills whole chunks: a
 * 64 KiB send is one message, and its pages move to the reader as they
 * are.
 */
u32 sdp_rx_msg_max(void)
{
	return sizeof(struct sdp_bsdh) + sdp_rx_buf_size;
}

/* Where the device writes the BSDH of @rx, one of @dev's pool. */
static u64 sdp_dev_rx_hdr_dma(const struct sdp_dev *dev,
			      const struct sdp_buf *rx)
{
	return dev->rx_hdr_dma + (rx - dev->pool) * sizeof(struct sdp_bsdh);
}

/* The BSDH of the message @rx, one of @dev's pool, received. */
void sdp_dev_rx_bsdh(const struct sdp_dev *dev, const struct sdp_buf *rx,
		     struct sdp_bsdh *bsdh)
{
	ib_dma_sync_single_for_cpu(dev->ibdev, sdp_dev_rx_hdr_dma(dev, rx),
				   sizeof(*bsdh), DMA_FROM_DEVICE);
	*bsdh = dev->rx_hdr[rx - dev->pool];
}

static int sdp_dev_post(struct sdp_dev *dev, struct sdp_buf *rx)
{
	struct ib_sge sge[1 + SDP_BUF_CHUNKS];
	struct ib_recv_wr wr = {
		.wr_cqe		= &rx->wc.cqe,
		.sg_list	= sge,
	};
	int ret;

	/* Exactly ActRcvSz: a longer message fails on the device. */
	sge[0].addr = sdp_dev_rx_hdr_dma(dev, rx);
	sge[0].length = sizeof(struct sdp_bsdh);
	sge[0].lkey = dev->pd->local_dma_lkey;
	wr.num_sge = 1 + sdp_buf_sge(dev, rx, sdp_rx_buf_size, sge + 1);
	ret = ib_post_srq_recv(dev->srq, &wr, NULL);
	if (!ret) {
		atomic_inc(&dev->posted);
		atomic_long_inc(&sdp_pool_posted);
	}
	return ret;
}

/*
 * Puts the receive buffer @rx, whose completion was processed, back on
 * the SRQ; one that cannot be posted waits for the next call.  Any
 * context.
 */
void sdp_dev_repost(struct sdp_dev *dev, struct sdp_buf *rx)
{
	unsigned long flags;

	atomic_dec(&dev->posted);
	atomic_long_dec(&sdp_pool_posted);
	if (!READ_ONCE(dev->nunposted) && !sdp_dev_post(dev, rx))
		return;
	spin_lock_irqsave(&dev->lock, flags);
	dev->unposted[dev->nunposted++] = rx;
	while (dev->nunposted &&
	       !sdp_dev_post(dev, dev->unposted[dev->nunposted - 1]))
		dev->nunposted--;
	spin_unlock_irqrestore(&dev->lock, flags);
}

/* A spare chunk's pages, or NULL if there is none.  Any context. */
struct page *sdp_dev_take_spare(struct sdp_dev *dev)
{
	struct page *page = NULL;
	unsigned long flags;

	spin_lock_irqsave(&dev->lock, flags);
	if (dev->nspare)
		page = dev->spare[--dev->nspare];
	spin_unlock_irqrestore(&dev->lock, flags);
	if (page)
		sdp_pool_mem_add(-(long)sdp_chunk_size(dev));
	return page;
}

/*
 * Keeps @page, of a chunk of received data, as a spare if there is room;
 * the caller's reference on it becomes the pool's.  Any context.
 */
bool sdp_dev_keep_spare(struct sdp_dev *dev, struct page *page)
{
	unsigned long flags;
	bool kept = false;

	spin_lock_irqsave(&dev->lock, flags);
	if (dev->nspare < SDP_DEV_SPARE_BUFS * dev->nchunks) {
		dev->spare[dev->nspare++] = page;
		kept = true;
	}
	spin_unlock_irqrestore(&dev->lock, flags);
	if (kept)
		sdp_pool_mem_add(sdp_chunk_size(dev));
	return kept;
}

static size_t sdp_dev_rx_hdr_size(const struct sdp_dev *dev)
{
	return dev->pool_size * sizeof(*dev->rx_hdr);
}

/* The BSDH slots of @dev's pool, mapped once for the device. */
static int sdp_dev_alloc_rx_hdr(struct sdp_dev *dev)
{
	u64 dma;

	dev->rx_hdr = kzalloc(sdp_dev_rx_hdr_size(dev), GFP_KERNEL);
	if (!dev->rx_hdr)
		return -ENOMEM;
	dma = ib_dma_map_single(dev->ibdev, dev->rx_hdr,
				sdp_dev_rx_hdr_size(dev), DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev->ibdev, dma)) {
		kfree(dev->rx_hdr);
		dev->rx_hdr = NULL;
		return -ENOMEM;
	}
	dev->rx_hdr_dma = dma;
	sdp_pool_mem_add(sdp_dev_rx_hdr_size(dev));
	return 0;
}

/* Frees @dev and what it made; its SRQ, if any, has no QP left. */
static void sdp_dev_free(struct sdp_dev *dev)
{
	unsigned int i;

	if (dev->srq)
		ib_destroy_srq(dev->srq);
	atomic_long_sub(atomic_read(&dev->posted), &sdp_pool_posted);
	for (i = 0; dev->pool && i < dev->pool_size; i++)
		sdp_pool_mem_add(-sdp_buf_free(dev, &dev->pool[i],
					       DMA_FROM_DEVICE));
	if (dev->rx_hdr) {
		ib_dma_unmap_single(dev->ibdev, dev->rx_hdr_dma,
				    sdp_dev_rx_hdr_size(dev), DMA_FROM_DEVICE);
		kfree(dev->rx_hdr);
		sdp_pool_mem_add(-(long)sdp_dev_rx_hdr_size(dev));
	}
	sdp_pool_mem_add(-(long)(dev->nspare * sdp_chunk_size(dev)));
	while (dev->nspare)
		put_page(dev->spare[--dev->nspare]);
	kvfree(dev->pool);
	kvfree(dev->spare);
	kvfree(dev->unposted);
	if (dev->pd)
		ib_dealloc_pd(dev->pd);
	kfree(dev);
}

/* Makes the shared objects of @ibdev and posts the pool. */
static struct sdp_dev *sdp_dev_create(struct ib_device *ibdev)
{
	struct ib_srq_init_attr attr = {
		.event_handler	= sdp_srq_event,
		.srq_type	= IB_SRQT_BASIC,
	};
	struct sdp_dev *dev;
	unsigned int i;
	int ret = -ENOMEM;
	long bytes;

	if (!ibdev->attrs.max_srq || ibdev->attrs.max_send_sge < 2 ||
	    ibdev->attrs.max_srq_sge < 2)
		return ERR_PTR(-EOPNOTSUPP);
	dev = kzalloc_obj(*dev, GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	dev->ibdev = ibdev;
	spin_lock_init(&dev->lock);
	sdp_buf_size_chunks(dev);
	dev->pool_size = min_t(u32, sdp_rx_pool_size,
			       ibdev->attrs.max_srq_wr - 1);
	dev->pool = kvcalloc(dev->pool_size, sizeof(*dev->pool), GFP_KERNEL);
	dev->unposted = kvcalloc(dev->pool_size, sizeof(*dev->unposted),
				 GFP_KERNEL);
	dev->spare = kvcalloc(SDP_DEV_SPARE_BUFS * dev->nchunks,
			      sizeof(*dev->spare), GFP_KERNEL);
	if (!dev->pool || !dev->unposted || !dev->spare)
		goto fail;

	ret = sdp_dev_alloc_rx_hdr(dev);
	if (ret)
		goto fail;

	dev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(dev->pd)) {
		ret = PTR_ERR(dev->pd);
		dev->pd = NULL;
		goto fail;
	}
	attr.attr.max_wr = dev->pool_size;
	attr.attr.max_sge = 1 + dev->nchunks;
	dev->srq = ib_create_srq(dev->pd, &attr);
	if (IS_ERR(dev->srq)) {
		ret = PTR_ERR(dev->srq);
		dev->srq = NULL;
		goto fail;
	}

	for (i = 0; i < dev->pool_size; i++) {
		struct sdp_buf *rx = &dev->pool[i];

		rx->wc.cqe.done = sdp_cq_done;
		rx->wc.process = sdp_rx_process;
		bytes = sdp_buf_alloc(dev, rx, sdp_rx_buf_size,
				      DMA_FROM_DEVICE, GFP_KERNEL);
		if (bytes < 0)
			goto fail;
		sdp_pool_mem_add(bytes);
		ret = sdp_dev_post(dev, rx);
		if (ret)
			goto fail;
	}
	atomic_long_inc(&sdp_pool_count);
	return dev;
fail:
	sdp_dev_free(dev);
	return ERR_PTR(ret);
}

/*
 * A device's objects outlive its last connection by this long: a program
 * that connects and closes, over and over, would otherwise make and free
 * the pool (megabytes of buffers, mapped and posted) each time.
 */
#define SDP_DEV_KEEP	(5 * HZ)

/* Takes @dev off the list if it has no user; sdp_dev_mutex held. */
static bool sdp_dev_unlist_idle(struct sdp_dev *dev)
{
	if (dev->users || list_empty(&dev->node))
		return false;
	list_del_init(&dev->node);
	return true;
}

/* SDP_DEV_KEEP after its last user went: frees @dev if none came since. */
static void sdp_dev_keep_expired(struct work_struct *work)
{
	struct sdp_dev *dev = container_of(to_delayed_work(work),
					   struct sdp_dev, keep_work);
	bool idle;

	mutex_lock(&sdp_dev_mutex);
	idle = sdp_dev_unlist_idle(dev);
	mutex_unlock(&sdp_dev_mutex);
	if (idle)
		sdp_dev_free(dev);
}

/*
 * The shared objects of @ibdev, made by its first user; the caller is a
 * user until sdp_dev_put().  Process context.
 */
struct sdp_dev *sdp_dev_get(struct ib_device *ibdev)
{
	struct sdp_dev *dev;

	mutex_lock(&sdp_dev_mutex);
	list_for_each_entry(dev, &sdp_dev_list, node) {
		if (dev->ibdev != ibdev)
			continue;
		if (dev->removing) {
			dev = ERR_PTR(-ENODEV);
			goto out;
		}
		/* (a keep_work that runs anyway finds a user and goes) */
		cancel_delayed_work(&dev->keep_work);
		goto found;
	}
	dev = sdp_dev_create(ibdev);
	if (IS_ERR(dev))
		goto out;
	INIT_DELAYED_WORK(&dev->keep_work, sdp_dev_keep_expired);
	list_add(&dev->node, &sdp_dev_list);
found:
	dev->users++;
out:
	mutex_unlock(&sdp_dev_mutex);
	return dev;
}

/*
 * A user is done: its QP, which received from the SRQ, is destroyed.  The
 * device's objects go SDP_DEV_KEEP after the last one, or at once when
 * the device is being removed.  Process context.
 */
void sdp_dev_put(struct sdp_dev *dev)
{
	bool now = false;

	mutex_lock(&sdp_dev_mutex);
	if (!--dev->users) {
		if (dev->removing)
			now = sdp_dev_unlist_idle(dev);
		else
			queue_delayed_work(sdp_wq, &dev->keep_work,
					   SDP_DEV_KEEP);
	}
	mutex_unlock(&sdp_dev_mutex);
	if (now)
		sdp_dev_free(dev);
}

/*
 * @ibdev is going away.  ib_core calls the clients' remove() in the
 * reverse order of their registration: ours before the RDMA CM's, which
 * then takes every CM id off the device.  So an idle device's objects go
 * now; a device in use is marked, takes no new user, and its last user
 * frees it, within the CM's removal.
 */
static void sdp_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct sdp_dev *dev, *idle = NULL;

	mutex_lock(&sdp_dev_mutex);
	list_for_each_entry(dev, &sdp_dev_list, node) {
		if (dev->ibdev != ibdev)
			continue;
		dev->removing = true;
		if (sdp_dev_unlist_idle(dev))
			idle = dev;
		break;
	}
	mutex_unlock(&sdp_dev_mutex);
	if (idle) {
		cancel_delayed_work_sync(&idle->keep_work);
		sdp_dev_free(idle);
	}
}

static struct ib_client sdp_ib_client = {
	.name	= "sdp",
	.remove	= sdp_ib_remove,
};

int sdp_dev_init(void)
{
	return ib_register_client(&sdp_ib_client);
}

/* Every connection is gone: remove() frees the idle devices' objects. */
void sdp_dev_exit(void)
{
	ib_unregister_client(&sdp_ib_client);
}
