// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_peer: an SDP peer of our own on host A (rdma_peer.h says what for).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>

#include "sdp_hosts.h"
#include "rdma_peer.h"

_Static_assert(sizeof(struct bsdh) == 16, "BSDH");
_Static_assert(sizeof(struct hello) == 32, "Hello");
_Static_assert(sizeof(struct hello_ack) == 24, "HelloAck");
_Static_assert(sizeof(struct srcah) == 16, "SrcAvail header");

#define CQ_SIZE		(RX_N + TX_N + 8)
#define RESOLVE_MS	5000

const char *tool_name = "rdma_peer";
const char *case_name = "?";
char peer_name[64] = "10.99.0.1:?";
int failed;
int quiet_pass;

static void say(const char *verdict, const char *fmt, va_list ap)
{
	printf("%s: %s: %s: peer %s: ", tool_name, case_name, verdict,
	       peer_name);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

/* The one line saying what went wrong; returns -1 for the caller's return. */
int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("FAIL", fmt, ap);
	va_end(ap);
	failed = 1;
	return -1;
}

void pass(const char *fmt, ...)
{
	va_list ap;

	if (quiet_pass)
		return;
	va_start(ap, fmt);
	say("ok", fmt, ap);
	va_end(ap);
}

int left_ms(long deadline)
{
	long left = deadline - now_ms();

	return left > 0 ? (int)left : 0;
}

static char *rx_buf(struct peer *p, int i)
{
	return p->mem + (size_t)i * RX_SIZE;
}

char *tx_buf(struct peer *p, unsigned int i)
{
	return p->mem + (size_t)RX_N * RX_SIZE + (size_t)(i % TX_N) * TX_SIZE;
}

char *peer_extra(struct peer *p)
{
	return p->mem + (size_t)RX_N * RX_SIZE + (size_t)TX_N * TX_SIZE;
}

uint32_t peer_extra_rkey(const struct peer *p)
{
	return p->mr->rkey;
}

/* Whether a send slot is free (after reaping completions). */
int tx_room(struct peer *p)
{
	poll_cq(p);
	return p->tx_posted - p->tx_done < TX_N;
}

const char *last_event(const struct peer *p)
{
	return p->events ? rdma_event_str(p->last_event) : "none";
}

/* Takes one CM event, if one comes within @ms.  0, or -1 on error. */
int cm_event(struct peer *p, int ms)
{
	struct pollfd pfd = { .fd = p->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	size_t n;

	if (poll(&pfd, 1, ms) <= 0)
		return 0;
	if (rdma_get_cm_event(p->ch, &ev)) {
		if (errno == EAGAIN)
			return 0;
		return fail("rdma_get_cm_event: %s", strerror(errno));
	}
	p->last_event = ev->event;
	p->events++;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_CONNECT_RESPONSE:	/* (no_rtu: the REP) */
		if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
			p->established = 1;
		else
			p->responded = 1;
		n = ev->param.conn.private_data_len;
		if (n > sizeof(p->ack))
			n = sizeof(p->ack);
		memset(&p->ack, 0, sizeof(p->ack));
		if (ev->param.conn.private_data)
			memcpy(&p->ack, ev->param.conn.private_data, n);
		break;
	case RDMA_CM_EVENT_REJECTED:
		p->rejected = 1;
		p->reject_status = ev->status;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		p->disconnected = 1;
		break;
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		p->addr_resolved = 1;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		p->route_resolved = 1;
		break;
	default:
		p->other_event = ev->event;
		break;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

static int post_recv(struct peer *p, int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rx_buf(p, i),
		.length = RX_SIZE,
		.lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(p->ibqp, &wr, &bad))
		return -1;
	p->rx_posted++;
	return 0;
}

/* A message from the SDP side, in receive buffer @i. */
static void rx_msg(struct peer *p, int i, uint32_t byte_len)
{
	const char *msg = rx_buf(p, i);

	p->rx_done++;
	memcpy(&p->rx_last, msg, sizeof(p->rx_last));
	p->rx_mseq = ntohl(p->rx_last.mseq);
	if (p->rx_last.mid == MID_DISCONN)
		p->rx_disconn = 1;
	if (p->rx_last.mid == MID_SRC_AVAIL) {
		struct srcah s;

		memcpy(&s, msg + sizeof(struct bsdh), sizeof(s));
		p->src_len = ntohl(s.len);
		p->src_rkey = ntohl(s.rkey);
		p->src_vaddr = be64toh(s.vaddr);
		p->rx_srcavail = 1;
	}
	if (p->on_msg)
		p->on_msg(p, msg, byte_len);
	if (p->repost)
		post_recv(p, i);	/* (fails only once the QP is gone) */
}

/* Reaps completions: our sends, and the SDP side's messages. */
void poll_cq(struct peer *p)
{
	struct ibv_wc wc[16];
	int n, i;

	if (!p->cq)
		return;
	while ((n = ibv_poll_cq(p->cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			/* (opcode is not set in an error completion) */
			if (wc[i].wr_id >= RX_N) {
				p->tx_done++;
				if (wc[i].status != IBV_WC_SUCCESS &&
				    !p->tx_errors++)
					p->tx_status = wc[i].status;
				continue;
			}
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (wc[i].status != IBV_WC_WR_FLUSH_ERR &&
				    !p->rx_errors++)
					p->rx_status = wc[i].status;
				continue;
			}
			rx_msg(p, wc[i].wr_id, wc[i].byte_len);
		}
	}
}

/* CM events and completions until *@flag is set or @deadline passes. */
int pump_until(struct peer *p, const int *flag, long deadline)
{
	while (!*flag) {
		int ms = left_ms(deadline);

		poll_cq(p);
		if (!ms)
			return -1;
		if (cm_event(p, ms < 20 ? ms : 20))
			return -1;
	}
	poll_cq(p);
	return 0;
}

/* Posts @len bytes at @buf (in our MR) as @opcode. */
static int post_tx(struct peer *p, enum ibv_wr_opcode opcode, char *buf,
		   uint32_t len, uint32_t rkey, uint64_t vaddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = RX_N + p->tx_posted,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = vaddr, .rkey = rkey },
	};
	struct ibv_send_wr *bad;

	if (ibv_post_send(p->ibqp, &wr, &bad))
		return fail("ibv_post_send (%s): %s",
			    opcode == IBV_WR_SEND ? "send" : "RDMA Read",
			    strerror(errno));
	p->tx_posted++;
	return 0;
}

/* The next send slot, @size bytes of it, zeroed; NULL when none is free. */
static char *next_slot(struct peer *p, uint32_t size, const char *what)
{
	char *buf;

	if (size > TX_SIZE || !tx_room(p)) {
		fail("%s: no room", what);
		return NULL;
	}
	buf = tx_buf(p, p->tx_posted);
	memset(buf, 0, size);
	return buf;
}

int send_msg(struct peer *p, uint8_t mid, uint32_t len, uint32_t size,
	     uint32_t mseq_skip, const void *payload, uint32_t payload_len)
{
	char *buf = next_slot(p, size, "send_msg");
	struct bsdh *b = (struct bsdh *)buf;

	if (!buf)
		return -1;
	b->mid = mid;
	b->bufs = htons(p->rx_posted - p->rx_done);	/* posted, not yet taken */
	b->len = htonl(len);
	b->mseq = htonl(p->tx_mseq + 1 + mseq_skip);
	b->mseq_ack = htonl(p->rx_mseq);
	if (payload && payload_len)
		memcpy(buf + sizeof(*b), payload, payload_len);
	if (post_tx(p, IBV_WR_SEND, buf, size, 0, 0))
		return -1;
	p->tx_mseq += 1 + mseq_skip;
	return 0;
}

int send_raw(struct peer *p, const void *msg, uint32_t size)
{
	char *buf = next_slot(p, size, "send_raw");

	if (!buf)
		return -1;
	memcpy(buf, msg, size);
	if (post_tx(p, IBV_WR_SEND, buf, size, 0, 0))
		return -1;
	p->tx_mseq++;
	return 0;
}

int send_data(struct peer *p, const char *data, uint32_t n)
{
	return send_msg(p, MID_DATA, sizeof(struct bsdh) + n,
			sizeof(struct bsdh) + n, 0, data, n);
}

int post_read(struct peer *p, uint32_t rkey, uint64_t vaddr, uint32_t len)
{
	char *buf = next_slot(p, len, "post_read");

	if (!buf)
		return -1;
	return post_tx(p, IBV_WR_RDMA_READ, buf, len, rkey, vaddr);
}

int post_read_to(struct peer *p, uint32_t rkey, uint64_t vaddr, uint32_t len,
		 char *dst)
{
	if (!tx_room(p))
		return fail("post_read_to: no room");
	memset(dst, 0, len);
	return post_tx(p, IBV_WR_RDMA_READ, dst, len, rkey, vaddr);
}

void peer_destroy(struct peer *p)
{
	if (p->id && p->qp)
		rdma_destroy_qp(p->id);
	if (p->own_qp)
		ibv_destroy_qp(p->own_qp);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
	free(p->mem);
	memset(p, 0, sizeof(*p));
}

/* Moves own_qp to @state with the attributes the CM id gives for it. */
int own_qp_to(struct peer *p, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };
	int mask;

	if (rdma_init_qp_attr(p->id, &attr, &mask))
		return fail("rdma_init_qp_attr(%d): %s", state, strerror(errno));
	if (ibv_modify_qp(p->own_qp, &attr, mask))
		return fail("ibv_modify_qp(%d): %s", state, strerror(errno));
	return 0;
}

/* Waits for the CM's answer to rdma_resolve_addr() or _route(). */
static int wait_resolved(struct peer *p, const int *flag, const char *what)
{
	long deadline = now_ms() + RESOLVE_MS + 2000;

	while (!*flag) {
		if (!left_ms(deadline) || p->other_event)
			return fail("%s not resolved (event %s)", what,
				    last_event(p));
		if (cm_event(p, left_ms(deadline)))
			return -1;
	}
	return 0;
}

/* The PD, CQ, memory and QP, and the receive buffers posted. */
static int make_verbs(struct peer *p, size_t extra, struct rdma_conn_param *param)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = {
			.max_send_wr = TX_N,
			.max_recv_wr = RX_N,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	size_t memsize = (size_t)RX_N * RX_SIZE + (size_t)TX_N * TX_SIZE + extra;
	int i;

	p->pd = ibv_alloc_pd(p->id->verbs);
	if (!p->pd)
		return fail("ibv_alloc_pd: %s", strerror(errno));
	p->cq = ibv_create_cq(p->id->verbs, CQ_SIZE, NULL, NULL, 0);
	if (!p->cq)
		return fail("ibv_create_cq: %s", strerror(errno));
	p->mem = calloc(1, memsize);
	if (!p->mem)
		return fail("out of memory");
	p->extra = extra;
	p->mr = ibv_reg_mr(p->pd, p->mem, memsize, IBV_ACCESS_LOCAL_WRITE |
			   (extra ? IBV_ACCESS_REMOTE_READ : 0));
	if (!p->mr)
		return fail("ibv_reg_mr: %s", strerror(errno));
	attr.send_cq = p->cq;
	attr.recv_cq = p->cq;
	if (p->no_rtu) {
		/* a QP the CM does not drive: we move it, and send no RTU */
		p->own_qp = ibv_create_qp(p->pd, &attr);
		if (!p->own_qp)
			return fail("ibv_create_qp: %s", strerror(errno));
		p->ibqp = p->own_qp;
		if (own_qp_to(p, IBV_QPS_INIT))
			return -1;
		param->qp_num = p->own_qp->qp_num;
	} else {
		if (rdma_create_qp(p->id, p->pd, &attr))
			return fail("rdma_create_qp: %s", strerror(errno));
		p->qp = 1;
		p->ibqp = p->id->qp;
	}
	for (i = 0; i < RX_N; i++)
		if (post_recv(p, i))
			return fail("ibv_post_recv: %s", strerror(errno));
	return 0;
}

int peer_connect(struct peer *p, int port, const void *priv,
		 uint8_t priv_len, size_t extra)
{
	struct sockaddr_storage src, dst;
	struct rdma_conn_param param = {
		.private_data = priv,
		.private_data_len = priv_len,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	long deadline;
	int flags;

	p->ch = rdma_create_event_channel();
	if (!p->ch)
		return fail("rdma_create_event_channel: %s", strerror(errno));
	flags = fcntl(p->ch->fd, F_GETFL);
	if (flags < 0 || fcntl(p->ch->fd, F_SETFL, flags | O_NONBLOCK))
		return fail("fcntl: %s", strerror(errno));
	if (rdma_create_id(p->ch, &p->id, NULL, RDMA_PS_TCP))
		return fail("rdma_create_id: %s", strerror(errno));

	sdp_host_addr(&src, AF_INET, 'A', 0);
	sdp_host_addr(&dst, AF_INET, 'B', port);
	if (rdma_resolve_addr(p->id, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, RESOLVE_MS))
		return fail("rdma_resolve_addr: %s", strerror(errno));
	if (wait_resolved(p, &p->addr_resolved, "address"))
		return -1;
	if (rdma_resolve_route(p->id, RESOLVE_MS))
		return fail("rdma_resolve_route: %s", strerror(errno));
	if (wait_resolved(p, &p->route_resolved, "route"))
		return -1;
	snprintf(peer_name, sizeof(peer_name), "%s:%u", SDP_A4,
		 ntohs(rdma_get_src_port(p->id)));

	if (make_verbs(p, extra, &param))
		return -1;
	if (rdma_connect(p->id, &param))
		return fail("rdma_connect: %s", strerror(errno));
	deadline = now_ms() + WAIT_MS;
	while (!p->established && !p->responded && !p->rejected) {
		if (!left_ms(deadline) || p->other_event)
			return fail("no answer to the connection request (event %s)",
				    last_event(p));
		if (cm_event(p, left_ms(deadline)))
			return -1;
	}
	return 0;
}

void fill_hello(struct hello *h, int read_zcopy)
{
	memset(h, 0, sizeof(*h));
	h->bsdh.mid = MID_HELLO;
	h->bsdh.bufs = htons(RX_N);
	h->bsdh.len = htonl(sizeof(*h));
	h->hh.majv_minv = MAJV_MINV;
	h->hh.ipv_cap = 4 << 4;
	if (read_zcopy)
		h->hh.ipv_cap |= CAP_READ_ZCOPY;
	h->hh.max_adverts = 1;
	h->hh.des_rem_rcv_sz = htonl(RX_SIZE);
	h->hh.local_rcv_sz = htonl(RX_SIZE);
	/* LocalPort stays 0: the CM's header carries the ports. */
}

int check_ack(struct peer *p)
{
	const struct hello_ack *a = &p->ack;

	if (a->bsdh.mid != MID_HELLO_ACK)
		return fail("HelloAck with mid 0x%02x, want 0x01", a->bsdh.mid);
	if (!ntohs(a->bsdh.bufs))
		return fail("HelloAck with bufs 0");
	if (a->hah.majv_minv != MAJV_MINV)
		return fail("HelloAck with MajV/MinV 0x%02x", a->hah.majv_minv);
	return 0;
}

int sdp_listen(int port, int rcvbuf, int backlog)
{
	struct sockaddr_storage b;
	socklen_t blen = sdp_host_addr(&b, AF_INET, 'B', port);
	int one = 1, fd = socket(AF_INET_SDP, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return fail("SDP socket: %s", strerror(errno));
	if ((rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				  sizeof(rcvbuf))) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&b, blen) || listen(fd, backlog)) {
		fail("SDP listener on %s:%d: %s", SDP_B4, port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int sdp_accept(int lfd)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int fd;

	if (poll(&pfd, 1, WAIT_MS) <= 0)
		return fail("nothing to accept on the SDP listener within %d ms",
			    WAIT_MS);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		fail("accept: %s", strerror(errno));
	return fd;
}
