/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SDP counters, per network namespace, shown in /proc/net/sdpstats.
 */
#ifndef _SDP_STATS_H
#define _SDP_STATS_H

#include <linux/atomic.h>
#include <net/net_namespace.h>

/* Message ids, packed: 0x00-0x0e as they are, then SinkAvail, SrcAvail, Data. */
#define SDP_MID_SLOTS	18

enum sdp_mib {
	SDP_MIB_ACTIVE_OPENS,		/* connect() established */
	SDP_MIB_PASSIVE_OPENS,		/* a listener's child established */
	SDP_MIB_OPEN_FAILS,		/* connect() refused or unreachable */
	SDP_MIB_LISTEN_DROPS,		/* requests refused: backlog full */
	SDP_MIB_CONN_LIMIT,		/* connections refused: max_user_conns */
	SDP_MIB_BAD_HELLOS,		/* requests refused: malformed Hello */
	SDP_MIB_ORDERLY_CLOSES,		/* both DisConns went through */
	SDP_MIB_RESETS,			/* connections that ended otherwise */
	SDP_MIB_ABORT_PROTOCOL,		/* the peer broke the protocol */
	SDP_MIB_ABORT_LOCAL,		/* close() with unread data, SO_LINGER 0 */
	SDP_MIB_ABORT_PEER,		/* the peer aborted or disconnected */
	SDP_MIB_ABORT_TIMEOUT,		/* an orderly close ran out of time */
	SDP_MIB_ABORT_ERROR,		/* a send or receive failed */
	SDP_MIB_CREDIT_STALLS,		/* a sender waited for credits */
	SDP_MIB_CREDIT_UPDATES,		/* credit updates sent */
	SDP_MIB_RX_MEMORY_STALLS,	/* received data waited for memory */
	SDP_MIB_RX_PAGE_REUSES,		/* read pages given to a receive buffer */
	SDP_MIB_TX_BYTES,		/* payload bytes sent */
	SDP_MIB_TX_ZCOPY_BYTES,		/* of which from the caller's pages */
	SDP_MIB_TX_ZCOPY_DECLINED,	/* such sends copied: sdp_zcopy_pays(), _pick() */
	SDP_MIB_RX_BYTES,		/* payload bytes received */
	SDP_MIB_TX_TRIMS,		/* idle connections freed send pages */
	SDP_MIB_CQ_EVENTS,		/* completion events devices raised */
	SDP_MIB_CQ_TASK_EVENTS,		/* ... in process context */
	SDP_MIB_CQ_HANDOVERS,		/* completion events a waiter polled */
	SDP_MIB_CQ_COMPLETIONS,		/* work completions polled */
	SDP_MIB_RX_BUSY_POLLS,		/* blocking reads that spun for data */
	SDP_MIB_RX_BUSY_POLL_HITS,	/* ... and got it while spinning */
	SDP_MIB_FALLBACK_REFUSED,	/* connect() went TCP: SDP refused */
	SDP_MIB_FALLBACK_NO_DEVICE,	/* ... no RDMA device on the route */
	SDP_MIB_FALLBACK_TIMEOUT,	/* ... the RDMA CM did not answer */
	SDP_MIB_FALLBACK_FAILS,		/* ... and could not start it */
	SDP_MIB_FALLBACK_ACCEPTS,	/* TCP connections a listener took */
	SDP_MIB_SRC_AVAILS,		/* SrcAvails sent */
	SDP_MIB_SRC_AVAIL_CANCELS,	/* of which the sender cancelled */
	SDP_MIB_SRC_AVAIL_REFUSED,	/* ... the sink ended with SendSM */
	SDP_MIB_TX_READ_ZCOPY_BYTES,	/* payload bytes the peer RDMA-Read */
	SDP_MIB_RX_READ_ZCOPY_BYTES,	/* payload bytes we RDMA-Read */
	SDP_MIB_RX_READ_ZCOPY_DIRECT_BYTES, /* of which into a reader's pages */
	SDP_MIB_TX_MSG,			/* messages sent, by id */
	SDP_MIB_RX_MSG = SDP_MIB_TX_MSG + SDP_MID_SLOTS,
	SDP_MIB_MAX = SDP_MIB_RX_MSG + SDP_MID_SLOTS,
};

/*
 * @mib: the counters
 * @user_conns: connections of users' sockets (not the kernel's, as NFS's)
 *	that hold or are making their RDMA resources, at most
 *	max_user_conns (sdp_conn_count())
 */
struct sdp_net {
	atomic64_t	mib[SDP_MIB_MAX];
	atomic_t	user_conns;
};

struct sdp_net *sdp_net(const struct net *net);
int sdp_mid_slot(u8 mid);
int sdp_stats_init(void);
void sdp_stats_exit(void);

static inline void sdp_stat_add(const struct net *net, enum sdp_mib item,
				s64 n)
{
	atomic64_add(n, &sdp_net(net)->mib[item]);
}

static inline void sdp_stat_inc(const struct net *net, enum sdp_mib item)
{
	sdp_stat_add(net, item, 1);
}

/* A message sent or received; ids with no slot are counted nowhere. */
static inline void sdp_stat_msg(const struct net *net, enum sdp_mib dir,
				u8 mid)
{
	int slot = sdp_mid_slot(mid);

	if (slot >= 0)
		sdp_stat_inc(net, dir + slot);
}

#endif /* _SDP_STATS_H */
