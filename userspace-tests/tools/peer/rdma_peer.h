/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdma_peer: an SDP peer of our own on host A, for the tools that play a
 * malicious one (sdp_hostile, sdp_wirefuzz).  Its own RDMA CM id, PD, CQ
 * and RC QP (librdmacm, libibverbs), not the SDP module's: it sends what
 * its caller builds, valid or not, to an SDP listener on host B.
 *
 * Single-threaded: one thread drives a peer.  Every wait is bounded.
 */
#ifndef RDMA_PEER_H
#define RDMA_PEER_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* The wire format, as kmod/sdp_wire.h has it. */
struct bsdh {
	uint8_t mid;
	uint8_t flags;
	uint16_t bufs;
	uint32_t len;
	uint32_t mseq;
	uint32_t mseq_ack;
} __attribute__((packed));

struct hh {
	uint8_t majv_minv;
	uint8_t ipv_cap;
	uint8_t rsvd1;
	uint8_t max_adverts;
	uint32_t des_rem_rcv_sz;
	uint32_t local_rcv_sz;
	uint16_t local_port;
	uint16_t rsvd2;
} __attribute__((packed));

struct hah {
	uint8_t majv_minv;
	uint8_t ipv_cap;
	uint8_t rsvd1;
	uint8_t ext_max_adverts;
	uint32_t act_rcv_sz;
} __attribute__((packed));

struct hello {
	struct bsdh bsdh;
	struct hh hh;
} __attribute__((packed));

struct hello_ack {
	struct bsdh bsdh;
	struct hah hah;
} __attribute__((packed));

/* SrcAvail's extended header */
struct srcah {
	uint32_t len;
	uint32_t rkey;
	uint64_t vaddr;
} __attribute__((packed));

#define MID_HELLO	0x00
#define MID_HELLO_ACK	0x01
#define MID_DISCONN	0x02
#define MID_ABORT_CONN	0x03
#define MID_SEND_SM	0x04
#define MID_RDMA_RD_COMPL 0x06
#define MID_SRC_CANCEL	0x08
#define MID_CH_RCV_BUF	0x0b
#define MID_SINK_AVAIL	0xfd
#define MID_SRC_AVAIL	0xfe
#define MID_DATA	0xff
#define MAJV_MINV	0x22
#define CAP_READ_ZCOPY	0x01	/* the low nibble of IPV/Cap */

#define RX_N		32		/* our receive buffers ... */
#define RX_SIZE		16384		/* ... of this size */
#define TX_N		64		/* send slots ... */
#define TX_SIZE		(65536 + 4096)	/* ... of this size: more than a 64 KiB buffer */
#define WAIT_MS		20000		/* the bound of every wait */

/* What a tool says: "TOOL: CASE: ok|FAIL: peer ADDR: ..." on stdout. */
extern const char *tool_name;
extern const char *case_name;
extern char peer_name[64];	/* host A's address:port, as host B sees it */
extern int failed;
extern int quiet_pass;		/* pass() says nothing */

int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pass(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int left_ms(long deadline);

struct peer;
/* Called for each message from the SDP side, @len bytes at @msg. */
typedef void (*peer_msg_fn)(struct peer *p, const char *msg, uint32_t len);

/* The malicious peer: its CM id and verbs objects, and what it saw. */
struct peer {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *mem;		/* RX_N receive buffers, TX_N send slots, extra */
	size_t extra;		/* bytes of extra (peer_extra()) */
	int qp;			/* rdma_create_qp() succeeded */
	struct ibv_qp *own_qp;	/* no_rtu: a QP of ours, not the CM id's */
	struct ibv_qp *ibqp;	/* the QP in use: the id's or own_qp */
	int no_rtu;		/* connect with own_qp, never send the RTU */
	int repost;		/* receive buffers go back once read */
	peer_msg_fn on_msg;	/* (if set) */
	void *ctx;		/* the caller's */

	/* CM events */
	int addr_resolved, route_resolved;
	int established, responded, rejected, disconnected, other_event;
	int reject_status;
	enum rdma_cm_event_type last_event;
	int events;		/* CM events taken */
	struct hello_ack ack;

	/* messages */
	uint32_t tx_mseq;	/* MSeq of our last message */
	uint32_t rx_mseq;	/* MSeq of the last message from the SDP side */
	unsigned int tx_posted, tx_done, tx_errors, rx_done, rx_errors;
	unsigned int rx_posted;	/* receive buffers posted, in all */
	enum ibv_wc_status tx_status, rx_status;
	struct bsdh rx_last;	/* the last message from the SDP side */
	uint32_t src_len, src_rkey;	/* its last SrcAvail */
	uint64_t src_vaddr;
	int rx_srcavail;	/* a SrcAvail came */
	int rx_disconn;		/* a DisConn came from the SDP side */
};

const char *last_event(const struct peer *p);
int cm_event(struct peer *p, int ms);
void poll_cq(struct peer *p);
int pump_until(struct peer *p, const int *flag, long deadline);

char *tx_buf(struct peer *p, unsigned int i);
/* The extra memory, registered for remote read: peer_connect()'s @extra. */
char *peer_extra(struct peer *p);
uint32_t peer_extra_rkey(const struct peer *p);
int tx_room(struct peer *p);

/*
 * Sends one message: a BSDH with @mid, @len in its length field, our
 * next MSeq plus @mseq_skip, Bufs of the receive buffers we have posted,
 * then @payload_len bytes of @payload (zeros when NULL); @size bytes on
 * the wire in all.
 */
int send_msg(struct peer *p, uint8_t mid, uint32_t len, uint32_t size,
	     uint32_t mseq_skip, const void *payload, uint32_t payload_len);
/* Sends the @size bytes at @msg as they are (nothing filled in). */
int send_raw(struct peer *p, const void *msg, uint32_t size);
/* A well-formed Data message carrying @n bytes of @data. */
int send_data(struct peer *p, const char *data, uint32_t n);
/* An RDMA Read of @len bytes at @rkey/@vaddr into our next send slot. */
int post_read(struct peer *p, uint32_t rkey, uint64_t vaddr, uint32_t len);
/* The same into @dst, @len bytes of our extra memory. */
int post_read_to(struct peer *p, uint32_t rkey, uint64_t vaddr, uint32_t len,
		 char *dst);

int own_qp_to(struct peer *p, enum ibv_qp_state state);
/*
 * Resolves host B from host A, makes the verbs objects (with @extra bytes
 * beyond the buffers, which the SDP side may read), posts the receive
 * buffers and connects with @priv as the REQ's private data.  Returns
 * once the connection is established, rejected or (no_rtu) answered; 0,
 * or -1 (said why).
 */
int peer_connect(struct peer *p, int port, const void *priv,
		 uint8_t priv_len, size_t extra);
void peer_destroy(struct peer *p);

/* A valid Hello, as the module's own connect() sends it. */
void fill_hello(struct hello *h, int read_zcopy);
/* Checks the HelloAck in the REP's private data; 0, or -1 (said why). */
int check_ack(struct peer *p);

/* The SDP listener on host B; @rcvbuf (if not 0) before listen(). */
int sdp_listen(int port, int rcvbuf, int backlog);
/* Waits, at most WAIT_MS, for the listener's connection and accepts it. */
int sdp_accept(int lfd);

#endif
