/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: the socket, its RDMA resources and the
 * functions the files of the module share.
 */
#ifndef _SDP_H
#define _SDP_H

#include <linux/completion.h>
#include <linux/irq_poll.h>
#include <linux/list.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/inet_sock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <uapi/linux/sdp.h>

#include "sdp_compat.h"
#include "sdp_stats.h"

struct sdp_bsdh;
struct sdp_conn;
struct sdp_msg_hdr;
struct seq_file;

/**
 * struct sdp_wc - a request posted on a connection's QP, and its completion
 * @cqe: the verbs completion entry; its done() is sdp_cq_done()
 * @process: acts on the completion, with the socket locked (sdp_cq.c);
 *	returns -ENOMEM, having done nothing, when memory of the kind @gfp
 *	allows ran out; else 0
 * @node: entry in sdp_conn.backlog while the completion waits there
 * @status: the completion's status
 * @byte_len: the bytes it received
 */
struct sdp_wc {
	struct ib_cqe		cqe;
	int			(*process)(struct sock *sk,
					   struct sdp_conn *conn,
					   struct sdp_wc *wc, gfp_t gfp);
	struct list_head	node;
	enum ib_wc_status	status;
	u32			byte_len;
};

/*
 * Chunks of one ring buffer at most: SGEs of a request, fragments of the
 * skb a received payload moves to (sdp_buf.c).
 */
#define SDP_BUF_CHUNKS	16

/* One chunk of a ring buffer: its pages and their DMA address. */
struct sdp_chunk {
	struct page	*page;
	u64		dma;
};

/*
 * One buffer: up to sdp_rx_buf_size bytes in chunks, each mapped for the
 * device while the buffer has it, and posted as one SGE.  A receive
 * buffer of the device's pool (sdp_dev.c) has all its chunks, and @wc for
 * the completion of the receive it is posted for; the payload of its
 * message begins at offset 0, the BSDH having landed apart; its chunks may
 * leave for a receive queue (sdp_rx.c), and others take their place.  The
 * payload buffer of a send slot gets chunks as bytes are written into it
 * (sdp_tx.c), from offset 0: the BSDH goes from the slot's header.
 */
struct sdp_buf {
	struct sdp_chunk	chunk[SDP_BUF_CHUNKS];
	struct sdp_wc		wc;
};

/**
 * struct sdp_tx_slot - one send of the send ring
 * @wc: the send's completion
 * @len: the bytes posted: BSDH and payload
 * @seq: sdp_sock.tx_head when posted
 * @buf: the payload pages of buffered copy; NULL until the slot first
 *	carries payload, and again once an idle connection gave them back
 *	(sdp_tx_trim())
 */
struct sdp_tx_slot {
	struct sdp_wc		wc;
	u32			len;
	u32			seq;
	struct sdp_buf		*buf;
};

/*
 * The caller's pages one zero-copy Data message is posted from, at most:
 * the 4 KiB pages of 64 KiB that do not start at a page, so that a 64 KiB
 * send is one message wherever its buffer lies.
 */
#define SDP_ZC_FRAGS	17

/* SGEs of a send at most: a BSDH, and a ring buffer's or the caller's pages. */
#define SDP_TX_SGES	(1 + SDP_ZC_FRAGS)
static_assert(SDP_ZC_FRAGS >= SDP_BUF_CHUNKS);

/**
 * struct sdp_zc - the caller's pages a send slot's message goes from
 * @page: the pages, one reference each
 * @dma: their mappings for the device
 * @len: the bytes of each that the message carries
 * @n: how many; 0 when the message is in the slot's own buffer
 *
 * Filled by the sender under the socket lock (sdp_zcopy.c); emptied by
 * the completion of the message or of one after it, or with the ring
 * once the QP is drained.
 */
struct sdp_zc {
	struct page	*page[SDP_ZC_FRAGS];
	u64		dma[SDP_ZC_FRAGS];
	u32		len[SDP_ZC_FRAGS];
	unsigned int	n;
};

/* Pages of the caller's buffer one SrcAvail advertises at most: 1 MiB. */
#define SDP_SRC_PAGES	256

/**
 * struct sdp_src - the source side of read zero-copy (sdp_srcavail.c):
 *	the caller's pages one SrcAvail advertises, registered for the peer
 *	to RDMA-Read
 * @mr: the fast-registration MR the pages are registered with, for
 *	remote reads; its key changes with every registration
 * @max_pages: the pages @mr takes
 * @reg_wc: the registration's completion (asked for none: an error's)
 * @inv_wc: the completion of its invalidation
 * @page: the pages, one reference each, @npages of them
 * @sg: their scatterlist, mapped for the device while @npages
 * @len: the bytes the SrcAvail advertises
 * @acked: the bytes the sink reported read (RdmaRdCompl)
 * @active: from the SrcAvail until the invalidation completed: the
 *	device may touch the pages
 * @finishing: the invalidation is posted
 * @cancel_due: SrcAvailCancel waits for a credit
 * @cancelled: the sender gave up waiting and asked the sink to stop
 * @refused: the sink sent SendSM: the rest goes by buffered copy
 * @cancel_by: the sink must have answered the SrcAvailCancel by then
 *
 * Locking: the socket lock.  Lifetime: allocated by the first SrcAvail
 * of a connection, freed by sdp_tx_trim() when idle or with the
 * connection.  The pages go back once the invalidation completed
 * (sdp_src_inv_process()); if the QP failed first, the MR may still be
 * valid, and only the connection's free, after the drain, deregisters it
 * and lets go of them.
 */
struct sdp_src {
	struct ib_mr		*mr;
	unsigned int		max_pages;
	struct sdp_wc		reg_wc;
	struct sdp_wc		inv_wc;
	struct page		*page[SDP_SRC_PAGES];
	struct scatterlist	sg[SDP_SRC_PAGES];
	unsigned int		npages;
	u32			len;
	u32			acked;
	bool			active;
	bool			finishing;
	bool			cancel_due;
	bool			cancelled;
	bool			refused;
	unsigned long		cancel_by;
};

/* Chunks one RDMA Read of the sink fills at most, and its work requests. */
#define SDP_RD_PAGES	64
#define SDP_RD_WRS	8

/**
 * struct sdp_rd - the sink side of read zero-copy (sdp_rdma_read.c): the
 *	peer's SrcAvail, and the RDMA Read of it under way
 * @len: the bytes the SrcAvail advertises
 * @rkey: its key
 * @vaddr: its address
 * @done: bytes of it read so far
 * @unacked: of which the next RdmaRdCompl reports
 * @cancelled: the peer sent SrcAvailCancel: no more reads
 * @to_user: the read under way goes into a reader's pages (the reader
 *	waits), not into chunks that join the receive queue
 * @page: the pages it reads into, one reference each, @npages of them;
 *	@sge has their mappings and the bytes of each it fills
 * @bytes: its bytes
 * @nwr: its work requests, in @wr; the last asks for the completion
 * @wc: their completions
 *
 * Locking: the socket lock.  Lifetime: allocated by the first SrcAvail
 * a connection receives, freed by sdp_tx_trim() when idle or with the
 * connection.  sdp_sock.rx_rd_busy tells whether a read is under way.
 * The pages go back when it completed: the chunks as they join the
 * receive queue, a reader's pages by the reader (sdp_rd_direct()); or,
 * if it never does, after the connection's drain (sdp_rd_free()).
 */
struct sdp_rd {
	u32			len;
	u32			rkey;
	u64			vaddr;
	u32			done;
	u32			unacked;
	bool			cancelled;
	bool			to_user;
	struct page		*page[SDP_RD_PAGES];
	struct ib_sge		sge[SDP_RD_PAGES];
	unsigned int		npages;
	u32			bytes;
	unsigned int		nwr;
	struct ib_rdma_wr	wr[SDP_RD_WRS];
	struct sdp_wc		wc[SDP_RD_WRS];
};

/*
 * Spare receive chunks a device keeps at most, in buffers (sdp_dev.c):
 * chunks readers are done with, for the next receive buffer whose chunks
 * move to a receive queue.
 */
#define SDP_DEV_SPARE_BUFS	8

/**
 * struct sdp_dev - what the connections on one RDMA device share
 *	(sdp_dev.c): a protection domain, a shared receive queue and the
 *	pool of receive buffers posted on it
 * @node: entry in the list of devices
 * @users: the connections that use it
 * @ibdev: the device
 * @pd: the protection domain of every connection on the device
 * @srq: the shared receive queue every connection's QP receives from
 * @chunk_shift: log2 of the bytes of one chunk of a buffer
 * @nchunks: chunks per buffer (sdp_buf_size_chunks())
 * @pool: the receive buffers, @pool_size of them: each posted on @srq,
 *	or owned by the completion that filled it until that completion's
 *	processing reposts it (sdp_dev_repost())
 * @pool_size: how many
 * @rx_hdr: the BSDH of the message each of @pool receives, in the same
 *	order: a receive lands it apart, before the payload, so that the
 *	payload fills whole chunks from their start
 * @rx_hdr_dma: @rx_hdr's mapping for the device, made with it
 * @posted: how many are posted
 * @lock: guards @spare, @nspare, @unposted and @nunposted
 * @spare: chunks of received data readers are done with; ours alone (one
 *	reference each), counted in the pool's memory
 * @nspare: how many @spare holds
 * @unposted: buffers whose repost failed, for the next repost to retry
 * @nunposted: how many @unposted holds
 *
 * @removing: the device is going away (sdp_ib_remove()): no new user
 * @keep_work: frees the objects SDP_DEV_KEEP after the last user went
 *
 * Locking: sdp_dev_mutex guards the list, @users and @removing;
 * everything else but the @lock-guarded fields is set before the device
 * is on the list and never changes.  Lifetime: made by the first
 * connection on the device (sdp_dev_get()); freed, once off the list, by
 * @keep_work when no connection came within SDP_DEV_KEEP of the last
 * one's sdp_dev_put(), or by the removal of the device (its ib_client
 * remove(), or the last user's put while the RDMA CM removes the
 * device's CM ids: that put comes before the connection's CM id is
 * destroyed), or by module unload (the client's unregistration).
 */
struct sdp_dev {
	struct list_head	node;
	unsigned int		users;
	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	struct ib_srq		*srq;
	unsigned int		chunk_shift;
	unsigned int		nchunks;
	struct sdp_buf		*pool;
	unsigned int		pool_size;
	struct sdp_bsdh		*rx_hdr;
	u64			rx_hdr_dma;
	atomic_t		posted;
	spinlock_t		lock;	/* spares, unposted buffers */
	struct page		**spare;
	unsigned int		nspare;
	struct sdp_buf		**unposted;
	unsigned int		nunposted;
	bool			removing;
	struct delayed_work	keep_work;
};

/**
 * struct sdp_conn - the RDMA side of one connection
 * @sk: the socket; the connection holds a reference on it
 * @id: the RDMA CM id; owns the QP
 * @dev: the device's shared objects, which the QP uses; NULL until the
 *	QP is made, and again once the verbs objects are freed
 * @cq: one completion queue for sends and receives (sdp_cq.c)
 * @iop: polls @cq in softirq, as its completion event asks
 * @cq_kicked: an event came since the poll began (sdp_cq_poll())
 * @cq_in_task: the device raised an event of @cq in process context: its
 *	completions come through a task switch (sdp_zcopy_pays()); set
 *	once by sdp_cq_event(), read without a lock
 * @rx_withheld: credits not given to the peer, for want of receive space:
 *	sdp_rx_refill() gives them as the reader makes room
 * @tx_ring: the send slots, sdp_tx_ring_size of them, used in order;
 *	NULL for a passive child until accept() takes it: it sends nothing
 * @tx_hdr: the headers of each send slot's message (BSDH and extended
 *	header), mapped for the device at @tx_hdr_dma while the ring exists
 * @tx_zc: the caller's pages of each send slot's message, when it goes
 *	from them (sdp_zcopy.c); allocated by the first such send
 * @zc_frags: the caller's pages a message may go from: the send SGEs the
 *	QP takes, but one for the BSDH; below 2, every send is copied
 * @read_zcopy: both ends take part in read zero-copy (the Hello's and
 *	HelloAck's capability)
 * @src: the source side of read zero-copy, once a send used it
 * @rd: the sink side, once the peer sent a SrcAvail
 * @rd_sges: the SGEs one RDMA Read takes
 * @rd_active: the peer's SrcAvail in @rd is not done with: not all read,
 *	and not refused
 * @disconn_held: the peer's DisConn came after a SrcAvail still
 *	@rd_active: its EOF waits until that SrcAvail's bytes are in
 * @rd_compl_due: an RdmaRdCompl waits for a credit
 * @send_sm_due: a SendSM waits for a credit
 * @tx_nbufs: send slots that have a payload buffer
 * @tx_idle: when the send ring last became idle, for sdp_tx_trim()
 * @teardown: frees the connection; queued with a delay as the time limit
 *	of an orderly close, or at once, under the socket lock and only
 *	while not @dying; once it set @dying, the work cancels what was
 *	queued meanwhile, so it is not pending when it frees the connection
 * @started: the peer's Hello or HelloAck was taken in (sdp_conn_start()):
 *	completions that come before, a passive peer's first message
 *	overtaking the CM's ESTABLISHED event, wait on @backlog till then
 * @established: the CM's ESTABLISHED event came
 * @dying: the teardown has begun: queue nothing more on the connection
 * @aborted: aborted: what still arrives is not looked at
 * @deadline: when the time limit of an orderly close runs out, or 0
 * @watchdog: checks keepalive and TCP_USER_TIMEOUT (sdp_timer.c)
 * @probe_wc: the keepalive probe and its completion
 * @probe_inflight: a keepalive probe is posted
 * @probe_posted: when it was
 * @cm_done: the CM is done with the connection (DISCONNECTED: the peer's
 *	DREQ or DREP, or our DREQ's resends ran out; or the device went
 *	away): the teardown waits for it before destroying the CM id, which
 *	would cancel the DREQ's resends.  Socket lock.
 * @finish: the end of the teardown, which frees the connection: queued
 *	by @teardown once it has disconnected and drained, SDP_DREP_WAIT
 *	later if the CM is not done yet, and then brought forward by the
 *	CM's handler.  No worker waits for the peer's DREP meanwhile: a
 *	peer's DREP may itself wait for a worker (its @teardown sends it).
 * @finish_queued: @finish is queued.  Socket lock.
 * @backlog: completions that wait for the socket's owner (sdp_cq.c), in
 *	the order they came
 * @backlog_stalled: the first of them needs memory that atomic context
 *	could not get: @backlog_work processes them
 * @backlog_work: processes the backlog in process context
 * @counted: counted in its namespace's user_conns (sdp_conn_count())
 * @rcu: the connection is freed after a grace period, for a waiter that
 *	took over its completion event (sdp_cq_take_event())
 *
 * Whoever takes the pointer out of sdp_sock.conn under the socket lock
 * owns the connection and frees it.  The completion handlers have the
 * connection as their context; they act only while the connection is
 * still the socket's, but a receive's buffer, the device's, goes back to
 * the pool whatever becomes of the connection, from a backlog that is
 * dropped too.
 */
struct sdp_conn {
	struct sock		*sk;
	struct rdma_cm_id	*id;
	struct sdp_dev		*dev;
	struct ib_cq		*cq;
	struct irq_poll		iop;
	bool			cq_kicked;
	bool			cq_in_task;
	u32			rx_withheld;
	struct sdp_tx_slot	*tx_ring;
	struct sdp_msg_hdr	*tx_hdr;
	u64			tx_hdr_dma;
	struct sdp_zc		*tx_zc;
	unsigned int		zc_frags;
	bool			read_zcopy;
	struct sdp_src		*src;
	struct sdp_rd		*rd;
	unsigned int		rd_sges;
	bool			rd_active;
	bool			disconn_held;
	bool			rd_compl_due;
	bool			send_sm_due;
	unsigned int		tx_nbufs;
	unsigned long		tx_idle;
	struct delayed_work	teardown;
	bool			started;
	bool			established;
	bool			dying;
	bool			aborted;
	unsigned long		deadline;
	struct delayed_work	watchdog;
	struct sdp_wc		probe_wc;
	bool			probe_inflight;
	unsigned long		probe_posted;
	bool			cm_done;
	struct delayed_work	finish;
	bool			finish_queued;
	struct list_head	backlog;
	bool			backlog_stalled;
	struct work_struct	backlog_work;
	bool			counted;
	struct rcu_head		rcu;
};

/* The callbacks of a TCP socket that also wake the SDP socket carrying it. */
enum sdp_fb_callback {
	SDP_FB_STATE_CHANGE,
	SDP_FB_DATA_READY,
	SDP_FB_WRITE_SPACE,
	SDP_FB_ERROR_REPORT,
	SDP_FB_CALLBACKS
};

/**
 * struct sdp_fallback - the TCP fallback of a socket that asked for it
 *	(sdp_fallback.c); allocated when SDP_FALLBACK is first set, or for an
 *	accepted TCP connection, and freed with the socket
 * @sk: the socket
 * @enabled: SDP_FALLBACK is on
 * @path: SDP_PATH_TCP once the socket carries a TCP connection
 * @tcp: the TCP socket: the connection the socket carries, or the TCP
 *	listener beside an SDP one.  Set under the socket lock and @lock;
 *	released, with @lock, when the user closes the socket
 * @lock: guards @tcp for /proc/net/sdp, which has no socket lock
 * @spare: the TCP socket an active open falls back to, made by connect()
 *	in the caller's context (sdp_fb_prepare()), so that it is the
 *	caller's as its own socket() would be: its credentials (the owner
 *	that SO_REUSEPORT and nftables' skuid see), its cgroup (cgroup BPF,
 *	nftables' socket cgroupv2), its LSM labels, its capabilities for the
 *	bind; the CM's and the timer's workers have none of them.  Released
 *	once the SDP connection is up, or with the socket.  Socket lock.
 * @spare_err: why connect() could make no @spare: the error a fallback
 *	then fails with
 * @connect_err: the TCP connect failed at once with this error, which
 *	connect() reports once
 * @timer: ends an SDP connect() that the RDMA CM leaves unanswered; holds
 *	a reference on @sk while queued
 * @saved: the TCP socket's callbacks, which ours call before they wake
 *	@sk's waiters
 *
 * Lock order: the TCP socket's lock nests inside the SDP socket's, never
 * the other way; the TCP socket's callbacks take no SDP socket lock.
 */
struct sdp_fallback {
	struct sock		*sk;
	bool			enabled;
	u8			path;
	struct socket		*tcp;
	spinlock_t		lock;		/* guards @tcp, for /proc */
	struct socket		*spare;
	int			spare_err;
	int			connect_err;
	struct delayed_work	timer;
	/* indexed by enum sdp_fb_callback */
	void			(*saved[SDP_FB_CALLBACKS])(struct sock *tsk);
};

/**
 * struct sdp_sock - an AF_INET_SDP socket
 * @isk: the inet socket; sk_state holds TCP state numbers
 * @node: entry in sdp_sock_list, for /proc/net/sdp
 * @conn: the RDMA connection; NULL before it exists and once torn down
 * @addr_family: AF_INET or AF_INET6: the family of the addresses the
 *	socket was bound or connected with, or AF_INET6 once it took an
 *	IPv6-level option; and so of getname() results
 * @bound: bind() or listen() gave the socket its address; an active open
 *	binds its CM id to it (sdp_conn_bind())
 * @port: the port the socket holds in the port table (sdp_port.c), or NULL
 * @port_node: entry in @port's owners
 * @group: the listeners' group the socket is in since listen(), or NULL
 * @listen_node: entry in @group's members
 * @accept_queue: listener: children that are established and not yet
 *	accepted.  sk_ack_backlog counts the children from their request to
 *	accept() or their end, those still in SYN_RECV included, so that a
 *	request finding it above sk_max_ack_backlog is refused
 *	(sdp_cm_request()); whoever takes a child off its listener subtracts
 *	it: sdp_accept(), or sdp_child_release() after sdp_child_unhook()
 *	(a child aborted before or after its RTU, or its listener's close,
 *	or its connection's teardown while in SYN_RECV).  The count
 *	carries over a shutdown and a new listen(): children of the old
 *	listen may still be under way.
 * @accept_node: child: entry in the listener's accept_queue
 * @parent: child: the listener, referenced, until accept() takes the child
 *	or sdp_child_unhook() takes it off; cleared once, under the child's
 *	socket lock
 * @fb: the TCP fallback, once SDP_FALLBACK was set; NULL before
 * @peer_rcv_size: the largest message the peer takes, BSDH included: the
 *	receive size it announced, at most ours (sdp_rx_msg_max()): a send
 *	slot's buffer holds no more
 * @tx_mseq: MSeq of the last message sent
 * @tx_credits: messages the peer has buffers for now
 * @tx_head: send ring slots used so far (the next one: modulo the size)
 * @tx_tail: send ring slots completed so far
 * @tx_unsignaled: the last message posted asked for no completion: until
 *	one that asks follows, nothing completes it nor those before it
 * @tx_held: payload bytes in the send slot @tx_head that wait for more
 *	before they are posted (sdp_tx.c); counted in sk_wmem_queued
 * @tx_held_more: the last send that added to them had MSG_MORE
 * @tx_held_stamp: when the held bytes began to wait
 * @tx_zc_end: a zero-copy send waits until @tx_tail reaches this
 * @tx_zc_waiters: the zero-copy sends that wait (sdp_zcopy_wait())
 * @tx_zc_cost: what a large blocking send has cost the connection, in ns
 *	per KiB, averaged: [0] copied, [1] from the caller's pages
 *	(sdp_zcopy_pick())
 * @tx_zc_samples: the sends timed each way, counted up to SDP_ZC_FIRST
 * @tx_zc_turns: such sends since the way that cost more was last tried
 * @tx_zc_backoff: the next try waits SDP_ZC_RETRY_MIN << this many sends
 * @tx_zc_trial: the last such send is a try of the way that cost more
 * @tx_src_active: a SrcAvail of ours is out (sdp_src.active): no other
 *	message with payload may follow it until it is done
 * @tx_src_senders: senders inside sdp_src_send(): sdp_tx_trim() leaves
 *	the source state to them
 * @tx_src_busy: a sender's SrcAvail is out, or its result not taken yet:
 *	another sender waits, so that it neither takes the source state over
 *	nor is taken for the first one's end (sdp_src_qp_idle())
 * @rx_rd_busy: an RDMA Read of the peer's SrcAvail is under way; cleared
 *	by its completion, or by the connection's free after the drain,
 *	without the socket lock: a reader whose pages it reads into waits
 *	for that
 * @rx_rd_result: what the last read into a reader's pages gave: its
 *	bytes, or a negative error
 * @rx_rd_waiters: readers that wait for data with room to take a
 *	SrcAvail's bytes into their own pages
 * @rx_sleepers: readers asleep in recvmsg(), which each message wakes
 *	whatever the low-water mark: they count what they took already
 * @rx_wait_us: how long the last recvmsg() that waited for data waited,
 *	in microseconds (capped), and @rx_sent_mark: @bytes_sent (its low
 *	bits) when the last recvmsg() returned: a reader spins for data
 *	only while the one is within sdp_recv_poll_us and it sent since
 *	(sdp_rx_busy_poll())
 * @rx_full: the peer can send nothing more until a read (credits
 *	withheld, or a SrcAvail being read): what is queued is readable below
 *	the low-water mark; read locklessly by poll()
 * @read_zcopy: SDP_READ_ZCOPY: the socket offers read zero-copy in its
 *	Hello or HelloAck
 * @rx_mseq: MSeq of the last message received
 * @rx_posted: the credits we give: receive buffers the peer may fill,
 *	which the device's pool provides (sdp_dev.c)
 * @rx_adv: rx_posted as the Bufs of our last message told the peer
 * @rx_since_adv: messages received since that message
 * @rx_queued: bytes received and not yet read (SIOCINQ)
 * @bytes_sent: payload bytes posted, @bytes_received: payload bytes
 *	received, for TCP_INFO
 * @buf_bytes: bytes of buffers the connection holds (its send slots'
 *	headers and payload pages), for /proc/net/sdp, which reads it
 *	without the lock
 * @disconn_pending: a DisConn waits for credits
 * @disconn_sent: our DisConn is posted
 * @disconn_rcvd: the peer's DisConn arrived
 * @rx_stamp: when the peer was last heard from (keepalive)
 * @tx_stamp: when sending last made progress (TCP_USER_TIMEOUT)
 * @probes: keepalive probes sent since the peer was last heard from
 * @probe_stamp: when the last probe went out
 * @cq_waiters: tasks of the socket's calls that sleep in
 *	sdp_wait_woken(), and so can poll the completion queue themselves
 * @cq_event: a completion event that the device raised in process
 *	context, handed to those waiters: the connection whose queue is to
 *	be polled, or NULL (sdp_cq.c)
 * @nodelay, @cork, @user_mss, @keepidle, @keepintvl, @keepcnt,
 * @user_timeout: the TCP-level options, as set
 *
 * Locking: the socket lock serialises everything the socket calls, the
 * RDMA CM event handler and the completion handlers do to the socket:
 * sk_state, @conn and what hangs off it, the credit and sequence state,
 * the listener's @accept_queue and sk_ack_backlog.  As for TCP, "locked"
 * means one of two things.  Socket calls, the CM handler and the works
 * own the socket (lock_sock()), in process context.  The completion
 * handlers run in softirq and hold the socket's spinlock
 * (bh_lock_sock()) while no process owns it; while one does, they leave
 * the completion on the connection's backlog, and the owner's
 * release_sock() processes it (sdp_cq.c).  So what a completion does
 * (receive, send accounting, credit updates, sk_data_ready and the other
 * callbacks) never sleeps.  The CM handler runs with the CM id's handler
 * mutex held and takes the socket lock inside it, so nothing that holds
 * the socket lock waits for a CM handler (rdma_destroy_id()) or for the
 * completion queue (ib_drain_qp()).  No two socket locks are held at once.
 * poll() reads the state without the lock, as tcp_poll() does.
 *
 * Lifetime: sk_alloc() gives the reference that the owner holds: the
 * struct socket for a user socket; the CM id for a passive child until
 * it is established; the listener's accept queue after that.  A
 * connection holds one more, so an orphaned socket lives until its
 * connection is torn down.  Every path that frees a connection first
 * destroys its CM id, which waits for the running handler, and drains
 * its QP, which waits for the completion handlers.
 *
 * Device removal: the CM delivers DEVICE_REMOVAL to every CM id on the
 * device and waits until each is destroyed before the device goes.  The
 * handler frees a connection that is still the socket's (QP drained,
 * verbs objects freed) and returns 1, so the CM destroys the id; one
 * whose teardown has begun is left to the teardown, whose wait for the
 * DREP (@cm_done and @finish of struct sdp_conn) the handler ends: nothing
 * comes after DEVICE_REMOVAL.  Each connection's verbs objects live on
 * its CM id's device, so the CM's event reaches all of them; the
 * module's ib_client frees only the device's receive pool (sdp_dev.c).
 */
struct sdp_sock {
	struct inet_sock	isk;
	struct list_head	node;
	struct sdp_conn		*conn;
	sa_family_t		addr_family;
	bool			bound;
	struct sdp_port		*port;
	struct hlist_node	port_node;
	struct sdp_listen_group	*group;
	struct list_head	listen_node;
	struct list_head	accept_queue;
	struct list_head	accept_node;
	struct sock		*parent;
	struct sdp_fallback	*fb;

	u32			peer_rcv_size;
	u32			tx_mseq;
	int			tx_credits;
	u32			tx_head;
	u32			tx_tail;
	bool			tx_unsignaled;
	u32			tx_held;
	bool			tx_held_more;
	unsigned long		tx_held_stamp;
	u32			tx_zc_end;
	unsigned int		tx_zc_waiters;
	u32			tx_zc_cost[2];
	u8			tx_zc_samples[2];
	u16			tx_zc_turns;
	u8			tx_zc_backoff;
	bool			tx_zc_trial;
	bool			tx_src_active;
	bool			rx_rd_busy;
	unsigned int		tx_src_senders;
	bool			tx_src_busy;
	int			rx_rd_result;
	unsigned int		rx_rd_waiters;
	unsigned int		rx_sleepers;
	u32			rx_wait_us;
	u32			rx_sent_mark;
	bool			rx_full;
	bool			read_zcopy;
	u32			rx_mseq;
	u32			rx_posted;
	u32			rx_adv;
	u32			rx_since_adv;
	u32			rx_queued;
	u64			bytes_sent;
	u64			bytes_received;
	unsigned long		buf_bytes;
	bool			disconn_pending;
	bool			disconn_sent;
	bool			disconn_rcvd;
	unsigned long		rx_stamp;
	unsigned long		tx_stamp;
	int			probes;
	unsigned long		probe_stamp;
	atomic_t		cq_waiters;
	struct sdp_conn		*cq_event;

	bool			nodelay;
	bool			cork;
	int			user_mss;
	int			keepidle;
	int			keepintvl;
	int			keepcnt;
	u32			user_timeout;
};

/**
 * struct sdp_port - a port that SDP sockets hold, in one namespace
 * @node: entry in the table of ports (sdp_port.c), hashed on namespace
 *	and number
 * @net: the namespace
 * @num: the port number
 * @owners: the sockets bound to the port (sdp_sock.port_node), listeners
 *	included; accepted sockets are not among them
 * @groups: the listeners' groups on the port (sdp_listen_group.node)
 *
 * This table, not the RDMA CM, decides bind() and listen() conflicts,
 * by TCP's rules.  The CM comes in only with the ids that listen (one
 * per group) and with a socket's own id when it connects; other CM users
 * of the port space, or an SDP connection's port, can still make a
 * listen() or a connect() fail with EADDRINUSE.
 *
 * Locking: one mutex, sdp_port_mutex, guards the table, every port, its
 * @owners and @groups, each group's @members, @id and @next, and the
 * socket's @port and @group.  It is taken inside the socket lock (bind,
 * listen) and inside a group's CM handler (requests, device removal),
 * and nothing that holds it takes a socket lock or waits for a CM
 * handler.  The fields of another socket that the conflict rules read
 * (SO_REUSEADDR, SO_REUSEPORT, its address) are read without its lock,
 * as TCP reads them.
 *
 * Lifetime: a socket enters @owners at bind(), or at listen() when
 * unbound, and leaves at close() (sdp_port_unbind()); a port is freed
 * when it has neither owners nor groups.  A group is made by the first
 * listen() on its address and lives until its last listener leaves it;
 * that one destroys the group's CM id, outside the mutex and the socket
 * lock, then frees the group.  The CM handler's context is the group:
 * rdma_destroy_id() waits for a running handler and stops new ones, so
 * the group outlives every handler call.  When the device goes, the
 * handler returns 1 and the CM destroys the id; the group, now without
 * id and out of its port, lives on until its listeners leave.
 */
struct sdp_port {
	struct hlist_node	node;
	possible_net_t		net;
	unsigned short		num;
	struct hlist_head	owners;
	struct list_head	groups;
};

/**
 * struct sdp_listen_group - listeners sharing an address and a CM id
 * @node: entry in @port's groups
 * @port: the port; NULL once the group is out of it
 * @id: the CM id listening on @addr, context the group; NULL once the
 *	CM destroyed it or the last listener took it to destroy it
 * @addr: the address, as the CM takes it (sdp_cm_sockaddr())
 * @v6only: the listeners' IPV6_V6ONLY
 * @members: the listeners (sdp_sock.listen_node); more than one only
 *	with SO_REUSEPORT
 * @next: round robin position: which listener gets the next request
 */
struct sdp_listen_group {
	struct list_head	node;
	struct sdp_port		*port;
	struct rdma_cm_id	*id;
	struct sockaddr_storage	addr;
	bool			v6only;
	struct list_head	members;
	unsigned int		next;
};

static inline struct sdp_sock *sdp_sk(const struct sock *sk)
{
	return (struct sdp_sock *)sk;
}

/*
 * An skb of the receive queue: where its unread bytes start, and whether
 * its payload was copied into pages of its own, whose room later small
 * payloads may fill (sdp_rx.c).
 */
struct sdp_skb_cb {
	u32	offset;
	bool	copied;
};

#define SDP_SKB_CB(skb)	((struct sdp_skb_cb *)&((skb)->cb[0]))

/*
 * Receive buffers posted whatever the receive space, once the receive
 * queue is empty (sdp_rx.c): a peer needs two credits to send data, and a
 * third keeps credit updates from answering each other (sdp_tx.c).  Also
 * the least rx_ring_size.
 */
#define SDP_RX_MIN_POSTED	3

/* Module parameters (af_sdp.c). */
extern unsigned int sdp_rx_ring_size;
extern unsigned int sdp_rx_buf_size;
extern unsigned int sdp_tx_ring_size;
extern unsigned int sdp_rx_pool_size;
extern unsigned int sdp_resolve_timeout_ms;
extern unsigned int sdp_retry_count;
extern unsigned int sdp_close_timeout_ms;
extern unsigned int sdp_tx_stall_timeout_ms;
extern unsigned int sdp_zcopy_thresh;
extern bool sdp_zcopy_task_cq;
extern bool sdp_zcopy_adapt;
extern bool sdp_read_zcopy;
extern unsigned int sdp_read_zcopy_thresh;
extern unsigned int sdp_recv_poll_us;
extern unsigned int sdp_fallback_timeout_ms;
extern unsigned int sdp_max_user_conns;
extern struct workqueue_struct *sdp_wq;

/* af_sdp.c */
struct sock *sdp_sk_alloc(struct net *net, struct socket *sock, int kern);
int sdp_conn_new(struct sock *sk);
void sdp_inherit(struct sock *sk, const struct sock *lsk);
struct sock *sdp_child_unhook(struct sock *sk);
void sdp_child_release(struct sock *sk, struct sock *lsk);
bool sdp_child_end(struct sock *sk, bool destroy_id);
void sdp_wake_sleepers(struct sock *sk);
void sdp_set_error(struct sock *sk, int err);

/* sdp_addr.c */
int sdp_check_sockaddr(const struct sockaddr *addr, int len);
int sdp_check_local(struct net *net, const struct sockaddr *addr);
bool sdp_mapped_on_v6only(const struct sock *sk, const struct sockaddr *addr);
void sdp_cm_sockaddr(const struct sockaddr *addr, struct sockaddr_storage *ss);
void sdp_neigh_prime(struct net *net, const struct sockaddr *addr);
void sdp_set_local(struct sock *sk, const struct sockaddr *addr);
void sdp_set_remote(struct sock *sk, const struct sockaddr *addr);
int sdp_fill_sockaddr(const struct sock *sk, struct sockaddr *addr, bool peer);

/* sdp_port.c */
int sdp_port_bind(struct sock *sk, const struct sockaddr *addr);
int sdp_port_listen(struct sock *sk, int backlog);
void sdp_port_unbind(struct sock *sk);

/* sdp_cm.c */
int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *event);
int sdp_cm_request(struct sock *lsk, struct rdma_cm_id *id,
		   struct rdma_cm_event *ev);
int sdp_cm_connect(struct sock *sk, const struct sockaddr *addr);
void sdp_connect_failed(struct sock *sk, int err);

/* sdp_cq.c */
int sdp_cq_create(struct sdp_conn *conn, int nr_cqe);
void sdp_cq_destroy(struct sdp_conn *conn);
long sdp_wait_woken(struct sock *sk, struct wait_queue_entry *wait,
		    unsigned int state, long timeout);
void sdp_cq_wait_begin(struct sdp_sock *ssk);
void sdp_cq_wait_end(struct sdp_sock *ssk);
void sdp_cq_take_event(struct sdp_sock *ssk);
void sdp_sk_wait(struct sock *sk, long *timeo, struct wait_queue_entry *wait,
		 bool (*ready)(const struct sock *sk, const void *arg),
		 const void *arg);
void sdp_cq_done(struct ib_cq *cq, struct ib_wc *ibwc);
void sdp_backlog_init(struct sdp_conn *conn);
void sdp_release_cb(struct sock *sk);

/* sdp_buf.c */
void sdp_buf_size_chunks(struct sdp_dev *dev);
unsigned int sdp_buf_truesize(const struct sdp_dev *dev);
u32 sdp_chunk_size(const struct sdp_dev *dev);
struct page *sdp_chunk_alloc(const struct sdp_dev *dev, gfp_t gfp);
int sdp_chunk_map(const struct sdp_dev *dev, struct sdp_chunk *chunk,
		  struct page *page, enum dma_data_direction dir);
struct page *sdp_chunk_unmap(const struct sdp_dev *dev,
			     struct sdp_chunk *chunk,
			     enum dma_data_direction dir);
long sdp_buf_alloc(const struct sdp_dev *dev, struct sdp_buf *buf, u32 len,
		   enum dma_data_direction dir, gfp_t gfp);
long sdp_buf_free(const struct sdp_dev *dev, struct sdp_buf *buf,
		  enum dma_data_direction dir);
void *sdp_buf_ptr(const struct sdp_dev *dev, const struct sdp_buf *buf,
		  u32 off, u32 *room);
unsigned int sdp_buf_sge(const struct sdp_dev *dev, const struct sdp_buf *buf,
			 u32 len, struct ib_sge *sge);
void sdp_buf_sync_for_cpu(const struct sdp_dev *dev, const struct sdp_buf *buf,
			  u32 len);
void sdp_buf_sync_for_device(const struct sdp_dev *dev,
			     const struct sdp_buf *buf, u32 len);
size_t sdp_buf_copy_from_iter(const struct sdp_dev *dev, struct sdp_buf *buf,
			      u32 off, size_t len, struct iov_iter *from);
void sdp_buf_read(const struct sdp_dev *dev, const struct sdp_buf *buf,
		  u32 off, void *to, u32 len);

/* sdp_dev.c */
struct sdp_dev *sdp_dev_get(struct ib_device *ibdev);
void sdp_dev_put(struct sdp_dev *dev);
int sdp_dev_init(void);
void sdp_dev_exit(void);
u32 sdp_rx_msg_max(void);
void sdp_dev_rx_bsdh(const struct sdp_dev *dev, const struct sdp_buf *rx,
		     struct sdp_bsdh *bsdh);
void sdp_dev_repost(struct sdp_dev *dev, struct sdp_buf *rx);
struct page *sdp_dev_take_spare(struct sdp_dev *dev);
bool sdp_dev_keep_spare(struct sdp_dev *dev, struct page *page);
void sdp_mem_add(long bytes);
long sdp_mem_total(void);
long sdp_mem_pools(void);
long sdp_pool_buffers_posted(void);
long sdp_pools_made(void);

/* sdp_zcopy.c */
bool sdp_zcopy_wanted(struct msghdr *msg, long timeo);
bool sdp_zcopy_pays(const struct sdp_conn *conn);
bool sdp_zcopy_pick(struct sdp_sock *ssk);
void sdp_zcopy_account(struct sdp_sock *ssk, bool pages, u64 ns, size_t bytes);
size_t sdp_splice_fill(const struct sdp_conn *conn, struct sdp_zc *zc,
		       struct iov_iter *from, size_t max);
ssize_t sdp_zcopy_fill(const struct sdp_conn *conn, struct sdp_zc *zc,
		       struct iov_iter *from, size_t max);
unsigned int sdp_zcopy_sge(const struct sdp_conn *conn,
			   const struct sdp_zc *zc, struct ib_sge *sge);
void sdp_zcopy_release(const struct sdp_conn *conn, struct sdp_zc *zc);
void sdp_zcopy_free(struct sdp_conn *conn);
void sdp_zcopy_wait(struct sock *sk);
void sdp_zcopy_wakeup(struct sock *sk);

/* sdp_srcavail.c */
bool sdp_src_wanted(const struct sock *sk, struct msghdr *msg);
ssize_t sdp_src_send(struct sock *sk, struct sdp_conn *conn,
		     struct msghdr *msg, long *timeo, bool *stop);
void sdp_src_rd_compl(struct sock *sk, struct sdp_conn *conn, u32 len);
void sdp_src_send_sm(struct sock *sk, struct sdp_conn *conn);
void sdp_src_revoke(struct sdp_conn *conn);
void sdp_src_free(struct sdp_conn *conn);

/* sdp_rdma_read.c */
int sdp_rd_prepare(struct sdp_conn *conn, gfp_t gfp);
void sdp_rd_src_avail(struct sock *sk, struct sdp_conn *conn, u32 len,
		      u32 rkey, u64 vaddr);
void sdp_rd_src_cancel(struct sock *sk, struct sdp_conn *conn);
void sdp_rd_kick(struct sock *sk);
bool sdp_rd_direct_wanted(const struct sock *sk, const struct msghdr *msg,
			  int flags, bool now);
int sdp_rd_direct(struct sock *sk, struct msghdr *msg, size_t max);
void sdp_rd_free(struct sdp_conn *conn);

/* sdp_conn.c */
struct sdp_conn *sdp_conn_alloc(struct sock *sk, struct rdma_cm_id *id);
int sdp_conn_create_qp(struct sdp_conn *conn, bool child);
int sdp_conn_grow(struct sock *sk);
void sdp_conn_mem_add(struct sdp_conn *conn, long bytes);
void sdp_conn_start(struct sock *sk, u16 peer_bufs, u32 peer_rcv_size,
		    u8 peer_cap);
u8 sdp_conn_cap(const struct sock *sk);
void sdp_conn_destroy(struct sdp_conn *conn, bool destroy_id);
int sdp_conn_count(struct sdp_conn *conn);
struct sdp_conn *sdp_conn_take(struct sock *sk);
void sdp_conn_teardown(struct sock *sk, unsigned long delay);
void sdp_conn_cm_done(struct sdp_conn *conn);

/* sdp_rx.c */
int sdp_rx_process(struct sock *sk, struct sdp_conn *conn, struct sdp_wc *wc,
		   gfp_t gfp);
void sdp_rx_give_credits(struct sdp_conn *conn, u32 n, bool now);
void sdp_rx_consumed(struct sock *sk);
int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len,
		int flags);
void sdp_rx_update_full(struct sock *sk, const struct sdp_conn *conn);
bool sdp_rx_readable(const struct sock *sk);
int sdp_read_sock(struct sock *sk, read_descriptor_t *desc,
		  sk_read_actor_t recv_actor);

/* sdp_tx.c */
int sdp_tx_process(struct sock *sk, struct sdp_conn *conn, struct sdp_wc *wc,
		   gfp_t gfp);
bool sdp_stream_memory_free(const struct sock *sk, int wake);
bool sdp_writable(const struct sock *sk);
void sdp_write_space(struct sock *sk);
void sdp_tx_wakeup(struct sock *sk);
void sdp_tx_control(struct sock *sk);
void sdp_tx_push(struct sock *sk);
void sdp_tx_drop_held(struct sock *sk);
bool sdp_tx_trimmable(const struct sdp_conn *conn);
void sdp_tx_trim(struct sock *sk);
void sdp_tx_free_bufs(struct sdp_conn *conn);
int sdp_tx_post_src_avail(struct sock *sk, struct sdp_conn *conn,
			  u32 len, u32 rkey, u64 vaddr);
int sdp_sendmsg(struct socket *sock, struct msghdr *msg, size_t len);
#ifdef SDP_HAVE_SENDPAGE
ssize_t sdp_sendpage(struct socket *sock, struct page *page, int offset,
		     size_t size, int flags);
#endif

/* sdp_close.c */
void sdp_shutdown_with_error(struct sock *sk, int err);
void sdp_set_reset(struct sock *sk);
void sdp_set_closed(struct sock *sk);
int sdp_shutdown(struct socket *sock, int how);
void sdp_send_shutdown(struct sock *sk);
void sdp_disconn_rcvd(struct sock *sk);
void sdp_rd_ended(struct sock *sk, struct sdp_conn *conn);
void sdp_check_closed(struct sock *sk);
bool sdp_connected(const struct sock *sk);
bool sdp_flush_expected(struct sock *sk);
bool sdp_wc_failed(struct sock *sk, enum ib_wc_status status,
		   const char *what);
void sdp_close_connected(struct sock *sk);
void sdp_abort(struct sock *sk, int err, enum sdp_mib reason, const char *why);

/* sdp_timer.c */
void sdp_watchdog_init(struct sdp_conn *conn);
void sdp_watchdog_arm(struct sock *sk);
void sdp_set_keepalive(struct sock *sk, int on);

/* sdp_opt.c */
int sdp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen);
int sdp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen);
int sdp_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg);

/* sdp_fallback.c */
void sdp_fallback_init(void);
int sdp_fb_alloc(struct sock *sk);
void sdp_fb_release(struct sock *sk);
void sdp_fb_free(struct sock *sk);
void sdp_fb_connect_begins(struct sock *sk);
void sdp_fb_prepare(struct sock *sk);
void sdp_fb_drop_spare(struct sock *sk);
int sdp_fb_connect(struct sock *sk, int err);
int sdp_fb_connected(struct sock *sk, struct sockaddr *uaddr, int len,
		     int flags);
int sdp_fb_listen(struct sock *sk, int backlog);
bool sdp_fb_acceptable(const struct sock *lsk);
int sdp_fb_accept(struct sock *lsk, struct socket *newsock,
		  struct proto_accept_arg *arg);
void sdp_fb_shutdown(struct sock *sk, int how);
bool sdp_fb_proc(struct sock *sk, struct seq_file *seq,
		 void (*show)(struct seq_file *seq, const struct sock *tsk));

/* The socket carries a TCP connection: its file is the TCP socket's. */
static inline bool sdp_went_tcp(const struct sock *sk)
{
	const struct sdp_fallback *fb = sdp_sk(sk)->fb;

	return fb && READ_ONCE(fb->path) == SDP_PATH_TCP;
}

/* sdp_proc.c */
void sdp_sock_list_add(struct sock *sk);
void sdp_sock_list_del(struct sock *sk);
int sdp_proc_init(void);
void sdp_proc_exit(void);

#endif /* _SDP_H */
