// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs objects of one SDP connection: protection domain, completion
 * queue, the RC queue pair owned by the RDMA CM id, and the ring of
 * receive buffers posted on it.
 */
#include <linux/slab.h>

#include "sdp.h"
#include "sdp_wire.h"

static void sdp_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_conn *conn = cq->cq_context;
	struct sdp_rx_buf *rx = container_of(wc->wr_cqe, struct sdp_rx_buf, cqe);
	struct sdp_bsdh *bsdh = rx->data;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("sdp: receive failed: %s\n",
					    ib_wc_status_msg(wc->status));
		return;
	}

	/*
	 * Connection set-up is all this version speaks; anything on the wire
	 * after the Hello exchange is a message it does not implement, which
	 * the protocol says is an error.
	 */
	ib_dma_sync_single_for_cpu(cq->device, rx->dma, sdp_rx_buf_size,
				   DMA_FROM_DEVICE);
	pr_warn_ratelimited("sdp: unexpected message id %#x, aborting\n",
			    wc->byte_len >= sizeof(*bsdh) ? bsdh->mid : 0);
	rdma_disconnect(conn->id);
}

static void sdp_qp_event(struct ib_event *event, void *context)
{
	pr_warn_ratelimited("sdp: QP event %s\n", ib_event_msg(event->event));
}

static int sdp_rx_post(struct sdp_conn *conn, struct sdp_rx_buf *rx)
{
	struct ib_sge sge = {
		.addr	= rx->dma,
		.length	= sdp_rx_buf_size,
		.lkey	= conn->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &rx->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	return ib_post_recv(conn->id->qp, &wr, NULL);
}

static void sdp_rx_ring_free(struct sdp_conn *conn)
{
	struct ib_device *dev = conn->id->device;
	unsigned int i;

	if (!conn->rx_ring)
		return;
	for (i = 0; i < sdp_rx_ring_size; i++) {
		struct sdp_rx_buf *rx = &conn->rx_ring[i];

		if (!rx->data)
			break;
		ib_dma_unmap_single(dev, rx->dma, sdp_rx_buf_size,
				    DMA_FROM_DEVICE);
		kfree(rx->data);
	}
	kfree(conn->rx_ring);
	conn->rx_ring = NULL;
}

static int sdp_rx_ring_fill(struct sdp_conn *conn)
{
	struct ib_device *dev = conn->id->device;
	unsigned int i;
	int ret;

	conn->rx_ring = kcalloc(sdp_rx_ring_size, sizeof(*conn->rx_ring),
				GFP_KERNEL);
	if (!conn->rx_ring)
		return -ENOMEM;

	for (i = 0; i < sdp_rx_ring_size; i++) {
		struct sdp_rx_buf *rx = &conn->rx_ring[i];
		void *data = kmalloc(sdp_rx_buf_size, GFP_KERNEL);

		if (!data)
			return -ENOMEM;
		rx->dma = ib_dma_map_single(dev, data, sdp_rx_buf_size,
					    DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(dev, rx->dma)) {
			kfree(data);
			return -ENOMEM;
		}
		rx->data = data;
		rx->cqe.done = sdp_rx_done;
		ret = sdp_rx_post(conn, rx);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Allocates the connection of @sk around @id, or around a new CM id in the
 * socket's namespace when @id is NULL.
 */
struct sdp_conn *sdp_conn_alloc(struct sock *sk, struct rdma_cm_id *id)
{
	struct sdp_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL);

	if (!conn)
		return ERR_PTR(-ENOMEM);
	conn->sk = sk;
	if (!id)
		id = rdma_create_id(sock_net(sk), sdp_cm_handler, sk,
				    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		kfree(conn);
		return ERR_CAST(id);
	}
	conn->id = id;
	return conn;
}

/*
 * Creates the verbs objects on the device the CM id was resolved to, and
 * posts the receive ring: both sides do this before sending Hello /
 * HelloAck, whose Bufs field announces the ring.  On failure the caller
 * frees what was made with sdp_conn_free_verbs().
 */
int sdp_conn_create_qp(struct sdp_conn *conn)
{
	struct rdma_cm_id *id = conn->id;
	struct ib_qp_init_attr attr = {
		.event_handler	= sdp_qp_event,
		.qp_context	= conn,
		.sq_sig_type	= IB_SIGNAL_REQ_WR,
		.qp_type	= IB_QPT_RC,
		/* One more of each for ib_drain_qp(). */
		.cap = {
			.max_send_wr	= sdp_tx_ring_size + 1,
			.max_recv_wr	= sdp_rx_ring_size + 1,
			.max_send_sge	= 1,
			.max_recv_sge	= 1,
		},
	};
	int ret;

	conn->pd = ib_alloc_pd(id->device, 0);
	if (IS_ERR(conn->pd)) {
		ret = PTR_ERR(conn->pd);
		conn->pd = NULL;
		return ret;
	}

	conn->cq = ib_alloc_cq_any(id->device, conn,
				   attr.cap.max_send_wr + attr.cap.max_recv_wr,
				   IB_POLL_WORKQUEUE);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return ret;
	}

	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	ret = rdma_create_qp(id, conn->pd, &attr);
	if (ret)
		return ret;

	return sdp_rx_ring_fill(conn);
}

/*
 * Frees the verbs objects, leaving the CM id.  The QP is flushed and its
 * completions reaped first, so no completion handler touches a buffer
 * after it is freed.  Must not be called with the socket lock held.
 */
void sdp_conn_free_verbs(struct sdp_conn *conn)
{
	struct rdma_cm_id *id = conn->id;

	if (id->qp) {
		ib_drain_qp(id->qp);
		rdma_destroy_qp(id);
	}
	sdp_rx_ring_free(conn);
	if (conn->cq) {
		ib_free_cq(conn->cq);
		conn->cq = NULL;
	}
	if (conn->pd) {
		ib_dealloc_pd(conn->pd);
		conn->pd = NULL;
	}
}

/*
 * Tears the connection down and frees it, CM id included.  Waits for a
 * running CM handler, so it must not be called with the socket lock held
 * nor from a CM handler.
 */
void sdp_conn_destroy(struct sdp_conn *conn)
{
	if (!conn)
		return;
	if (conn->id->qp)
		rdma_disconnect(conn->id);
	sdp_conn_free_verbs(conn);
	rdma_destroy_id(conn->id);
	kfree(conn);
}

/* Takes the connection out of @sk: the caller owns it.  Socket lock held. */
struct sdp_conn *sdp_conn_take(struct sock *sk)
{
	struct sdp_conn *conn = sdp_sk(sk)->conn;

	sdp_sk(sk)->conn = NULL;
	return conn;
}
