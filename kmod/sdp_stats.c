// SPDX-License-Identifier: GPL-2.0
/*
 * SDP counters, per network namespace: /proc/net/sdpstats, one "Name
 * value" line each, in the manner of /proc/net/netstat's names; and the
 * module's buffer memory (sdp_dev.c).
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/netns/generic.h>

#include "sdp.h"
#include "sdp_wire.h"

static unsigned int sdp_net_id __read_mostly;

static const char * const sdp_mib_names[SDP_MIB_TX_MSG] = {
	[SDP_MIB_ACTIVE_OPENS]		= "ActiveOpens",
	[SDP_MIB_PASSIVE_OPENS]		= "PassiveOpens",
	[SDP_MIB_OPEN_FAILS]		= "OpenFails",
	[SDP_MIB_LISTEN_DROPS]		= "ListenDrops",
	[SDP_MIB_CONN_LIMIT]		= "ConnLimitDrops",
	[SDP_MIB_BAD_HELLOS]		= "BadHellos",
	[SDP_MIB_ORDERLY_CLOSES]	= "OrderlyCloses",
	[SDP_MIB_RESETS]		= "Resets",
	[SDP_MIB_ABORT_PROTOCOL]	= "AbortOnProtocolError",
	[SDP_MIB_ABORT_LOCAL]		= "AbortOnClose",
	[SDP_MIB_ABORT_PEER]		= "AbortByPeer",
	[SDP_MIB_ABORT_TIMEOUT]		= "AbortOnCloseTimeout",
	[SDP_MIB_ABORT_ERROR]		= "AbortOnTransportError",
	[SDP_MIB_CREDIT_STALLS]		= "CreditStalls",
	[SDP_MIB_CREDIT_UPDATES]	= "CreditUpdates",
	[SDP_MIB_RX_MEMORY_STALLS]	= "RxMemoryStalls",
	[SDP_MIB_RX_PAGE_REUSES]	= "RxPageReuses",
	[SDP_MIB_TX_BYTES]		= "TxBytes",
	[SDP_MIB_TX_ZCOPY_BYTES]	= "TxZcopyBytes",
	[SDP_MIB_TX_ZCOPY_DECLINED]	= "TxZcopyDeclined",
	[SDP_MIB_RX_BYTES]		= "RxBytes",
	[SDP_MIB_TX_TRIMS]		= "TxBufferTrims",
	[SDP_MIB_CQ_EVENTS]		= "CqEvents",
	[SDP_MIB_CQ_TASK_EVENTS]	= "CqEventsInTask",
	[SDP_MIB_CQ_HANDOVERS]		= "CqEventHandovers",
	[SDP_MIB_CQ_COMPLETIONS]	= "CqCompletions",
	[SDP_MIB_RX_BUSY_POLLS]		= "RxBusyPolls",
	[SDP_MIB_RX_BUSY_POLL_HITS]	= "RxBusyPollHits",
	[SDP_MIB_FALLBACK_REFUSED]	= "FallbackRefused",
	[SDP_MIB_FALLBACK_NO_DEVICE]	= "FallbackNoDevice",
	[SDP_MIB_FALLBACK_TIMEOUT]	= "FallbackTimeout",
	[SDP_MIB_FALLBACK_FAILS]	= "FallbackFails",
	[SDP_MIB_FALLBACK_ACCEPTS]	= "FallbackAccepts",
	[SDP_MIB_SRC_AVAILS]		= "SrcAvails",
	[SDP_MIB_SRC_AVAIL_CANCELS]	= "SrcAvailCancels",
	[SDP_MIB_SRC_AVAIL_REFUSED]	= "SrcAvailRefused",
	[SDP_MIB_TX_READ_ZCOPY_BYTES]	= "TxReadZcopyBytes",
	[SDP_MIB_RX_READ_ZCOPY_BYTES]	= "RxReadZcopyBytes",
	[SDP_MIB_RX_READ_ZCOPY_DIRECT_BYTES] = "RxReadZcopyDirectBytes",
};

static const char * const sdp_mid_names[SDP_MID_SLOTS] = {
	"Hello", "HelloAck", "DisConn", "AbortConn", "SendSM", "RdmaWrCompl",
	"RdmaRdCompl", "ModeChange", "SrcAvailCancel", "SinkAvailCancel",
	"SinkCancelAck", "ChRcvBuf", "ChRcvBufAck", "SuspComm", "SuspCommAck",
	"SinkAvail", "SrcAvail", "Data",
};

struct sdp_net *sdp_net(const struct net *net)
{
	return net_generic(net, sdp_net_id);
}

int sdp_mid_slot(u8 mid)
{
	if (mid <= SDP_MID_SUSP_COMM_ACK)
		return mid;
	if (mid >= SDP_MID_SINK_AVAIL)
		return mid - SDP_MID_SINK_AVAIL + SDP_MID_SUSP_COMM_ACK + 1;
	return -1;
}

static int sdp_stats_show(struct seq_file *seq, void *v)
{
	struct sdp_net *sn = sdp_net(seq_file_single_net(seq));
	int i;

	for (i = 0; i < SDP_MIB_TX_MSG; i++)
		seq_printf(seq, "%s %lld\n", sdp_mib_names[i],
			   atomic64_read(&sn->mib[i]));
	/* Not counters: bytes the module holds now, in all namespaces. */
	seq_printf(seq, "BufferMemory %ld\n", sdp_mem_total());
	seq_printf(seq, "PoolMemory %ld\n", sdp_mem_pools());
	seq_printf(seq, "PoolBuffersPosted %ld\n", sdp_pool_buffers_posted());
	seq_printf(seq, "PoolsMade %ld\n", sdp_pools_made());
	for (i = 0; i < SDP_MID_SLOTS; i++)
		seq_printf(seq, "TxMsg%s %lld\n", sdp_mid_names[i],
			   atomic64_read(&sn->mib[SDP_MIB_TX_MSG + i]));
	for (i = 0; i < SDP_MID_SLOTS; i++)
		seq_printf(seq, "RxMsg%s %lld\n", sdp_mid_names[i],
			   atomic64_read(&sn->mib[SDP_MIB_RX_MSG + i]));
	return 0;
}

static int __net_init sdp_stats_net_init(struct net *net)
{
	if (!proc_create_net_single("sdpstats", 0444, net->proc_net,
				    sdp_stats_show, NULL))
		return -ENOMEM;
	return 0;
}

static void __net_exit sdp_stats_net_exit(struct net *net)
{
	remove_proc_entry("sdpstats", net->proc_net);
}

static struct pernet_operations sdp_stats_net_ops = {
	.init	= sdp_stats_net_init,
	.exit	= sdp_stats_net_exit,
	.id	= &sdp_net_id,
	.size	= sizeof(struct sdp_net),
};

int sdp_stats_init(void)
{
	return register_pernet_subsys(&sdp_stats_net_ops);
}

void sdp_stats_exit(void)
{
	unregister_pernet_subsys(&sdp_stats_net_ops);
}
