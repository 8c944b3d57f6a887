/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kernel ends of the RPC bandwidth program share: the block
 * pattern and the stamps of sdp_bw_proto.h written to and checked in
 * pages, where SunRPC keeps a block's data.
 */
#ifndef SDP_KRPC_BW_H
#define SDP_KRPC_BW_H

#include <linux/build_bug.h>
#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/sunrpc/xdr.h>

#include "sdp_bw_proto.h"

/* The largest block: SunRPC's largest payload (RPCSVC_MAXPAYLOAD). */
#define SDP_KRPC_MAX_BLOCK	SZ_1M
#define SDP_KRPC_MAX_PAGES	(SDP_KRPC_MAX_BLOCK >> PAGE_SHIFT)

/* The next @len bytes of @p into @pages, from byte @base of the first. */
static inline void sdp_krpc_fill_pages(struct sdp_bw_pattern *p,
				       struct page **pages, unsigned int base,
				       unsigned int len)
{
	unsigned int n;
	void *addr;

	pages += base >> PAGE_SHIFT;
	base &= ~PAGE_MASK;
	for (; len; len -= n, base = 0, pages++) {
		n = min_t(unsigned int, len, PAGE_SIZE - base);
		addr = kmap_local_page(*pages);
		sdp_bw_pattern_fill(p, addr + base, n);
		kunmap_local(addr);
	}
}

/* Whether @pages hold the next @len bytes of @p, from byte @base. */
static inline bool sdp_krpc_check_pages(struct sdp_bw_pattern *p,
					struct page **pages,
					unsigned int base, unsigned int len)
{
	unsigned int n;
	void *addr;
	int ok = 1;

	pages += base >> PAGE_SHIFT;
	base &= ~PAGE_MASK;
	for (; len && ok; len -= n, base = 0, pages++) {
		n = min_t(unsigned int, len, PAGE_SIZE - base);
		addr = kmap_local_page(*pages);
		ok = sdp_bw_pattern_check(p, addr + base, n);
		kunmap_local(addr);
	}
	return ok;
}

/* Whether @buf (head, pages, tail: buf->len bytes) holds @p's next bytes. */
static inline bool sdp_krpc_check_xdr_buf(struct sdp_bw_pattern *p,
					  const struct xdr_buf *buf)
{
	unsigned int left = buf->len, n;

	n = min_t(unsigned int, left, buf->head[0].iov_len);
	if (!sdp_bw_pattern_check(p, buf->head[0].iov_base, n))
		return false;
	left -= n;
	n = min(left, buf->page_len);
	if (!sdp_krpc_check_pages(p, buf->pages, buf->page_base, n))
		return false;
	left -= n;
	if (left > buf->tail[0].iov_len)
		return false;
	return sdp_bw_pattern_check(p, buf->tail[0].iov_base, left);
}

/* A stamp never straddles two pages. */
static_assert(PAGE_SIZE % SDP_BW_STAMP_EVERY == 0);

/* Stamps block (@stream, @seq) of @len bytes in @pages, from byte 0. */
static inline void sdp_krpc_stamp_pages(struct page **pages, u32 len,
					u32 stream, u32 seq)
{
	u32 i, off;
	void *addr;
	u64 w;

	for (i = 0; i < sdp_bw_stamps(len); i++) {
		off = i * SDP_BW_STAMP_EVERY;
		w = sdp_bw_stamp(stream, seq, i);
		addr = kmap_local_page(pages[off >> PAGE_SHIFT]);
		memcpy(addr + (off & ~PAGE_MASK), &w, 8);
		kunmap_local(addr);
	}
}

/* Whether @buf (buf->len bytes) holds the stamps of block (@stream, @seq). */
static inline bool sdp_krpc_stamps_ok(const struct xdr_buf *buf, u32 stream,
				      u32 seq)
{
	u32 i;
	u64 w;

	for (i = 0; i < sdp_bw_stamps(buf->len); i++)
		if (read_bytes_from_xdr_buf(buf, i * SDP_BW_STAMP_EVERY,
					    &w, sizeof(w)) ||
		    w != sdp_bw_stamp(stream, seq, i))
			return false;
	return true;
}

#endif
