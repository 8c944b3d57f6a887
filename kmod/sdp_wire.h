/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SDP wire format (IBTA Annex A4): the base header every message starts
 * with, and the Hello / HelloAck headers carried in the RDMA CM private
 * data.  All multi-byte fields are big-endian.
 */
#ifndef _SDP_WIRE_H
#define _SDP_WIRE_H

#include <linux/types.h>
#include <linux/build_bug.h>

/* Protocol version 2.2, as the annex and the OpenFabrics code use. */
#define SDP_MAJV_MINV		0x22
#define SDP_MAJOR(v)		((v) >> 4)

enum sdp_mid {
	SDP_MID_HELLO		= 0x00,
	SDP_MID_HELLO_ACK	= 0x01,
	SDP_MID_DISCONN		= 0x02,
	SDP_MID_ABORT_CONN	= 0x03,
	SDP_MID_SEND_SM		= 0x04,
	SDP_MID_RDMA_WR_COMPL	= 0x05,
	SDP_MID_RDMA_RD_COMPL	= 0x06,
	SDP_MID_MODE_CHANGE	= 0x07,
	SDP_MID_SRC_CANCEL	= 0x08,
	SDP_MID_SINK_CANCEL	= 0x09,
	SDP_MID_SINK_CANCEL_ACK	= 0x0a,
	SDP_MID_CH_RCV_BUF	= 0x0b,
	SDP_MID_CH_RCV_BUF_ACK	= 0x0c,
	SDP_MID_SUSP_COMM	= 0x0d,
	SDP_MID_SUSP_COMM_ACK	= 0x0e,
	SDP_MID_SINK_AVAIL	= 0xfd,
	SDP_MID_SRC_AVAIL	= 0xfe,
	SDP_MID_DATA		= 0xff,
};

/*
 * Capabilities, in the low nibble of the Hello's and HelloAck's IPV/Cap
 * byte, which the annex leaves to the implementation: the sender takes
 * part in read zero-copy (SrcAvail, RDMA Read, RdmaRdCompl,
 * SrcAvailCancel, SendSM).  A peer that does not set it never sees them.
 */
#define SDP_CAP_READ_ZCOPY	0x01
#define SDP_CAP_MASK		0x0f

#define SDP_FLAG_OOB_PRES	0x01
#define SDP_FLAG_OOB_PEND	0x02

/* Base Sockets Direct Header (BSDH). */
struct sdp_bsdh {
	u8	mid;
	u8	flags;
	__be16	bufs;
	__be32	len;
	__be32	mseq;
	__be32	mseq_ack;
} __packed;

/*
 * SrcAvail's extended header: the source's buffer, which the sink
 * RDMA-Reads.  We send no inline data after it, and take none.
 */
struct sdp_srcah {
	__be32	len;
	__be32	rkey;
	__be64	vaddr;
} __packed;

/* RdmaRdCompl's extended header: bytes of the SrcAvail the sink read. */
struct sdp_rrch {
	__be32	len;
} __packed;

/* The headers of one message we send: the BSDH and its extended header. */
struct sdp_msg_hdr {
	struct sdp_bsdh		bsdh;
	union {
		struct sdp_srcah	srcah;
		struct sdp_rrch		rrch;
	};
} __packed;

/*
 * Hello Header.  The annex follows LocalPort with a reserved field and
 * then the source and destination IP addresses.  With RDMA_PS_TCP the RDMA
 * CM puts its own header, which carries both addresses and ports, before
 * the 56 bytes of REQ private data left to us, so we send the Hello only up
 * to and including the reserved field after LocalPort.
 */
struct sdp_hh {
	u8	majv_minv;
	u8	ipv_cap;	/* IP version in the high nibble */
	u8	rsvd1;
	u8	max_adverts;
	__be32	des_rem_rcv_sz;
	__be32	local_rcv_sz;
	__be16	local_port;
	__be16	rsvd2;
} __packed;

/* HelloAck Header. */
struct sdp_hah {
	u8	majv_minv;
	u8	ipv_cap;
	u8	rsvd1;
	u8	ext_max_adverts;
	__be32	act_rcv_sz;
} __packed;

struct sdp_hello {
	struct sdp_bsdh	bsdh;
	struct sdp_hh	hh;
} __packed;

struct sdp_hello_ack {
	struct sdp_bsdh	bsdh;
	struct sdp_hah	hah;
} __packed;

static_assert(sizeof(struct sdp_bsdh) == 16);
static_assert(sizeof(struct sdp_srcah) == 16);
static_assert(sizeof(struct sdp_hello) == 32);
static_assert(sizeof(struct sdp_hello_ack) == 24);

#endif /* _SDP_WIRE_H */
