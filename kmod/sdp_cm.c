// SPDX-License-Identifier: GPL-2.0
/*
 * SDP connection set-up and tear-down on the RDMA CM: address and route
 * resolution, the Hello / HelloAck exchange in the CM private data, the
 * passive side's children, and the CM events that end a connection.
 *
 * The CM calls sdp_cm_handler() in process context with the id's handler
 * mutex held; a non-zero return makes the CM destroy the id.  A handler
 * that ends a connection takes it out of the socket under the socket lock
 * (sdp_conn_take()) and frees it, and returns 1; if the connection is no
 * longer the socket's, its new owner is destroying it and the handler
 * leaves it alone.
 */
#include <linux/in.h>
#include <linux/slab.h>
#include <net/sock.h>

#include "sdp.h"
#include "sdp_wire.h"
#include "sdp_trace.h"

/* RDMA Reads in flight per connection, for zero-copy. */
#define SDP_RD_ATOM		4
/* The smallest receive buffer a peer may announce. */
#define SDP_MIN_RCV_SIZE	1024

/* The BSDH of a Hello or HelloAck: its Bufs are the buffers @sk posted. */
static void sdp_fill_bsdh(struct sdp_bsdh *bsdh, const struct sock *sk, u8 mid,
			  u32 len)
{
	memset(bsdh, 0, sizeof(*bsdh));
	bsdh->mid = mid;
	bsdh->bufs = htons(sdp_sk(sk)->rx_posted);
	bsdh->len = htonl(len);
}

static __be16 sdp_sockaddr_port(const struct sockaddr_storage *ss)
{
	/* sin_port and sin6_port sit at the same offset. */
	return ((const struct sockaddr_in *)ss)->sin_port;
}

static u8 sdp_ipv_cap(const struct rdma_cm_id *id)
{
	return (id->route.addr.src_addr.ss_family == AF_INET6 ? 6 : 4) << 4;
}

static void sdp_fill_conn_param(struct rdma_conn_param *param,
				const struct rdma_cm_id *id,
				const void *private_data, u8 len)
{
	const struct ib_device_attr *attrs = &id->device->attrs;

	memset(param, 0, sizeof(*param));
	param->private_data = private_data;
	param->private_data_len = len;
	param->responder_resources = min(attrs->max_qp_rd_atom, SDP_RD_ATOM);
	param->initiator_depth = min(attrs->max_qp_init_rd_atom, SDP_RD_ATOM);
	param->retry_count = sdp_retry_count;
	param->rnr_retry_count = 7;	/* 7: retry for ever */
}

/* Returns why a Hello is unacceptable, or NULL. */
static const char *sdp_hello_error(const struct rdma_cm_event *ev)
{
	const struct sdp_hello *hello = ev->param.conn.private_data;

	if (!hello || ev->param.conn.private_data_len < sizeof(*hello))
		return "short private data";
	if (hello->bsdh.mid != SDP_MID_HELLO)
		return "not a Hello";
	if (ntohl(hello->bsdh.len) < sizeof(*hello))
		return "bad length";
	if (SDP_MAJOR(hello->hh.majv_minv) != SDP_MAJOR(SDP_MAJV_MINV))
		return "unsupported version";
	if (!hello->hh.max_adverts)
		return "MaxAdverts 0";
	if (!hello->bsdh.bufs)
		return "no receive buffers";
	if (ntohl(hello->hh.local_rcv_sz) < SDP_MIN_RCV_SIZE)
		return "receive buffer too small";
	return NULL;
}

static const char *sdp_hello_ack_error(const struct rdma_cm_event *ev)
{
	const struct sdp_hello_ack *ack = ev->param.conn.private_data;

	if (!ack || ev->param.conn.private_data_len < sizeof(*ack))
		return "short private data";
	if (ack->bsdh.mid != SDP_MID_HELLO_ACK)
		return "not a HelloAck";
	if (SDP_MAJOR(ack->hah.majv_minv) != SDP_MAJOR(SDP_MAJV_MINV))
		return "unsupported version";
	if (!ack->bsdh.bufs)
		return "no receive buffers";
	if (ntohl(ack->hah.act_rcv_sz) < SDP_MIN_RCV_SIZE)
		return "receive buffer too small";
	return NULL;
}

/*
 * @sk's active open failed with @err (negative), its connection taken:
 * it goes TCP if it may (sdp_fb_connect()), else to TCP_CLOSE with the
 * error.  Socket lock held.
 */
void sdp_connect_failed(struct sock *sk, int err)
{
	sdp_stat_inc(sock_net(sk), SDP_MIB_OPEN_FAILS);
	err = sdp_fb_connect(sk, err);
	if (err) {
		sk->sk_shutdown = SHUTDOWN_MASK;
		sdp_set_error(sk, err);
	}
}

/*
 * Ends @sk's connection with @err (negative): the socket goes to TCP_CLOSE
 * and its callers see the error; so does a listener whose device went
 * away.  Takes the connection out of the socket and frees it, if it is
 * still the socket's and still on @id.  Returns what the CM handler
 * returns.
 */
static int sdp_cm_fail(struct sock *sk, struct rdma_cm_id *id, int err)
{
	struct sdp_conn *conn = NULL;

	lock_sock(sk);
	if (sdp_sk(sk)->conn && sdp_sk(sk)->conn->id == id)
		conn = sdp_conn_take(sk);
	if (conn && sk->sk_state == TCP_SYN_SENT) {
		sdp_connect_failed(sk, err);
	} else if (conn && sk->sk_state != TCP_CLOSE) {
		sk->sk_shutdown = SHUTDOWN_MASK;
		sdp_set_error(sk, err);
	}
	release_sock(sk);

	if (!conn)
		return 0;
	sdp_conn_destroy(conn, false);
	return 1;
}

/*
 * The peer disconnected or is unreachable: tear the connection down,
 * letting what already arrived be read.  An
 * unreachable peer is a timeout; the teardown tells a reset from an
 * orderly end otherwise.
 */
static int sdp_cm_disconnected(struct sock *sk, struct rdma_cm_id *id,
			       enum rdma_cm_event_type event)
{
	lock_sock(sk);
	if (sdp_sk(sk)->conn && sdp_sk(sk)->conn->id == id) {
		/* The CM is done with the connection: no DREP to wait for. */
		sdp_conn_cm_done(sdp_sk(sk)->conn);
		if (event == RDMA_CM_EVENT_UNREACHABLE)
			sdp_shutdown_with_error(sk, ETIMEDOUT);
		sdp_conn_teardown(sk, 0);
	}
	release_sock(sk);
	return 0;
}

/*
 * The RDMA device under @id is going away, and the CM waits for every id
 * on it before it goes.  Nothing more comes for this id, not even
 * DISCONNECTED, so the connection is reset and freed here, CM id included
 * (the return of 1 destroys it), not by the teardown work.  What arrived
 * before can still be read.  The DREQ tells the peer now, rather than
 * when its sends time out.  A connection whose teardown has begun belongs
 * to the teardown, which destroys the id soon.
 */
static int sdp_cm_device_removal(struct sock *sk, struct rdma_cm_id *id)
{
	struct sdp_conn *conn = NULL;

	lock_sock(sk);
	if (sdp_sk(sk)->conn && sdp_sk(sk)->conn->id == id) {
		/* A teardown under way waits for no DREP now. */
		sdp_conn_cm_done(sdp_sk(sk)->conn);
		conn = sdp_conn_take(sk);
	}
	if (conn) {
		sdp_stat_inc(sock_net(sk), SDP_MIB_RESETS);
		sdp_set_reset(sk);
		sdp_set_closed(sk);
	}
	release_sock(sk);

	if (!conn)
		return 0;
	sdp_conn_destroy(conn, false);
	return 1;
}

/*
 * A passive child that never got established, or whose listener is gone,
 * from a CM handler of its id: ended (sdp_child_end()), and the CM
 * destroys the id (returns 1) unless the connection's teardown owns it.
 */
static int sdp_child_abort(struct sock *sk)
{
	return sdp_child_end(sk, false) ? 1 : 0;
}

static int sdp_cm_addr_resolved(struct sock *sk, struct rdma_cm_id *id)
{
	int ret = 0;

	lock_sock(sk);
	if (sk->sk_state == TCP_SYN_SENT && sdp_sk(sk)->conn &&
	    sdp_sk(sk)->conn->id == id)
		ret = rdma_resolve_route(id, sdp_resolve_timeout_ms);
	release_sock(sk);
	return ret ? sdp_cm_fail(sk, id, ret) : 0;
}

static int sdp_cm_route_resolved(struct sock *sk, struct rdma_cm_id *id)
{
	struct rdma_conn_param param;
	struct sdp_hello hello;
	struct sdp_conn *conn;
	int ret = 0;

	lock_sock(sk);
	conn = sdp_sk(sk)->conn;
	if (sk->sk_state != TCP_SYN_SENT || !conn || conn->id != id)
		goto out;

	ret = sdp_conn_create_qp(conn, false);
	if (ret)
		goto out;

	sdp_fill_bsdh(&hello.bsdh, sk, SDP_MID_HELLO, sizeof(hello));
	memset(&hello.hh, 0, sizeof(hello.hh));
	hello.hh.majv_minv = SDP_MAJV_MINV;
	hello.hh.ipv_cap = sdp_ipv_cap(id) | sdp_conn_cap(sk);
	hello.hh.max_adverts = 1;
	hello.hh.des_rem_rcv_sz = htonl(sdp_rx_msg_max());
	hello.hh.local_rcv_sz = htonl(sdp_rx_msg_max());
	hello.hh.local_port = sdp_sockaddr_port(&id->route.addr.src_addr);
	sdp_fill_conn_param(&param, id, &hello, sizeof(hello));
	ret = rdma_connect_locked(id, &param);
out:
	release_sock(sk);
	return ret ? sdp_cm_fail(sk, id, ret) : 0;
}

static int sdp_cm_established(struct sock *sk, struct rdma_cm_id *id,
			      struct rdma_cm_event *ev)
{
	const struct sdp_hello_ack *ack = ev->param.conn.private_data;
	struct sdp_conn *conn;
	const char *bad;

	bad = sdp_hello_ack_error(ev);
	if (bad) {
		pr_warn_ratelimited("sdp: %pISpc: bad HelloAck (%s), aborting\n",
				    &id->route.addr.dst_addr, bad);
		return sdp_cm_fail(sk, id, -ECONNRESET);
	}

	lock_sock(sk);
	conn = sdp_sk(sk)->conn;
	if (sk->sk_state == TCP_SYN_SENT && conn && conn->id == id) {
		sdp_conn_start(sk, ntohs(ack->bsdh.bufs),
			       ntohl(ack->hah.act_rcv_sz),
			       ack->hah.ipv_cap & SDP_CAP_MASK);
		conn->established = true;
		sdp_fb_drop_spare(sk);
		sdp_set_local(sk, (struct sockaddr *)&id->route.addr.src_addr);
		sk->sk_state = TCP_ESTABLISHED;
		if (sk->sk_socket)
			sk->sk_socket->state = SS_CONNECTED;
		sdp_stat_inc(sock_net(sk), SDP_MIB_ACTIVE_OPENS);
		sdp_watchdog_arm(sk);
		trace_sdp_connect(sk);
		sk->sk_state_change(sk);
	}
	release_sock(sk);
	return 0;
}

/* The passive side: the RTU arrived; hand the child to the listener. */
static int sdp_child_established(struct sock *sk)
{
	struct sdp_conn *conn;
	bool queued = false;
	struct sock *lsk;

	lock_sock(sk);
	/*
	 * A child not in SYN_RECV with a live connection is its teardown's,
	 * which took it off its listener or will (sdp_teardown_finish()): a
	 * peer's malformed message before its RTU.  Only a listener read
	 * under the lock is still the child's.
	 */
	lsk = sdp_sk(sk)->parent;
	conn = sdp_sk(sk)->conn;
	if (!lsk || sk->sk_state != TCP_SYN_RECV || !conn || conn->dying) {
		release_sock(sk);
		return 0;
	}
	sk->sk_state = TCP_ESTABLISHED;
	conn->established = true;
	sdp_stat_inc(sock_net(sk), SDP_MIB_PASSIVE_OPENS);
	sdp_watchdog_arm(sk);
	trace_sdp_accept(sk);
	release_sock(sk);

	lock_sock(lsk);
	if (lsk->sk_state == TCP_LISTEN) {
		list_add_tail(&sdp_sk(sk)->accept_node,
			      &sdp_sk(lsk)->accept_queue);
		queued = true;
		lsk->sk_data_ready(lsk);
	}
	release_sock(lsk);

	return queued ? 0 : sdp_child_abort(sk);
}

/*
 * A connection request that the listeners' group (sdp_port.c) gave the
 * listener @lsk, for the new CM id @id: make a child socket for it, post
 * its first receive buffers and answer with HelloAck.  From here on the id's
 * events are the child's.  Any non-zero return rejects the request and
 * destroys @id.
 */
int sdp_cm_request(struct sock *lsk, struct rdma_cm_id *id,
		   struct rdma_cm_event *ev)
{
	const struct sdp_hello *hello = ev->param.conn.private_data;
	struct rdma_conn_param param;
	struct sdp_hello_ack ack;
	struct sdp_conn *conn;
	const char *bad;
	struct sock *sk;
	int ret;

	bad = sdp_hello_error(ev);
	if (bad) {
		pr_warn_ratelimited("sdp: %pISpc: bad Hello (%s), rejected\n",
				    &id->route.addr.dst_addr, bad);
		sdp_stat_inc(sock_net(lsk), SDP_MIB_BAD_HELLOS);
		return -EPROTO;
	}

	lock_sock(lsk);
	if (lsk->sk_state != TCP_LISTEN || sk_acceptq_is_full(lsk)) {
		sdp_stat_inc(sock_net(lsk), SDP_MIB_LISTEN_DROPS);
		release_sock(lsk);
		return -ECONNREFUSED;
	}
	sk = sdp_sk_alloc(sock_net(lsk), NULL, lsk->sk_kern_sock);
	if (!sk) {
		release_sock(lsk);
		return -ENOMEM;
	}
	sk_acceptq_added(lsk);
	sock_hold(lsk);
	sdp_sk(sk)->parent = lsk;
	sdp_inherit(sk, lsk);
	release_sock(lsk);

	lock_sock(sk);
	conn = sdp_conn_alloc(sk, id);
	if (IS_ERR(conn)) {
		release_sock(sk);
		sdp_child_abort(sk);
		return PTR_ERR(conn);
	}
	sdp_sk(sk)->conn = conn;
	id->context = sk;
	id->event_handler = sdp_cm_handler;	/* it had the group's */
	sdp_set_local(sk, (struct sockaddr *)&id->route.addr.src_addr);
	sdp_set_remote(sk, (struct sockaddr *)&id->route.addr.dst_addr);
	sk->sk_state = TCP_SYN_RECV;

	ret = sdp_conn_count(conn);
	if (!ret)
		ret = sdp_conn_create_qp(conn, true);
	if (!ret) {
		sdp_conn_start(sk, ntohs(hello->bsdh.bufs),
			       ntohl(hello->hh.local_rcv_sz),
			       hello->hh.ipv_cap & SDP_CAP_MASK);
		sdp_fill_bsdh(&ack.bsdh, sk, SDP_MID_HELLO_ACK, sizeof(ack));
		memset(&ack.hah, 0, sizeof(ack.hah));
		ack.hah.majv_minv = SDP_MAJV_MINV;
		ack.hah.ipv_cap = sdp_ipv_cap(id) | sdp_conn_cap(sk);
		ack.hah.ext_max_adverts = 1;
		ack.hah.act_rcv_sz = htonl(sdp_rx_msg_max());
		sdp_fill_conn_param(&param, id, &ack, sizeof(ack));
		param.responder_resources = min(param.responder_resources,
						ev->param.conn.initiator_depth);
		param.initiator_depth = min(param.initiator_depth,
					    ev->param.conn.responder_resources);
		ret = rdma_accept(id, &param);
	}
	release_sock(sk);

	if (ret) {
		sdp_child_abort(sk);
		return ret;
	}
	return 0;
}

static int sdp_cm_error(enum rdma_cm_event_type event, int status)
{
	switch (event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		/* No RDMA device serves the route, or nobody answers ARP/ND. */
		if (status == -ENODEV || status == -ENETUNREACH)
			return -ENETUNREACH;
		return -EHOSTUNREACH;
	case RDMA_CM_EVENT_UNREACHABLE:
		return -ETIMEDOUT;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return -ECONNREFUSED;
	default:
		return -ECONNRESET;
	}
}

int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sock *sk = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		return sdp_cm_addr_resolved(sk, id);
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		return sdp_cm_route_resolved(sk, id);
	case RDMA_CM_EVENT_ESTABLISHED:
		if (sdp_sk(sk)->parent)
			return sdp_child_established(sk);
		/* (a child its teardown took off the listener has no HelloAck) */
		if (READ_ONCE(sk->sk_state) != TCP_SYN_SENT)
			return 0;
		return sdp_cm_established(sk, id, ev);
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* A child that was never established was never accepted. */
		if (sdp_sk(sk)->parent && sk->sk_state == TCP_SYN_RECV)
			return sdp_child_abort(sk);
		if (sdp_connected(sk) &&
		    ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			return sdp_cm_device_removal(sk, id);
		if (sdp_connected(sk))
			return sdp_cm_disconnected(sk, id, ev->event);
		return sdp_cm_fail(sk, id, sdp_cm_error(ev->event, ev->status));
	default:
		return 0;
	}
}

/*
 * Starts an active open to @addr; the CM events carry it on.  Socket lock
 * held; the socket is in TCP_CLOSE.
 */
int sdp_cm_connect(struct sock *sk, const struct sockaddr *addr)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sockaddr_storage dst;
	int ret;

	if (!ssk->conn) {
		/* An earlier attempt failed and its CM id went with it. */
		ret = sdp_conn_new(sk);
		if (ret)
			return ret;
	}

	sdp_cm_sockaddr(addr, &dst);
	sdp_set_remote(sk, addr);
	if (!inet_sk(sk)->inet_num)
		ssk->addr_family = addr->sa_family;
	ret = sdp_conn_count(ssk->conn);
	if (ret)
		return ret;
	sk->sk_state = TCP_SYN_SENT;
	sdp_neigh_prime(sock_net(sk), (struct sockaddr *)&dst);
	/* SO_BINDTODEVICE: the route goes out of that device or VRF */
	ssk->conn->id->route.addr.dev_addr.bound_dev_if =
		READ_ONCE(sk->sk_bound_dev_if);
	ret = rdma_resolve_addr(ssk->conn->id, NULL, (struct sockaddr *)&dst,
				sdp_resolve_timeout_ms);
	if (ret)
		sk->sk_state = TCP_CLOSE;
	return ret;
}
