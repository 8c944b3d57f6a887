// SPDX-License-Identifier: GPL-2.0
/*
 * Buffers made of chunks: sdp_rx_buf_size bytes in up to SDP_BUF_CHUNKS
 * chunks of pages, each mapped for the device and posted as one SGE.
 * Single pages when the device takes enough SGEs: a 64 KiB buffer then
 * needs no high-order allocation, which the atomic receive path could not
 * count on, and each chunk of a received payload moves to the receive
 * queue as an skb fragment of its own.
 */
#include <linux/skbuff.h>
#include <linux/uio.h>

#include "sdp.h"

static_assert(SDP_BUF_CHUNKS <= MAX_SKB_FRAGS);

u32 sdp_chunk_size(const struct sdp_dev *dev)
{
	return 1U << dev->chunk_shift;
}

/*
 * Sizes the chunks of @dev's buffers: the smallest pages that make a
 * buffer in as many SGEs as the device takes beside the BSDH's, in a
 * shared receive queue's requests and in a send's, and as SDP_BUF_CHUNKS
 * allows.
 */
void sdp_buf_size_chunks(struct sdp_dev *dev)
{
	const struct ib_device_attr *attrs = &dev->ibdev->attrs;
	u32 sges = min(attrs->max_send_sge, attrs->max_srq_sge) - 1;
	unsigned int shift = PAGE_SHIFT;

	sges = clamp_t(u32, sges, 1, SDP_BUF_CHUNKS);
	while ((sges << shift) < sdp_rx_buf_size)
		shift++;
	dev->chunk_shift = shift;
	dev->nchunks = DIV_ROUND_UP(sdp_rx_buf_size, 1U << shift);
}

/* The memory one whole buffer holds. */
unsigned int sdp_buf_truesize(const struct sdp_dev *dev)
{
	return dev->nchunks << dev->chunk_shift;
}

/*
 * New pages for one chunk.  Where it may sleep, the allocation keeps
 * reclaiming and compacting beyond PAGE_ALLOC_COSTLY_ORDER, which a large
 * rx_buf_size asks for: failing there fails a device's pool or a send,
 * or stalls a received payload.
 */
struct page *sdp_chunk_alloc(const struct sdp_dev *dev, gfp_t gfp)
{
	if (gfpflags_allow_blocking(gfp))
		gfp |= __GFP_RETRY_MAYFAIL;
	return alloc_pages(gfp | __GFP_COMP | __GFP_NOWARN,
			   dev->chunk_shift - PAGE_SHIFT);
}

/*
 * Gives @chunk the pages @page, mapped in direction @dir; on failure the
 * caller keeps its reference on them.
 */
int sdp_chunk_map(const struct sdp_dev *dev, struct sdp_chunk *chunk,
		  struct page *page, enum dma_data_direction dir)
{
	u64 dma = ib_dma_map_page(dev->ibdev, page, 0, sdp_chunk_size(dev), dir);

	if (ib_dma_mapping_error(dev->ibdev, dma))
		return -ENOMEM;
	chunk->page = page;
	chunk->dma = dma;
	return 0;
}

/* Unmaps @chunk; the caller takes over the reference on its pages. */
struct page *sdp_chunk_unmap(const struct sdp_dev *dev,
			     struct sdp_chunk *chunk,
			     enum dma_data_direction dir)
{
	struct page *page = chunk->page;

	ib_dma_unmap_page(dev->ibdev, chunk->dma, sdp_chunk_size(dev), dir);
	chunk->page = NULL;
	return page;
}

/*
 * Gives @buf the chunks it lacks to hold its first @len bytes, mapped in
 * direction @dir; a buffer's chunks are always a prefix.  Pages rather
 * than kmalloc() memory, so that a received chunk can move to an skb as
 * it is.  Returns the bytes of memory added, or -ENOMEM with none added
 * by this call.
 */
long sdp_buf_alloc(const struct sdp_dev *dev, struct sdp_buf *buf, u32 len,
		   enum dma_data_direction dir, gfp_t gfp)
{
	unsigned int i, first, n = DIV_ROUND_UP(len, sdp_chunk_size(dev));

	for (first = 0; first < n && buf->chunk[first].page; first++)
		;
	for (i = first; i < n; i++) {
		struct page *page = sdp_chunk_alloc(dev, gfp);

		if (!page)
			goto fail;
		if (sdp_chunk_map(dev, &buf->chunk[i], page, dir)) {
			put_page(page);
			goto fail;
		}
	}
	return (long)(n - first) << dev->chunk_shift;
fail:
	while (i-- > first)
		put_page(sdp_chunk_unmap(dev, &buf->chunk[i], dir));
	return -ENOMEM;
}

/* Unmaps and frees the chunks @buf has; returns the bytes freed. */
long sdp_buf_free(const struct sdp_dev *dev, struct sdp_buf *buf,
		  enum dma_data_direction dir)
{
	unsigned int i;

	for (i = 0; i < dev->nchunks && buf->chunk[i].page; i++)
		put_page(sdp_chunk_unmap(dev, &buf->chunk[i], dir));
	return (long)i << dev->chunk_shift;
}

/*
 * The address of byte @off of @buf; *@room, if asked, gets the bytes
 * from there to the end of its chunk.
 */
void *sdp_buf_ptr(const struct sdp_dev *dev, const struct sdp_buf *buf,
		  u32 off, u32 *room)
{
	u32 in = off & (sdp_chunk_size(dev) - 1);

	if (room)
		*room = sdp_chunk_size(dev) - in;
	return page_address(buf->chunk[off >> dev->chunk_shift].page) + in;
}

/* The SGEs of the first @len bytes of @buf, into @sge; returns how many. */
unsigned int sdp_buf_sge(const struct sdp_dev *dev,
			 const struct sdp_buf *buf, u32 len,
			 struct ib_sge *sge)
{
	unsigned int n;
	u32 done = 0;

	for (n = 0; done < len; n++) {
		sge[n].addr = buf->chunk[n].dma;
		sge[n].length = min(len - done, sdp_chunk_size(dev));
		sge[n].lkey = dev->pd->local_dma_lkey;
		done += sge[n].length;
	}
	return n;
}

/* The device wrote the first @len bytes of @buf: the CPU may read them. */
void sdp_buf_sync_for_cpu(const struct sdp_dev *dev,
			  const struct sdp_buf *buf, u32 len)
{
	unsigned int i;
	u32 done;

	for (i = 0, done = 0; done < len; i++, done += sdp_chunk_size(dev))
		ib_dma_sync_single_for_cpu(dev->ibdev, buf->chunk[i].dma,
					   min(len - done,
					       sdp_chunk_size(dev)),
					   DMA_FROM_DEVICE);
}

/* The CPU wrote the first @len bytes of @buf: the device may read them. */
void sdp_buf_sync_for_device(const struct sdp_dev *dev,
			     const struct sdp_buf *buf, u32 len)
{
	unsigned int i;
	u32 done;

	for (i = 0, done = 0; done < len; i++, done += sdp_chunk_size(dev))
		ib_dma_sync_single_for_device(dev->ibdev,
					      buf->chunk[i].dma,
					      min(len - done,
						  sdp_chunk_size(dev)),
					      DMA_TO_DEVICE);
}

/*
 * Copies @len bytes from @from to @buf at @off; returns the bytes copied,
 * fewer at a bad address.
 */
size_t sdp_buf_copy_from_iter(const struct sdp_dev *dev,
			      struct sdp_buf *buf, u32 off, size_t len,
			      struct iov_iter *from)
{
	size_t done = 0;

	while (done < len) {
		u32 room;
		void *to = sdp_buf_ptr(dev, buf, off + done, &room);
		size_t n = min_t(size_t, len - done, room);
		size_t got = copy_from_iter(to, n, from);

		done += got;
		if (got < n)
			break;
	}
	return done;
}

/* Copies @len bytes at @off of @buf to @to. */
void sdp_buf_read(const struct sdp_dev *dev, const struct sdp_buf *buf,
		  u32 off, void *to, u32 len)
{
	while (len) {
		u32 room;
		const void *from = sdp_buf_ptr(dev, buf, off, &room);
		u32 n = min(len, room);

		memcpy(to, from, n);
		to += n;
		off += n;
		len -= n;
	}
}
