/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RPC bandwidth program as both ends speak it, user space (libtirpc:
 * sdp_rpc_bw.h) and kernel (kmod-rpc-bw/): the program, its procedures
 * and the content of a block.  Plain C, header-only.
 *
 * Procedures (XDR):
 *   NULL   void -> void
 *   WRITE  { u32 stream; u32 seq; opaque data<> } -> u32 (0: intact)
 *   READ   { u32 stream; u32 seq; u32 len } -> { u32 stream; u32 seq;
 *          opaque data<> }, the block (stream, seq) of len bytes
 *   STATS  void -> { u64 blocks; u64 bad_blocks; u64 bytes }: the WRITE
 *          blocks the server received intact, damaged, and the intact
 *          ones' payload
 *   NETID  void -> string: the netid of the server's end of the call
 *   WRITE_STAMPED  as WRITE, for a stamped block (below): the server
 *          checks its stamps, and counts it with WRITE's blocks
 *
 * A block of stream S, sequence number N is a pseudo-random pattern
 * seeded by (S, N): the 64-bit words of xorshift64 in host byte order
 * (the bed's hosts are alike), the last one cut short.  Whoever receives
 * a block checks it without a copy of what was sent, and a receiver that
 * gets it in pieces checks piece after piece (struct sdp_bw_pattern).
 */
#ifndef SDP_BW_PROTO_H
#define SDP_BW_PROTO_H

#ifdef __KERNEL__
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stddef.h>
#include <string.h>
#include <linux/types.h>
#endif

#define SDP_BW_PROG	0x20005344	/* a number from the user range */
#define SDP_BW_VERS	1

#define SDP_BW_NULL	0
#define SDP_BW_WRITE	1	/* block to the server: u32 0 if intact */
#define SDP_BW_READ	2	/* block from the server, client checks */
#define SDP_BW_STATS	3	/* what the server received so far */
#define SDP_BW_NETID	4	/* the netid of the server's transport */
#define SDP_BW_WRITE_STAMPED 5	/* as WRITE; the server checks the stamps */
#define SDP_BW_NPROCS	6

/* The largest block a libtirpc end takes; the kernel's take 1 MiB. */
#define SDP_BW_MAX_BLOCK	(4u << 20)
/* Room for a netid in NETID's reply ("sdp6" and the like). */
#define SDP_BW_NETID_MAX	16

static inline __u64 sdp_bw_seed(__u32 stream, __u32 seq)
{
	__u64 x = (__u64)stream * 0x9e3779b97f4a7c15ull ^
		  (__u64)seq * 0xbf58476d1ce4e5b9ull ^ 0x94d049bb133111ebull;

	return x ? x : 1;
}

/*
 * xorshift64: the next word of the pattern.  Words of 8 bytes take half
 * the steps of 4-byte ones: filling and checking a block is the
 * programs' own work, which one call at a time adds to every call.
 */
static inline __u64 sdp_bw_next(__u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Where a block's pattern is: the generator, and the word being used,
 * of which @used bytes went out already (8: none left).
 */
struct sdp_bw_pattern {
	__u64 x;
	__u64 word;
	unsigned int used;
};

static inline void sdp_bw_pattern_init(struct sdp_bw_pattern *p,
				       __u32 stream, __u32 seq)
{
	p->x = sdp_bw_seed(stream, seq);
	p->word = 0;
	p->used = 8;
}

/* The next byte of the pattern. */
static inline unsigned char sdp_bw_pattern_byte(struct sdp_bw_pattern *p)
{
	if (p->used == 8) {
		p->word = sdp_bw_next(&p->x);
		p->used = 0;
	}
	return ((const unsigned char *)&p->word)[p->used++];
}

/* Writes the next @len bytes of the pattern to @buf. */
static inline void sdp_bw_pattern_fill(struct sdp_bw_pattern *p, void *buf,
				       size_t len)
{
	unsigned char *b = buf;
	__u64 x, w;

	while (len && p->used != 8) {
		*b++ = sdp_bw_pattern_byte(p);
		len--;
	}
	x = p->x;
	for (; len >= 8; len -= 8, b += 8) {
		w = sdp_bw_next(&x);
		memcpy(b, &w, 8);
	}
	p->x = x;
	while (len--)
		*b++ = sdp_bw_pattern_byte(p);
}

/* 1 if the next @len bytes of the pattern are those at @buf, else 0. */
static inline int sdp_bw_pattern_check(struct sdp_bw_pattern *p,
				       const void *buf, size_t len)
{
	const unsigned char *b = buf;
	__u64 x, w, got;

	while (len && p->used != 8) {
		if (*b++ != sdp_bw_pattern_byte(p))
			return 0;
		len--;
	}
	x = p->x;
	for (; len >= 8; len -= 8, b += 8) {
		w = sdp_bw_next(&x);
		memcpy(&got, b, 8);
		if (got != w)
			return 0;
	}
	p->x = x;
	while (len--)
		if (*b++ != sdp_bw_pattern_byte(p))
			return 0;
	return 1;
}

/* Block (@stream, @seq) of @len bytes, to @buf. */
static inline void sdp_bw_fill(void *buf, __u32 len, __u32 stream, __u32 seq)
{
	struct sdp_bw_pattern p;

	sdp_bw_pattern_init(&p, stream, seq);
	sdp_bw_pattern_fill(&p, buf, len);
}

/* 1 if @buf holds block (@stream, @seq) of @len bytes. */
static inline int sdp_bw_intact(const void *buf, __u32 len, __u32 stream,
				__u32 seq)
{
	struct sdp_bw_pattern p;

	sdp_bw_pattern_init(&p, stream, seq);
	return sdp_bw_pattern_check(&p, buf, len);
}

/*
 * A stamped block (WRITE_STAMPED) carries an 8-byte stamp of (stream,
 * seq, i) at the start of its i-th SDP_BW_STAMP_EVERY bytes, where they
 * have room for one; its other bytes are whatever the sender's buffer
 * held (the programs fill it with a block of the pattern once).  The
 * bench moves stamped blocks: where the link is emulated on the CPUs that
 * run the programs, as on the bed, checking every byte of every block
 * takes its time from the link (one kernel call at a time, WRITE's fill
 * and check cost 2 to 13% of the bandwidth in the runs measured), which
 * a bandwidth figure should not count.  The stamps still catch a
 * block from another call, and a lost, repeated or misplaced piece of
 * one; the tests check every byte.
 */
#define SDP_BW_STAMP_EVERY	4096u

static inline __u64 sdp_bw_stamp(__u32 stream, __u32 seq, __u32 i)
{
	return sdp_bw_seed(stream, seq) + i;
}

/* The stamps a block of @len bytes carries: stamp i is at i * EVERY. */
static inline __u32 sdp_bw_stamps(__u32 len)
{
	return len < 8 ? 0 : (len - 8) / SDP_BW_STAMP_EVERY + 1;
}

/* Stamps block (@stream, @seq) of @len bytes at @buf. */
static inline void sdp_bw_stamp_put(void *buf, __u32 len, __u32 stream,
				    __u32 seq)
{
	unsigned char *b = buf;
	__u32 i;
	__u64 w;

	for (i = 0; i < sdp_bw_stamps(len); i++) {
		w = sdp_bw_stamp(stream, seq, i);
		memcpy(b + i * SDP_BW_STAMP_EVERY, &w, 8);
	}
}

/* 1 if @buf holds the stamps of block (@stream, @seq) of @len bytes. */
static inline int sdp_bw_stamps_ok(const void *buf, __u32 len, __u32 stream,
				   __u32 seq)
{
	const unsigned char *b = buf;
	__u32 i;
	__u64 w;

	for (i = 0; i < sdp_bw_stamps(len); i++) {
		memcpy(&w, b + i * SDP_BW_STAMP_EVERY, 8);
		if (w != sdp_bw_stamp(stream, seq, i))
			return 0;
	}
	return 1;
}

#endif
