/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RPC bandwidth program: procedures that carry a block each way, the
 * receiver checking its content, as in the paper's RPC bandwidth tests.
 * Shared by the libtirpc client and server.  Header-only.
 *
 * A block of stream S, sequence number N is a pseudo-random pattern
 * seeded by (S, N), so whoever receives it checks it without a copy of
 * what was sent.
 */
#ifndef SDP_RPC_BW_H
#define SDP_RPC_BW_H

#include <stdint.h>
#include <string.h>
#include <rpc/rpc.h>

#define SDP_BW_PROG	0x20005344	/* a number from the user range */
#define SDP_BW_VERS	1

#define SDP_BW_NULL	0
#define SDP_BW_WRITE	1	/* block to the server: u32 0 if intact */
#define SDP_BW_READ	2	/* block from the server, client checks */
#define SDP_BW_STATS	3	/* what the server received so far */
#define SDP_BW_NETID	4	/* the netid of the server's transport */

#define SDP_BW_MAX_BLOCK	(4u << 20)

/* An XDR routine as libtirpc's calls take it (their prototypes vary). */
#define SDP_XDR(f)	((xdrproc_t)(void (*)(void))(f))

struct sdp_bw_block {
	uint32_t stream;
	uint32_t seq;
	uint32_t len;
	char *data;
};

struct sdp_bw_read_args {
	uint32_t stream;
	uint32_t seq;
	uint32_t len;
};

struct sdp_bw_stats {
	uint64_t blocks;	/* WRITE blocks received intact */
	uint64_t bad_blocks;	/* WRITE blocks whose content was wrong */
	uint64_t bytes;		/* payload of the intact ones */
};

static inline uint32_t sdp_bw_seed(uint32_t stream, uint32_t seq)
{
	uint32_t x = stream * 2654435761u ^ seq * 40503u ^ 0x9e3779b9u;

	return x ? x : 1;
}

/* xorshift32: the next word of the pattern. */
static inline uint32_t sdp_bw_next(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static inline void sdp_bw_fill(char *buf, uint32_t len, uint32_t stream,
			       uint32_t seq)
{
	uint32_t x = sdp_bw_seed(stream, seq), w, i;

	for (i = 0; i + 4 <= len; i += 4) {
		w = sdp_bw_next(&x);
		memcpy(buf + i, &w, 4);
	}
	w = sdp_bw_next(&x);
	memcpy(buf + i, &w, len - i);
}

/* 1 if @buf holds block (@stream, @seq) of @len bytes. */
static inline int sdp_bw_intact(const char *buf, uint32_t len,
				uint32_t stream, uint32_t seq)
{
	uint32_t x = sdp_bw_seed(stream, seq), w, i;

	for (i = 0; i + 4 <= len; i += 4) {
		w = sdp_bw_next(&x);
		if (memcmp(buf + i, &w, 4))
			return 0;
	}
	w = sdp_bw_next(&x);
	return !memcmp(buf + i, &w, len - i);
}

static inline bool_t xdr_sdp_bw_block(XDR *xdrs, struct sdp_bw_block *b)
{
	u_int len = b->len;

	if (!xdr_u_int32_t(xdrs, &b->stream) || !xdr_u_int32_t(xdrs, &b->seq))
		return FALSE;
	if (!xdr_bytes(xdrs, &b->data, &len, SDP_BW_MAX_BLOCK))
		return FALSE;
	b->len = len;
	return TRUE;
}

static inline bool_t xdr_sdp_bw_read_args(XDR *xdrs,
					  struct sdp_bw_read_args *a)
{
	return xdr_u_int32_t(xdrs, &a->stream) &&
	       xdr_u_int32_t(xdrs, &a->seq) && xdr_u_int32_t(xdrs, &a->len);
}

static inline bool_t xdr_sdp_bw_stats(XDR *xdrs, struct sdp_bw_stats *s)
{
	return xdr_u_int64_t(xdrs, &s->blocks) &&
	       xdr_u_int64_t(xdrs, &s->bad_blocks) &&
	       xdr_u_int64_t(xdrs, &s->bytes);
}

#endif
