/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: the socket, its RDMA resources and the
 * functions the files of the module share.
 */
#ifndef _SDP_H
#define _SDP_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <net/inet_sock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <uapi/linux/sdp.h>

/* One posted receive buffer. */
struct sdp_rx_buf {
	void		*data;
	u64		dma;
	struct ib_cqe	cqe;
};

/**
 * struct sdp_conn - the RDMA side of one connection
 * @sk: the socket it belongs to; a connection never outlives its socket
 * @id: the RDMA CM id; owns the QP
 * @pd: protection domain
 * @cq: one completion queue for sends and receives
 * @rx_ring: the receive buffers, sdp_rx_ring_size of them
 * @peer_bufs: the Bufs of the peer's Hello / HelloAck: our initial credits
 * @peer_rcv_size: the receive buffer size the peer announced
 *
 * Whoever takes the pointer out of sdp_sock.conn under the socket lock
 * owns the connection and tears it down; the completion handler holds
 * the connection, not the socket, as its context.
 */
struct sdp_conn {
	struct sock		*sk;
	struct rdma_cm_id	*id;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	struct sdp_rx_buf	*rx_ring;
	u16			peer_bufs;
	u32			peer_rcv_size;
};

/**
 * struct sdp_sock - an AF_INET_SDP socket
 * @isk: the inet socket; sk_state holds TCP state numbers
 * @node: entry in sdp_sock_list, for /proc/net/sdp
 * @conn: the RDMA connection; NULL once torn down
 * @addr_family: AF_INET or AF_INET6: the family of the addresses the
 *	socket was bound or connected with, and so of getname() results
 * @bound: bind() succeeded; a new CM id is bound to the same address
 * @accept_queue: listener: children that are established and not yet
 *	accepted
 * @accept_node: child: entry in the listener's accept_queue
 * @parent: child: the listener, referenced, until accept() takes the child
 *
 * Locking: the socket lock (lock_sock) serialises everything a socket
 * call and the RDMA CM event handler do to the socket: sk_state, @conn
 * and the verbs objects in it, the listener's @accept_queue and
 * sk_ack_backlog.  The CM handler runs in process context with the CM
 * id's handler mutex held and takes the socket lock inside it; so the
 * socket calls never call into the CM while holding the socket lock in a
 * way that waits for a handler (rdma_destroy_id()).  A child's handler
 * may take the listener's socket lock while holding the child's: lock
 * order is child, then listener.
 *
 * Lifetime: sk_alloc() gives the reference that the owner holds: the
 * struct socket for a user socket; the CM id for a passive child until
 * it is established; the listener's accept queue after that.  A CM
 * handler never outlives the socket: every path that frees the socket
 * first destroys the CM id, which waits for the running handler, and
 * SOCK_DEAD (set under the socket lock) stops a handler from creating
 * anything new once teardown has begun.
 */
struct sdp_sock {
	struct inet_sock	isk;
	struct list_head	node;
	struct sdp_conn		*conn;
	sa_family_t		addr_family;
	bool			bound;
	struct list_head	accept_queue;
	struct list_head	accept_node;
	struct sock		*parent;
};

static inline struct sdp_sock *sdp_sk(const struct sock *sk)
{
	return (struct sdp_sock *)sk;
}

/* Module parameters (af_sdp.c). */
extern unsigned int sdp_rx_ring_size;
extern unsigned int sdp_rx_buf_size;
extern unsigned int sdp_tx_ring_size;
extern unsigned int sdp_resolve_timeout_ms;
extern unsigned int sdp_retry_count;

/* af_sdp.c */
struct sock *sdp_sk_alloc(struct net *net, struct socket *sock, int kern);
int sdp_conn_new(struct sock *sk);
void sdp_set_error(struct sock *sk, int err);

/* sdp_addr.c */
int sdp_check_sockaddr(const struct sockaddr *addr, int len);
void sdp_cm_sockaddr(const struct sockaddr *addr, struct sockaddr_storage *ss);
void sdp_set_local(struct sock *sk, const struct sockaddr *addr);
void sdp_set_remote(struct sock *sk, const struct sockaddr *addr);
int sdp_fill_sockaddr(const struct sock *sk, struct sockaddr *addr, bool peer);

/* sdp_cm.c */
int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event);
int sdp_cm_connect(struct sock *sk, const struct sockaddr *addr);

/* sdp_conn.c */
struct sdp_conn *sdp_conn_alloc(struct sock *sk, struct rdma_cm_id *id);
int sdp_conn_create_qp(struct sdp_conn *conn);
void sdp_conn_free_verbs(struct sdp_conn *conn);
void sdp_conn_destroy(struct sdp_conn *conn);
struct sdp_conn *sdp_conn_take(struct sock *sk);

/* sdp_proc.c */
void sdp_sock_list_add(struct sock *sk);
void sdp_sock_list_del(struct sock *sk);
int sdp_proc_init(void);
void sdp_proc_exit(void);

#endif /* _SDP_H */
