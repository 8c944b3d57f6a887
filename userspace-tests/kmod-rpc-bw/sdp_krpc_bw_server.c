// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_krpc_bw_server: the RPC bandwidth program (sdp_bw_proto.h) served by
 * the kernel's SunRPC server, over TCP and SDP.  A test module: not
 * installed, loaded by the tests with the patched sunrpc.ko in place.
 *
 * Loading it starts the service: listeners of the transport classes "tcp"
 * and "sdp" (the SDP class of the SunRPC series), each for IPv4 and IPv6,
 * all on the port @port; the TCP ones registered with rpcbind (which must
 * run), the SDP ones not (an SDP service is found through its TCP twin);
 * and @threads threads that receive and process the calls.  Unloading it
 * closes every transport, withdraws the registrations and stops the
 * threads.
 *
 * WRITE checks every byte of the block it receives, WRITE_STAMPED the
 * stamps of its block (both count in blocks and bytes), READ answers with a
 * block of the pattern in pages, STATS tells what WRITE counted, NETID the
 * transport class of the call and its address family ("sdp6" ...).
 *
 * debugfs, /sys/kernel/debug/sdp_krpc_bw_server/stats, one line:
 *   "blocks=N bad=N bytes=N read_blocks=N read_bytes=N calls=N port=P"
 *   (WRITE blocks intact, damaged, the intact ones' bytes; READ blocks
 *   and bytes sent; every call; the port)
 */
#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/freezer.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/socket.h>
#include <linux/sunrpc/svc.h>
#include <linux/sunrpc/svc_xprt.h>
#include <linux/sunrpc/svcsock.h>
#include <linux/sunrpc/xdr.h>
#include <net/net_namespace.h>

#include "sdp_krpc_bw.h"
#include "sdp_krpc_svc_compat.h"

static unsigned short port = 20050;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "The port of every listener (TCP and SDP, IPv4 and IPv6)");

static unsigned int threads = 4;
module_param(threads, uint, 0444);
MODULE_PARM_DESC(threads, "Service threads (1 to 64)");

#define KBS_MAX_THREADS		64

/* What the service counted since it was loaded (STATS, debugfs). */
static atomic64_t kbs_blocks;		/* WRITE blocks intact */
static atomic64_t kbs_bad_blocks;	/* WRITE blocks damaged */
static atomic64_t kbs_bytes;		/* the intact blocks' bytes */
static atomic64_t kbs_read_blocks;	/* READ blocks sent */
static atomic64_t kbs_read_bytes;
static atomic64_t kbs_calls;		/* calls of every procedure */

/*
 * Arguments and results of one call, in rqstp->rq_argp and rq_resp (each
 * as large as the union: the version's vs_xdrsize).
 */
struct kbs_write_args {
	u32		stream;
	u32		seq;
	struct xdr_buf	payload;	/* the block, where rq_arg holds it */
};

struct kbs_read_args {
	u32		stream;
	u32		seq;
	u32		len;
};

struct kbs_read_res {
	u32		stream;
	u32		seq;
	u32		len;
	struct page	**pages;	/* rqstp's own, from rq_next_page */
};

union kbs_xdr {
	struct kbs_write_args	write_args;
	struct kbs_read_args	read_args;
	struct kbs_read_res	read_res;
	u32			status;
	char			netid[SDP_BW_NETID_MAX];
};

/* Sizes of the replies in XDR words, for svc_reserve_auth(). */
#define KBS_VOID_SZ	0
#define KBS_STATUS_SZ	1
#define KBS_READ_SZ	(3 + (SDP_KRPC_MAX_BLOCK >> 2) + 1)
#define KBS_STATS_SZ	6
#define KBS_NETID_SZ	(1 + (SDP_BW_NETID_MAX >> 2))

static bool kbs_dec_void(struct svc_rqst *rqstp, struct xdr_stream *xdr)
{
	return true;
}

static bool kbs_enc_void(struct svc_rqst *rqstp, struct xdr_stream *xdr)
{
	return true;
}

static bool kbs_dec_write(struct svc_rqst *rqstp, struct xdr_stream *xdr)
{
	struct kbs_write_args *args = rqstp->rq_argp;
	u32 len;

	if (xdr_stream_decode_u32(xdr, &args->stream) < 0 ||
	    xdr_stream_decode_u32(xdr, &args->seq) < 0 ||
	    xdr_stream_decode_u32(xdr, &len) < 0 ||
	    len > SDP_KRPC_MAX_BLOCK)
		return false;
	return xdr_stream_subsegment(xdr, &args->payload, len);
}

static bool kbs_enc_status(struct svc_rqst *rqstp, struct xdr_stream *xdr)
{
	const union kbs_xdr *res = rqstp->rq_resp;

	return xdr_stream_encode_u32(xdr, res->status) > 0;
}

static bool kbs_dec_read(struct svc_rqst *rqstp, struct xdr_stream *xdr)
{
	struct kbs_read_args *args = rqstp->rq_argp;

	return !xdr_stream_decode_u32(xdr, &args->stream) &&
	       !xdr_stream_decode_u32(xdr, &args->seq) &&
	       !xdr_stream_decode_u32(xdr, &args->len) &&
	       args->len <= SDP_KRPC_MAX_BLOCK;
}

static bool kbs_enc_read(struct svc_rqst *rqstp, struct xdr_stream *xdr)
{
	const struct kbs_read_res *res = rqstp->rq_resp;

	if (xdr_stream_encode_u32(xdr, res->stream) < 0 ||
	    xdr_stream_encode_u32(xdr, res->seq) < 0 ||
	    xdr_stream_encode_u32(xdr, res->len) < 0)
		return false;
	xdr_write_pages(xdr, res->pages, 0, res->len);
	return true;
}

static bool kbs_enc_stats(struct svc_rqst *rqstp, struct xdr_stream *xdr)
{
	return xdr_stream_encode_u64(xdr, atomic64_read(&kbs_blocks)) > 0 &&
	       xdr_stream_encode_u64(xdr, atomic64_read(&kbs_bad_blocks)) > 0 &&
	       xdr_stream_encode_u64(xdr, atomic64_read(&kbs_bytes)) > 0;
}

static bool kbs_enc_netid(struct svc_rqst *rqstp, struct xdr_stream *xdr)
{
	const union kbs_xdr *res = rqstp->rq_resp;

	return xdr_stream_encode_opaque(xdr, res->netid,
					strlen(res->netid)) > 0;
}

static __be32 kbs_proc_void(struct svc_rqst *rqstp)
{
	return rpc_success;
}

/* Counts a WRITE block, intact or not, and answers so. */
static __be32 kbs_write_done(struct svc_rqst *rqstp, bool intact)
{
	struct kbs_write_args *args = rqstp->rq_argp;
	union kbs_xdr *res = rqstp->rq_resp;

	if (intact) {
		atomic64_inc(&kbs_blocks);
		atomic64_add(args->payload.len, &kbs_bytes);
		res->status = 0;
	} else {
		atomic64_inc(&kbs_bad_blocks);
		res->status = 1;
	}
	return rpc_success;
}

static __be32 kbs_proc_write(struct svc_rqst *rqstp)
{
	struct kbs_write_args *args = rqstp->rq_argp;
	struct sdp_bw_pattern p;

	sdp_bw_pattern_init(&p, args->stream, args->seq);
	return kbs_write_done(rqstp,
			      sdp_krpc_check_xdr_buf(&p, &args->payload));
}

static __be32 kbs_proc_write_stamped(struct svc_rqst *rqstp)
{
	struct kbs_write_args *args = rqstp->rq_argp;

	return kbs_write_done(rqstp, sdp_krpc_stamps_ok(&args->payload,
							args->stream,
							args->seq));
}

/*
 * The block goes out in the request's own reply pages, from rq_next_page
 * on; moving rq_next_page past them hands them to the transport, which
 * releases them once sent (the socket may still hold them: they are not
 * reused) and gives the thread new ones.
 */
static __be32 kbs_proc_read(struct svc_rqst *rqstp)
{
	const struct kbs_read_args *args = rqstp->rq_argp;
	struct kbs_read_res *res = rqstp->rq_resp;
	unsigned int npages = DIV_ROUND_UP(args->len, PAGE_SIZE);
	struct sdp_bw_pattern p;
	u32 stream = args->stream, seq = args->seq, len = args->len;

	if (rqstp->rq_next_page + npages > rqstp->rq_page_end)
		return rpc_system_err;
	res->stream = stream;	/* (args and res are distinct buffers) */
	res->seq = seq;
	res->len = len;
	res->pages = rqstp->rq_next_page;
	sdp_bw_pattern_init(&p, stream, seq);
	sdp_krpc_fill_pages(&p, res->pages, 0, len);
	rqstp->rq_next_page += npages;
	atomic64_inc(&kbs_read_blocks);
	atomic64_add(len, &kbs_read_bytes);
	return rpc_success;
}

/* The netid of the call's transport: its class, "6" for IPv6. */
static __be32 kbs_proc_netid(struct svc_rqst *rqstp)
{
	const struct svc_xprt *xprt = rqstp->rq_xprt;
	union kbs_xdr *res = rqstp->rq_resp;

	snprintf(res->netid, sizeof(res->netid), "%s%s",
		 xprt->xpt_class->xcl_name,
		 xprt->xpt_local.ss_family == AF_INET6 ? "6" : "");
	return rpc_success;
}

static __be32 kbs_proc_stats(struct svc_rqst *rqstp)
{
	return rpc_success;
}

static const struct svc_procedure kbs_procedures[SDP_BW_NPROCS] = {
	[SDP_BW_NULL] = {
		.pc_func	= kbs_proc_void,
		.pc_decode	= kbs_dec_void,
		.pc_encode	= kbs_enc_void,
		.pc_xdrressize	= KBS_VOID_SZ,
		.pc_name	= "NULL",
	},
	[SDP_BW_WRITE] = {
		.pc_func	= kbs_proc_write,
		.pc_decode	= kbs_dec_write,
		.pc_encode	= kbs_enc_status,
		.pc_argsize	= sizeof(struct kbs_write_args),
		.pc_argzero	= sizeof(struct kbs_write_args),
		.pc_ressize	= sizeof(u32),
		.pc_xdrressize	= KBS_STATUS_SZ,
		.pc_name	= "WRITE",
	},
	[SDP_BW_WRITE_STAMPED] = {
		.pc_func	= kbs_proc_write_stamped,
		.pc_decode	= kbs_dec_write,
		.pc_encode	= kbs_enc_status,
		.pc_argsize	= sizeof(struct kbs_write_args),
		.pc_argzero	= sizeof(struct kbs_write_args),
		.pc_ressize	= sizeof(u32),
		.pc_xdrressize	= KBS_STATUS_SZ,
		.pc_name	= "WRITE_STAMPED",
	},
	[SDP_BW_READ] = {
		.pc_func	= kbs_proc_read,
		.pc_decode	= kbs_dec_read,
		.pc_encode	= kbs_enc_read,
		.pc_argsize	= sizeof(struct kbs_read_args),
		.pc_argzero	= sizeof(struct kbs_read_args),
		.pc_ressize	= sizeof(struct kbs_read_res),
		.pc_xdrressize	= KBS_READ_SZ,
		.pc_name	= "READ",
	},
	[SDP_BW_STATS] = {
		.pc_func	= kbs_proc_stats,
		.pc_decode	= kbs_dec_void,
		.pc_encode	= kbs_enc_stats,
		.pc_xdrressize	= KBS_STATS_SZ,
		.pc_name	= "STATS",
	},
	[SDP_BW_NETID] = {
		.pc_func	= kbs_proc_netid,
		.pc_decode	= kbs_dec_void,
		.pc_encode	= kbs_enc_netid,
		.pc_ressize	= SDP_BW_NETID_MAX,
		.pc_xdrressize	= KBS_NETID_SZ,
		.pc_name	= "NETID",
	},
};

/* As lockd's dispatcher: decode, process, encode. */
static int kbs_dispatch(SDP_SVC_DISPATCH_ARGS)
{
	const struct svc_procedure *procp = rqstp->rq_procinfo;
	__be32 *accept_statp = SDP_SVC_ACCEPT_STATP;

	atomic64_inc(&kbs_calls);
	sdp_svcxdr_init_decode(rqstp);
	if (!procp->pc_decode(rqstp, &rqstp->rq_arg_stream)) {
		*accept_statp = rpc_garbage_args;
		return 1;
	}
	*accept_statp = procp->pc_func(rqstp);
	if (*accept_statp != rpc_success)
		return 1;
	sdp_svcxdr_init_encode(rqstp);
	if (!procp->pc_encode(rqstp, &rqstp->rq_res_stream))
		*accept_statp = rpc_system_err;
	return 1;
}

/*
 * The one version's procedures, as svc_generic_init_request() finds them,
 * without its per-procedure counts (of a different form on each kernel).
 */
static __be32 kbs_init_request(struct svc_rqst *rqstp,
			       const struct svc_program *progp,
			       struct svc_process_info *ret)
{
	const struct svc_procedure *procp;

	if (rqstp->rq_vers != SDP_BW_VERS) {
		ret->mismatch.lovers = SDP_BW_VERS;
		ret->mismatch.hivers = SDP_BW_VERS;
		return rpc_prog_mismatch;
	}
	if (rqstp->rq_proc >= SDP_BW_NPROCS)
		return rpc_proc_unavail;
	procp = &kbs_procedures[rqstp->rq_proc];
	rqstp->rq_procinfo = procp;
	memset(rqstp->rq_argp, 0, procp->pc_argzero);
	memset(rqstp->rq_resp, 0, procp->pc_ressize);
	ret->dispatch = kbs_dispatch;
	return rpc_success;
}

static const struct svc_version kbs_version1 = {
	.vs_vers	= SDP_BW_VERS,
	.vs_nproc	= SDP_BW_NPROCS,
	.vs_proc	= kbs_procedures,
	.vs_dispatch	= kbs_dispatch,
	.vs_xdrsize	= sizeof(union kbs_xdr),
};

static const struct svc_version *kbs_versions[SDP_BW_VERS + 1] = {
	[SDP_BW_VERS] = &kbs_version1,
};

static struct svc_program kbs_program = {
	.pg_prog		= SDP_BW_PROG,
	.pg_nvers		= ARRAY_SIZE(kbs_versions),
	.pg_vers		= kbs_versions,
	.pg_name		= "sdp_krpc_bw",
	.pg_class		= "sdp_krpc_bw",
	.pg_authenticate	= sdp_svc_authenticate_any,
	.pg_init_request	= kbs_init_request,
	.pg_rpcbind_set		= svc_generic_rpcbind_set,
};

/*
 * The service: created at load, destroyed at unload.  This module holds
 * one reference and each thread one (svc_set_num_threads()); the last
 * one frees it (sdp_svc_destroy()).
 */
static struct svc_serv *kbs_serv;
static struct dentry *kbs_dir;

/* A service thread, as lockd's: receive a call, process it, until stopped. */
static int kbs_thread(void *data)
{
	struct svc_rqst *rqstp = data;

	sdp_svc_thread_ready(rqstp);
	set_freezable();
	while (!sdp_svc_thread_should_stop(rqstp))
		sdp_svc_serve(rqstp);
	svc_exit_thread(rqstp);
	return 0;
}

static const struct {
	const char *class;
	int family;
} kbs_listeners[] = {
	{ "tcp", PF_INET },
	{ "tcp", PF_INET6 },
	{ "sdp", PF_INET },
	{ "sdp", PF_INET6 },
};

static int kbs_listen(struct svc_serv *serv, struct net *net)
{
	int i, err;

	for (i = 0; i < ARRAY_SIZE(kbs_listeners); i++) {
		err = svc_xprt_create(serv, kbs_listeners[i].class, net,
				      kbs_listeners[i].family, port,
				      SVC_SOCK_DEFAULTS, current_cred());
		if (err < 0) {
			pr_err("sdp_krpc_bw_server: no %s%s listener on port %u: %d (rpcbind running? sdp.ko and the patched sunrpc.ko loaded?)\n",
			       kbs_listeners[i].class,
			       kbs_listeners[i].family == PF_INET6 ? "6" : "",
			       port, err);
			return err;
		}
	}
	return 0;
}

static int kbs_stats_show(struct seq_file *m, void *v)
{
	seq_printf(m, "blocks=%lld bad=%lld bytes=%lld read_blocks=%lld read_bytes=%lld calls=%lld port=%u\n",
		   atomic64_read(&kbs_blocks), atomic64_read(&kbs_bad_blocks),
		   atomic64_read(&kbs_bytes), atomic64_read(&kbs_read_blocks),
		   atomic64_read(&kbs_read_bytes), atomic64_read(&kbs_calls),
		   port);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kbs_stats);

static int __init kbs_init(void)
{
	struct net *net = &init_net;
	struct svc_serv *serv;
	int err;

	if (!port || !threads || threads > KBS_MAX_THREADS)
		return -EINVAL;
	serv = svc_create(&kbs_program, SDP_KRPC_MAX_BLOCK, kbs_thread);
	if (!serv)
		return -ENOMEM;
	err = svc_bind(serv, net);	/* rpcbind client; stale entries gone */
	if (err) {
		pr_err("sdp_krpc_bw_server: no rpcbind client: %d\n", err);
		goto out_put;
	}
	err = kbs_listen(serv, net);
	if (err)
		goto out_close;
	err = sdp_svc_set_num_threads(serv, threads);
	if (err)
		goto out_threads;

	kbs_serv = serv;
	kbs_dir = debugfs_create_dir("sdp_krpc_bw_server", NULL);
	debugfs_create_file("stats", 0444, kbs_dir, NULL, &kbs_stats_fops);
	return 0;

out_threads:
	sdp_svc_set_num_threads(serv, 0);
out_close:
	sdp_svc_close_all(serv, net);
out_put:
	sdp_svc_destroy(&serv);
	return err;
}

/*
 * As lockd goes down: transports closed (the threads finish the calls in
 * hand), registrations withdrawn, then the threads stopped; the last
 * reference frees the service.
 */
static void __exit kbs_exit(void)
{
	struct net *net = &init_net;

	debugfs_remove_recursive(kbs_dir);
	sdp_svc_close_all(kbs_serv, net);
	sdp_svc_set_num_threads(kbs_serv, 0);
	sdp_svc_destroy(&kbs_serv);
}

module_init(kbs_init);
module_exit(kbs_exit);

MODULE_DESCRIPTION("RPC bandwidth test server over TCP and SDP (kernel SunRPC)");
MODULE_LICENSE("GPL");
