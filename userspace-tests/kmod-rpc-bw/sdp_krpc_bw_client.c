// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_krpc_bw_client: the RPC bandwidth program's client (sdp_bw_proto.h)
 * on the kernel's SunRPC client, over TCP or SDP.  A test module: not
 * installed, loaded by the tests with the patched sunrpc.ko in place.
 *
 * debugfs, in /sys/kernel/debug/sdp_krpc_bw_client/:
 *   run     write "ADDR PORT NETID PROC BLOCK TOTAL CONNS [DEPTH]": CONNS
 *           connections, each an RPC client of its own (rpc_create()), each
 *           with DEPTH calls in flight (default 1): DEPTH kernel threads a
 *           connection, one call at a time each, the first on the client,
 *           the others on clones of it (rpc_clone_client(): the same
 *           transport, so the same connection, as an NFS mount's slots).
 *           Together they move TOTAL bytes in calls of BLOCK bytes (the
 *           last one of a thread may be shorter) to the server at ADDR
 *           (IPv4 or IPv6) PORT (0: ask its rpcbind, over TCP, which the
 *           SunRPC series does for sdp too).
 *           NETID: tcp, tcp6, sdp or sdp6; PROC: write (WRITE calls, which
 *           the server checks), stamped (WRITE_STAMPED calls: the caller's
 *           block is filled once and stamped for each call, the server
 *           checks the stamps) or read (READ calls, checked here); BLOCK:
 *           1 to 1 MiB; CONNS: 1 to 64; DEPTH: 1 to 16, at most 64 threads
 *           in all.  The write returns when the run is over: the first
 *           error of a call, if any (-EBUSY while another run goes on,
 *           -EINVAL for a bad line).  A signal that kills the writer ends
 *           the run early.
 *   result  the last run, one line:
 *           "calls=N bytes=N ns=N errors=N bad_read=N bad_write=N
 *            first_error=E netid=X server_netid=Y proc=P block=N conns=N
 *            depth=N"
 *           calls and bytes: those that succeeded; ns: from the moment
 *           every connection was up to the end of the last call (not
 *           counting the connections' teardown); errors: calls that failed
 *           (a thread stops at its first); bad_read: READ blocks whose
 *           content was wrong; bad_write: WRITE blocks the server found
 *           damaged; first_error: the first error (0 or -errno; -EINTR:
 *           the run was interrupted); netid: the
 *           client's transport, server_netid: what the server said of its
 *           end (procedure NETID), both of the first connection
 *
 * The data is in pages: WRITE sends them with xdr_write_pages(), READ
 * receives into them (rpc_prepare_reply_pages()).
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sunrpc/addr.h>
#include <linux/sunrpc/clnt.h>
#include <linux/sunrpc/stats.h>
#include <linux/sunrpc/xprt.h>
#include <net/net_namespace.h>

#include "sdp_krpc_bw.h"
#include "sdp_ktest.h"

/*
 * The SunRPC series' client transport ident for SDP.  The stock headers,
 * which this module builds against, lack it (Kbuild defines
 * SDP_HAVE_XPRT_TRANSPORT_SDP when they have it).
 */
#ifndef SDP_HAVE_XPRT_TRANSPORT_SDP
#define XPRT_TRANSPORT_SDP	0x1000
#endif

static unsigned int timeout_s = 30;
module_param(timeout_s, uint, 0644);
MODULE_PARM_DESC(timeout_s, "Seconds an RPC call waits for its reply, twice (at least 1)");

#define KBC_MAX_CALLERS		64	/* threads of a run */
#define KBC_MAX_DEPTH		16	/* calls in flight a connection */
#define KBC_RESULT_SIZE		320
#define KBC_CMD_SIZE		160	/* a command line and its NUL */

/* Argument and reply sizes in XDR words, beyond the pages. */
#define KBC_WRITE_ARG_SZ	(3 + 1)		/* stream, seq, len; pad */
#define KBC_STATUS_SZ		1
#define KBC_READ_ARG_SZ		3
#define KBC_READ_HDR_SZ		3		/* before the pages */
#define KBC_READ_RES_SZ		(KBC_READ_HDR_SZ + 1)
#define KBC_NETID_SZ		(1 + (SDP_BW_NETID_MAX >> 2))
#define KBC_STATS_SZ		6
/* No arguments; call_allocate() wants a size for every procedure but 0. */
#define KBC_VOID_ARG_SZ		1

struct kbc_block {
	u32		stream;
	u32		seq;
	u32		len;
	struct page	**pages;
};

struct kbc_netid {
	char		name[SDP_BW_NETID_MAX];
};

static void kbc_enc_void(struct rpc_rqst *req, struct xdr_stream *xdr,
			 const void *data)
{
}

static int kbc_dec_void(struct rpc_rqst *req, struct xdr_stream *xdr,
			void *data)
{
	return 0;
}

static void kbc_enc_write(struct rpc_rqst *req, struct xdr_stream *xdr,
			  const void *data)
{
	const struct kbc_block *b = data;

	xdr_stream_encode_u32(xdr, b->stream);
	xdr_stream_encode_u32(xdr, b->seq);
	xdr_stream_encode_u32(xdr, b->len);
	xdr_write_pages(xdr, b->pages, 0, b->len);
}

static int kbc_dec_status(struct rpc_rqst *req, struct xdr_stream *xdr,
			  void *data)
{
	return xdr_stream_decode_u32(xdr, data) ? -EIO : 0;
}

/* The reply's block goes straight to the caller's pages. */
static void kbc_enc_read(struct rpc_rqst *req, struct xdr_stream *xdr,
			 const void *data)
{
	const struct kbc_block *b = data;

	xdr_stream_encode_u32(xdr, b->stream);
	xdr_stream_encode_u32(xdr, b->seq);
	xdr_stream_encode_u32(xdr, b->len);
	rpc_prepare_reply_pages(req, b->pages, 0, b->len, KBC_READ_HDR_SZ);
}

/* -EIO unless the reply carries the block asked for, all of it. */
static int kbc_dec_read(struct rpc_rqst *req, struct xdr_stream *xdr,
			void *data)
{
	struct kbc_block *b = data;
	u32 stream, seq, len;

	if (xdr_stream_decode_u32(xdr, &stream) ||
	    xdr_stream_decode_u32(xdr, &seq) ||
	    xdr_stream_decode_u32(xdr, &len))
		return -EIO;
	if (stream != b->stream || seq != b->seq || len != b->len)
		return -EIO;
	return xdr_read_pages(xdr, len) == len ? 0 : -EIO;
}

static int kbc_dec_netid(struct rpc_rqst *req, struct xdr_stream *xdr,
			 void *data)
{
	struct kbc_netid *n = data;
	ssize_t len;
	void *p;

	/* (not xdr_stream_decode_string(): the newest kernels lack it) */
	len = xdr_stream_decode_opaque_inline(xdr, &p, sizeof(n->name) - 1);
	if (len < 0)
		return -EIO;
	memcpy(n->name, p, len);
	n->name[len] = '\0';
	return 0;
}

static const struct rpc_procinfo kbc_procedures[SDP_BW_NPROCS] = {
	[SDP_BW_NULL] = {
		.p_proc		= SDP_BW_NULL,
		.p_encode	= kbc_enc_void,
		.p_decode	= kbc_dec_void,
		.p_statidx	= SDP_BW_NULL,
		.p_name		= "NULL",
	},
	[SDP_BW_WRITE] = {
		.p_proc		= SDP_BW_WRITE,
		.p_encode	= kbc_enc_write,
		.p_decode	= kbc_dec_status,
		.p_arglen	= KBC_WRITE_ARG_SZ,
		.p_replen	= KBC_STATUS_SZ,
		.p_statidx	= SDP_BW_WRITE,
		.p_name		= "WRITE",
	},
	[SDP_BW_WRITE_STAMPED] = {
		.p_proc		= SDP_BW_WRITE_STAMPED,
		.p_encode	= kbc_enc_write,
		.p_decode	= kbc_dec_status,
		.p_arglen	= KBC_WRITE_ARG_SZ,
		.p_replen	= KBC_STATUS_SZ,
		.p_statidx	= SDP_BW_WRITE_STAMPED,
		.p_name		= "WRITE_STAMPED",
	},
	[SDP_BW_READ] = {
		.p_proc		= SDP_BW_READ,
		.p_encode	= kbc_enc_read,
		.p_decode	= kbc_dec_read,
		.p_arglen	= KBC_READ_ARG_SZ,
		.p_replen	= KBC_READ_RES_SZ,
		.p_statidx	= SDP_BW_READ,
		.p_name		= "READ",
	},
	[SDP_BW_STATS] = {
		.p_proc		= SDP_BW_STATS,
		.p_encode	= kbc_enc_void,
		.p_decode	= kbc_dec_void,
		.p_arglen	= KBC_VOID_ARG_SZ,
		.p_replen	= KBC_STATS_SZ,
		.p_statidx	= SDP_BW_STATS,
		.p_name		= "STATS",
	},
	[SDP_BW_NETID] = {
		.p_proc		= SDP_BW_NETID,
		.p_encode	= kbc_enc_void,
		.p_decode	= kbc_dec_netid,
		.p_arglen	= KBC_VOID_ARG_SZ,
		.p_replen	= KBC_NETID_SZ,
		.p_statidx	= SDP_BW_NETID,
		.p_name		= "NETID",
	},
};

/* Call counts of every client of the program (SunRPC's, not atomic). */
static unsigned int kbc_counts[SDP_BW_NPROCS];

static const struct rpc_version kbc_version1 = {
	.number		= SDP_BW_VERS,
	.nrprocs	= SDP_BW_NPROCS,
	.procs		= kbc_procedures,
	.counts		= kbc_counts,
};

static const struct rpc_version *kbc_versions[SDP_BW_VERS + 1] = {
	[SDP_BW_VERS] = &kbc_version1,
};

static const struct rpc_program kbc_program;

static struct rpc_stat kbc_stats = {
	.program	= &kbc_program,
};

static const struct rpc_program kbc_program = {
	.name		= "sdp_krpc_bw",
	.number		= SDP_BW_PROG,
	.nrvers		= ARRAY_SIZE(kbc_versions),
	.version	= kbc_versions,
	.stats		= &kbc_stats,
};

struct kbc_run;

/**
 * struct kbc_caller - one thread of a run and its calls, one at a time
 * @run: the run
 * @task: the thread (a reference held by the run until kthread_stop())
 * @first: the first caller of its connection (itself if it is that one)
 * @up: completed by the first caller of a connection once its client is
 *	created, or could not be (then @clnt stays NULL)
 * @clnt: its RPC client while calls may be under way, else NULL; set and
 *	cleared by the thread under @run->lock, read under it by the writer
 *	to kill the calls of a run that must end, and by the connection's
 *	other callers, after @up, to clone it (it stays until they are all
 *	up: the first caller makes no call before then)
 * @stream: the stream number of its blocks
 * @share: the bytes it moves
 * @pages: pages for a block
 * @npages: how many
 * @end_ns: when its last call ended (0: it made none)
 * @netid: its transport's netid
 * @server_netid: what the server said of its end
 */
struct kbc_caller {
	struct kbc_run		*run;
	struct task_struct	*task;
	struct kbc_caller	*first;
	struct completion	up;
	struct rpc_clnt		*clnt;
	u32			stream;
	u64			share;
	struct page		**pages;
	unsigned int		npages;
	u64			end_ns;
	char			netid[SDP_BW_NETID_MAX];
	char			server_netid[SDP_BW_NETID_MAX];
};

/**
 * struct kbc_run - one run, owned by the writer of "run", which frees it
 *	after every thread is stopped
 * @addr: the server's address
 * @addrlen: its length
 * @protocol: XPRT_TRANSPORT_TCP or XPRT_TRANSPORT_SDP
 * @proc: SDP_BW_WRITE, SDP_BW_WRITE_STAMPED or SDP_BW_READ
 * @block: bytes a call
 * @conns: connections
 * @depth: callers a connection
 * @callers: threads, @conns * @depth
 * @stop: the run must end: the threads make no more calls
 * @lock: guards each caller's @clnt
 * @starting: threads not yet past their client's creation
 * @running: threads not yet done
 * @all_up: completed when @starting drops to 0
 * @go: completed by the writer: the threads start their calls
 * @done: completed when @running drops to 0
 * @calls: calls that succeeded
 * @bytes: their bytes
 * @errors: calls that failed, and clients that could not be created
 * @bad_read: READ blocks not intact
 * @bad_write: WRITE blocks the server found damaged
 * @first_error: the first error, 0 if none
 * @caller: the callers, those of connection i at i * @depth onwards
 */
struct kbc_run {
	struct sockaddr_storage	addr;
	size_t			addrlen;
	int			protocol;
	u32			proc;
	u32			block;
	unsigned int		conns;
	unsigned int		depth;
	unsigned int		callers;
	bool			stop;
	spinlock_t		lock;	/* guards each caller's clnt */
	atomic_t		starting;
	atomic_t		running;
	struct completion	all_up;
	struct completion	go;
	struct completion	done;
	atomic64_t		calls;
	atomic64_t		bytes;
	atomic64_t		errors;
	atomic64_t		bad_read;
	atomic64_t		bad_write;
	atomic_t		first_error;
	struct kbc_caller	caller[];
};

static DEFINE_MUTEX(kbc_run_lock);	/* one run at a time */
static DEFINE_MUTEX(kbc_result_lock);
static char kbc_result[KBC_RESULT_SIZE] = "none\n";

static void kbc_error(struct kbc_run *run, int err)
{
	/* calls killed by kbc_kill_calls(): the run was interrupted */
	if (err == -ERESTARTSYS)
		err = -EINTR;
	atomic64_inc(&run->errors);
	atomic_cmpxchg(&run->first_error, 0, err);
}

static struct rpc_clnt *kbc_create_client(struct kbc_run *run)
{
	unsigned long t = max(READ_ONCE(timeout_s), 1U) * HZ;
	struct rpc_timeout timeout = {
		.to_initval	= t,
		.to_maxval	= t,
		.to_retries	= 1,
	};
	struct rpc_create_args args = {
		.net		= &init_net,
		.protocol	= run->protocol,
		.address	= (struct sockaddr *)&run->addr,
		.addrsize	= run->addrlen,
		.timeout	= &timeout,
		.program	= &kbc_program,
		.version	= SDP_BW_VERS,
		.authflavor	= RPC_AUTH_NULL,
		/* an ephemeral port: no reserved ones used up by the runs */
		.flags		= RPC_CLNT_CREATE_NONPRIVPORT,
	};

	return rpc_create(&args);	/* pings the server (NULL) */
}

/*
 * @c's client: a new one (a connection) for the first caller of a
 * connection, a clone of the first caller's (its connection) for the
 * others; NULL if there is none.
 */
static struct rpc_clnt *kbc_caller_client(struct kbc_caller *c)
{
	struct kbc_run *run = c->run;
	struct rpc_clnt *clnt;

	if (c->first == c) {
		clnt = kbc_create_client(run);
	} else {
		wait_for_completion(&c->first->up);
		/* A first without a client counted its error. */
		clnt = c->first->clnt ? rpc_clone_client(c->first->clnt) : NULL;
	}
	if (IS_ERR(clnt)) {
		kbc_error(run, PTR_ERR(clnt));
		clnt = NULL;
	}
	if (clnt) {
		strscpy(c->netid, rpc_peeraddr2str(clnt, RPC_DISPLAY_NETID),
			sizeof(c->netid));
		spin_lock(&run->lock);
		c->clnt = clnt;
		spin_unlock(&run->lock);
	}
	complete_all(&c->up);
	return clnt;
}

static int kbc_call(struct rpc_clnt *clnt, u32 proc, void *argp, void *resp)
{
	struct rpc_message msg = {
		.rpc_proc	= &kbc_procedures[proc],
		.rpc_argp	= argp,
		.rpc_resp	= resp,
	};

	return rpc_call_sync(clnt, &msg, 0);
}

/* The caller's share of the run, in calls of run->block bytes. */
static void kbc_transfer(struct kbc_caller *c, struct rpc_clnt *clnt)
{
	struct kbc_run *run = c->run;
	struct kbc_block b = { .stream = c->stream, .pages = c->pages };
	struct sdp_bw_pattern p;
	u64 moved = 0;
	u32 status;
	int err;

	for (b.seq = 0; moved < c->share && !READ_ONCE(run->stop); b.seq++) {
		b.len = min_t(u64, run->block, c->share - moved);
		if (run->proc != SDP_BW_READ) {
			if (run->proc == SDP_BW_WRITE_STAMPED) {
				sdp_krpc_stamp_pages(b.pages, b.len, b.stream,
						     b.seq);
			} else {
				sdp_bw_pattern_init(&p, b.stream, b.seq);
				sdp_krpc_fill_pages(&p, b.pages, 0, b.len);
			}
			err = kbc_call(clnt, run->proc, &b, &status);
			if (!err && status)
				atomic64_inc(&run->bad_write);
		} else {
			err = kbc_call(clnt, SDP_BW_READ, &b, &b);
			sdp_bw_pattern_init(&p, b.stream, b.seq);
			if (!err && !sdp_krpc_check_pages(&p, b.pages, 0, b.len))
				atomic64_inc(&run->bad_read);
		}
		if (err) {
			kbc_error(run, err);
			return;
		}
		atomic64_inc(&run->calls);
		atomic64_add(b.len, &run->bytes);
		moved += b.len;
	}
}

static int kbc_caller_thread(void *data)
{
	struct kbc_caller *c = data;
	struct kbc_run *run = c->run;
	struct kbc_netid server_netid;
	struct sdp_bw_pattern p;
	struct rpc_clnt *clnt;
	int err;

	clnt = kbc_caller_client(c);
	/* A stamped block is filled once, before the run's clock starts. */
	if (run->proc == SDP_BW_WRITE_STAMPED) {
		sdp_bw_pattern_init(&p, c->stream, 0);
		sdp_krpc_fill_pages(&p, c->pages, 0, run->block);
	}
	if (atomic_dec_and_test(&run->starting))
		complete(&run->all_up);
	wait_for_completion(&run->go);

	if (clnt && !READ_ONCE(run->stop)) {
		err = kbc_call(clnt, SDP_BW_NETID, NULL, &server_netid);
		if (err)
			kbc_error(run, err);
		else
			strscpy(c->server_netid, server_netid.name,
				sizeof(c->server_netid));
		if (!err)
			kbc_transfer(c, clnt);
		c->end_ns = ktime_get_ns();
	}
	if (clnt) {
		spin_lock(&run->lock);
		c->clnt = NULL;
		spin_unlock(&run->lock);
		/* (a clone holds its parent: the connection goes with the last) */
		rpc_shutdown_client(clnt);
	}
	if (atomic_dec_and_test(&run->running))
		complete(&run->done);
	return 0;
}

/* Ends the calls under way: each fails at once (-EINTR in the result). */
static void kbc_kill_calls(struct kbc_run *run)
{
	unsigned int i;

	WRITE_ONCE(run->stop, true);
	spin_lock(&run->lock);
	for (i = 0; i < run->callers; i++)
		if (run->caller[i].clnt)
			rpc_killall_tasks(run->caller[i].clnt);
	spin_unlock(&run->lock);
}

/*
 * Waits for @x.  A fatal signal to the writer ends the run: the threads
 * stop calling, and the calls under way are killed (again and again: a
 * thread may be about to start one); the wait then goes on until @x,
 * which the RPC timeouts bound.
 */
static void kbc_wait(struct kbc_run *run, struct completion *x)
{
	while (!READ_ONCE(run->stop)) {
		if (wait_for_completion_killable_timeout(x, HZ) > 0)
			return;
		if (fatal_signal_pending(current))
			kbc_kill_calls(run);
	}
	while (!wait_for_completion_timeout(x, HZ / 10))
		kbc_kill_calls(run);
}

static void kbc_free_run(struct kbc_run *run)
{
	unsigned int i, j;

	for (i = 0; i < run->callers; i++) {
		struct kbc_caller *c = &run->caller[i];

		if (c->task) {
			kthread_stop(c->task);	/* out of this module's code */
			put_task_struct(c->task);
		}
		for (j = 0; c->pages && j < c->npages; j++)
			if (c->pages[j])
				__free_page(c->pages[j]);
		kfree(c->pages);
	}
	kfree(run);
}

static int kbc_alloc_pages(struct kbc_caller *c, u32 block)
{
	unsigned int i;

	c->npages = DIV_ROUND_UP(block, PAGE_SIZE);
	c->pages = kcalloc(c->npages, sizeof(*c->pages), GFP_KERNEL);
	if (!c->pages)
		return -ENOMEM;
	for (i = 0; i < c->npages; i++) {
		c->pages[i] = alloc_page(GFP_KERNEL);
		if (!c->pages[i])
			return -ENOMEM;
	}
	return 0;
}

/* The run's PROC as its line names it, by procedure. */
static const char *const kbc_proc_names[SDP_BW_NPROCS] = {
	[SDP_BW_WRITE]		= "write",
	[SDP_BW_WRITE_STAMPED]	= "stamped",
	[SDP_BW_READ]		= "read",
};

static void kbc_report(struct kbc_run *run, s64 ns)
{
	struct kbc_caller *c = &run->caller[0];

	mutex_lock(&kbc_result_lock);
	scnprintf(kbc_result, sizeof(kbc_result),
		  "calls=%lld bytes=%lld ns=%lld errors=%lld bad_read=%lld bad_write=%lld first_error=%d netid=%s server_netid=%s proc=%s block=%u conns=%u depth=%u\n",
		  atomic64_read(&run->calls), atomic64_read(&run->bytes), ns,
		  atomic64_read(&run->errors), atomic64_read(&run->bad_read),
		  atomic64_read(&run->bad_write),
		  atomic_read(&run->first_error),
		  c->netid[0] ? c->netid : "-",
		  c->server_netid[0] ? c->server_netid : "-",
		  kbc_proc_names[run->proc], run->block,
		  run->conns, run->depth);
	mutex_unlock(&kbc_result_lock);
}

/* "ADDR PORT NETID PROC BLOCK TOTAL CONNS [DEPTH]" into a new run. */
static struct kbc_run *kbc_parse(const char *cmd)
{
	char addr[64], netid[8], proc[8];
	unsigned int block, conns, depth = 1, callers, i, rem, proc_nr;
	struct sockaddr_storage ss;
	unsigned long long total;
	struct kbc_run *run;
	int fields;
	bool v6;
	size_t len;
	u16 port;

	fields = sscanf(cmd, "%63s %hu %7s %7s %u %llu %u %u", addr, &port,
			netid, proc, &block, &total, &conns, &depth);
	if (fields != 7 && fields != 8)
		return ERR_PTR(-EINVAL);
	if (!block || block > SDP_KRPC_MAX_BLOCK || !conns || !depth ||
	    depth > KBC_MAX_DEPTH || conns > KBC_MAX_CALLERS / depth)
		return ERR_PTR(-EINVAL);
	callers = conns * depth;
	if (total < callers)
		return ERR_PTR(-EINVAL);
	for (proc_nr = 0; proc_nr < SDP_BW_NPROCS; proc_nr++)
		if (kbc_proc_names[proc_nr] &&
		    !strcmp(proc, kbc_proc_names[proc_nr]))
			break;
	if (proc_nr == SDP_BW_NPROCS)
		return ERR_PTR(-EINVAL);
	len = rpc_pton(&init_net, addr, strlen(addr), (struct sockaddr *)&ss,
		       sizeof(ss));
	if (!len)
		return ERR_PTR(-EINVAL);
	v6 = ss.ss_family == AF_INET6;
	if (strcmp(netid, v6 ? "tcp6" : "tcp") &&
	    strcmp(netid, v6 ? "sdp6" : "sdp"))
		return ERR_PTR(-EINVAL);	/* no such netid, or family */
	rpc_set_port((struct sockaddr *)&ss, port);

	run = kzalloc(struct_size(run, caller, callers), GFP_KERNEL);
	if (!run)
		return ERR_PTR(-ENOMEM);
	run->addr = ss;
	run->addrlen = len;
	run->protocol = netid[0] == 's' ? XPRT_TRANSPORT_SDP :
					  XPRT_TRANSPORT_TCP;
	run->proc = proc_nr;
	run->block = block;
	run->conns = conns;
	run->depth = depth;
	run->callers = callers;
	/* the shares: as even as can be, the first ones a byte longer */
	rem = do_div(total, callers);
	for (i = 0; i < callers; i++) {
		struct kbc_caller *c = &run->caller[i];

		c->share = total + (i < rem ? 1 : 0);
		c->stream = i;
		c->run = run;
		c->first = &run->caller[i - i % depth];
		init_completion(&c->up);
	}
	return run;
}

static int kbc_do_run(const char *cmd)
{
	struct kbc_caller *c;
	struct kbc_run *run;
	unsigned int i;
	u64 t0, t1;
	int err = 0;

	run = kbc_parse(cmd);
	if (IS_ERR(run))
		return PTR_ERR(run);
	spin_lock_init(&run->lock);
	init_completion(&run->all_up);
	init_completion(&run->go);
	init_completion(&run->done);
	atomic_set(&run->starting, run->callers);
	atomic_set(&run->running, run->callers);

	for (i = 0; i < run->callers && !err; i++)
		err = kbc_alloc_pages(&run->caller[i], run->block);
	for (i = 0; i < run->callers && !err; i++) {
		c = &run->caller[i];
		c->task = kthread_create(kbc_caller_thread, c, "krpc_bw/%u", i);
		if (IS_ERR(c->task)) {
			err = PTR_ERR(c->task);
			c->task = NULL;
			break;
		}
		get_task_struct(c->task);
	}
	if (err) {
		/* threads created and not woken: kthread_stop() ends them */
		kbc_free_run(run);
		return err;
	}
	for (i = 0; i < run->callers; i++)
		wake_up_process(run->caller[i].task);

	kbc_wait(run, &run->all_up);
	t0 = ktime_get_ns();
	t1 = t0;
	complete_all(&run->go);
	kbc_wait(run, &run->done);
	/* (the threads' end_ns: written before they completed done) */
	for (i = 0; i < run->callers; i++)
		t1 = max(t1, run->caller[i].end_ns);
	kbc_report(run, t1 - t0);
	err = atomic_read(&run->first_error);
	kbc_free_run(run);
	return err;
}

static struct sdp_ktest_cmd kbc_run_cmd = {
	.run	= kbc_do_run,
	.lock	= &kbc_run_lock,
	.size	= KBC_CMD_SIZE,
	.busy	= true,
};

static struct sdp_ktest_text kbc_result_text = {
	.buf	= kbc_result,
	.size	= sizeof(kbc_result),
	.lock	= &kbc_result_lock,
};

static const struct sdp_ktest_file kbc_files[] = {
	{ .name = "run",	.cmd = &kbc_run_cmd },
	{ .name = "result",	.text = &kbc_result_text },
};

static int __init kbc_init(void)
{
	return sdp_ktest_init("sdp_krpc_bw_client", kbc_files,
			      ARRAY_SIZE(kbc_files));
}

/*
 * No run can be going on: its writer holds the file open, and so a
 * reference to this module.
 */
static void __exit kbc_exit(void)
{
	sdp_ktest_exit();
}

module_init(kbc_init);
module_exit(kbc_exit);

MODULE_DESCRIPTION("RPC bandwidth test client over TCP and SDP (kernel SunRPC)");
MODULE_LICENSE("GPL");
