/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RPC bandwidth program on libtirpc: its XDR routines, shared by the
 * libtirpc client and server.  The program itself and the content of a
 * block are in sdp_bw_proto.h, shared with the kernel's ends (kmod-rpc-bw/).
 * Header-only.
 */
#ifndef SDP_RPC_BW_H
#define SDP_RPC_BW_H

#include <stdint.h>
#include <rpc/rpc.h>

#include "sdp_bw_proto.h"	/* the program, its procedures, the pattern */

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
