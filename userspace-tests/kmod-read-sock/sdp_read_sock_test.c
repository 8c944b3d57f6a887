// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_read_sock_test: reads from an SDP connection the way in-kernel
 * consumers do, to test the SDP module's read_sock and its receive path
 * under MSG_DONTWAIT.  A test module: not installed, loaded by the tests.
 *
 * debugfs, in /sys/kernel/debug/sdp_read_sock_test/:
 *   run     write "ADDR PORT BYTES MODE [tcp]": a kernel socket connects
 *           to ADDR:PORT (IPv4 or IPv6), reads BYTES or up to the peer's
 *           close with MODE, checks the data and closes; the write returns
 *           when that is done (-EBUSY while another run is going on)
 *   result  the outcome of the last run, one line:
 *           "bytes=N checksum=XXXXXXXX eof=0|1 pattern=ok|bad@OFFSET ..."
 *           or the same preceded by "error=-E (-ENAME) "; read_sock= names
 *           the socket's proto_ops.read_sock, exported=1 when that is the
 *           symbol sdp_read_sock that sdp.ko exports
 *
 * MODE:
 *   read_sock     proto_ops.read_sock under lock_sock from this process,
 *                 woken by sk_data_ready, with a desc->count below BYTES
 *                 and an actor that takes at most actor_max bytes a call
 *   read_sock_cb  read_sock from the sk_data_ready callback itself, which
 *                 SDP, as TCP, calls with the socket locked: in softirq
 *                 under its spinlock, or by the process that owns it
 *   recvmsg_kvec  sock_recvmsg() with a kvec iterator and MSG_DONTWAIT, as
 *                 SunRPC's xprtsock does: a 4-byte record marker, then a
 *                 larger read, over and over
 *   recvmsg_bvec  sock_recvmsg() with a bvec iterator over pages, the first
 *                 one at an odd offset, MSG_DONTWAIT
 * "tcp" makes the same run over TCP instead of SDP, to check the test.
 *
 * With hold_page=1 the read_sock actor keeps a reference on the pages of
 * the first fragments it reads from (RST_HELD_PAGES of them), as
 * skb_splice_bits() does, and a copy of what it read there; after the
 * run, result's held= says whether the pages still hold it: ok, changed,
 * or none (none seen).  A stream of large writes arrives in the pages it
 * was received in: those are the ones SDP could reuse too soon.
 *
 * The data is the bed's test pattern (tools/sdp_pattern_send.c): 32-bit
 * words of xorshift32 from seed 0x2545f491, little-endian; the checksum is
 * the CRC-32 of zlib.
 */
#include <linux/crc32.h>
#include <linux/highmem.h>
#include <linux/inet.h>
#include <linux/in6.h>
#include <linux/kallsyms.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include <uapi/linux/sdp.h>

#include "sdp_ktest.h"

static unsigned int actor_max = 1000;
module_param(actor_max, uint, 0644);
MODULE_PARM_DESC(actor_max, "Bytes the read_sock actor takes at most per call");

static unsigned int desc_max = 20000;
module_param(desc_max, uint, 0644);
MODULE_PARM_DESC(desc_max, "desc->count of one read_sock call at most");

static unsigned int timeout_s = 30;
module_param(timeout_s, uint, 0644);
MODULE_PARM_DESC(timeout_s, "Seconds a run waits without progress before it gives up");

static bool hold_page;
module_param(hold_page, bool, 0644);
MODULE_PARM_DESC(hold_page, "The read_sock actor keeps a page it was given");

#define RST_SEED		0x2545f491u
#define RST_MAX_BYTES		SZ_1G
#define RST_BUF_SIZE		65536
#define RST_BVEC_PAGES		5
#define RST_BVEC_OFFSET		100	/* of the first page: not aligned */
#define RST_RESULT_SIZE		512
#define RST_CMD_SIZE		128	/* a command line and its NUL */
#define RST_HELD_PAGES		32	/* pages kept at most (hold_page) */
#define RST_HELD_MAX		256	/* bytes compared of each page kept */

enum rst_mode {
	RST_READ_SOCK,
	RST_READ_SOCK_CB,
	RST_RECVMSG_KVEC,
	RST_RECVMSG_BVEC,
};

static const char * const rst_mode_names[] = {
	[RST_READ_SOCK]		= "read_sock",
	[RST_READ_SOCK_CB]	= "read_sock_cb",
	[RST_RECVMSG_KVEC]	= "recvmsg_kvec",
	[RST_RECVMSG_BVEC]	= "recvmsg_bvec",
};

/**
 * struct rst_held - a page the actor kept, and what it read there
 * @page: the page, referenced
 * @data: where in it the bytes read lie
 * @len: how many of them are compared
 * @copy: what they were when read
 */
struct rst_held {
	struct page	*page;
	const u8	*data;
	size_t		len;
	u8		copy[RST_HELD_MAX];
};

/**
 * struct rst_run - one run: the socket, what was read and how
 * @sock: the kernel socket
 * @mode: how it reads
 * @sdp: an SDP socket (not the TCP check)
 * @want: bytes to read at most
 * @got: bytes read so far
 * @crc: running CRC-32 (zlib's, before the final inversion)
 * @pat: the pattern generator's last word
 * @bad_at: offset of the first byte off the pattern, or U64_MAX
 * @eof: the peer closed and everything before it was read
 * @err: an error the data_ready callback met (read_sock_cb)
 * @wake: set by the callbacks, cleared by the reader before it reads
 * @wait: the reader waits here
 * @buf: bounce buffer for the actor and the kvec reads
 * @actor_calls: calls of the actor
 * @partial: actor calls that left part of what they were offered
 * @max_offered: the longest stretch the actor was offered
 * @read_calls: read_sock or recvmsg calls
 * @data_ready: calls of sk_data_ready
 * @violations: sk_data_ready calls on an SDP socket that was not locked:
 *	neither owned nor in softirq (read_sock_cb)
 * @late: bytes read_sock_cb found at the end with no data_ready for them
 * @bad_return: read_sock calls that returned other than what the actor took
 * @held: the pages the actor kept a reference on (hold_page)
 * @nheld: how many @held has
 * @saved_data_ready: the socket's callbacks before ours
 * @saved_state_change: ditto
 */
struct rst_run {
	struct socket	*sock;
	enum rst_mode	mode;
	bool		sdp;
	u64		want;
	u64		got;
	u32		crc;
	u32		pat;
	u64		bad_at;
	bool		eof;
	int		err;
	unsigned long	wake;
	wait_queue_head_t wait;
	u8		*buf;
	unsigned int	actor_calls;
	unsigned int	partial;
	size_t		max_offered;
	unsigned int	read_calls;
	atomic_t	data_ready;
	atomic_t	violations;
	u64		late;
	unsigned int	bad_return;
	struct rst_held	held[RST_HELD_PAGES];
	unsigned int	nheld;
	void		(*saved_data_ready)(struct sock *sk);
	void		(*saved_state_change)(struct sock *sk);
};

static DEFINE_MUTEX(rst_run_lock);	/* one run at a time */
static DEFINE_MUTEX(rst_result_lock);
static char rst_result[RST_RESULT_SIZE] = "none\n";

static u32 rst_xorshift32(u32 x)
{
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

/* Takes @len bytes that came next from the peer. */
static void rst_consume(struct rst_run *run, const u8 *data, size_t len)
{
	size_t i;

	run->crc = crc32_le(run->crc, data, len);
	for (i = 0; i < len; i++) {
		u64 pos = run->got + i;

		if (!(pos & 3))
			run->pat = rst_xorshift32(run->pat);
		if (data[i] != (u8)(run->pat >> (8 * (pos & 3))) &&
		    run->bad_at == U64_MAX)
			run->bad_at = pos;
	}
	run->got += len;
}

/*
 * Keeps a reference on the pages of the fragments that hold the @len
 * bytes of @skb's payload at @offset, as long as there is room in
 * run->held, and a copy of (at most RST_HELD_MAX of) the bytes in each.
 */
static void rst_hold(struct rst_run *run, const struct sk_buff *skb,
		     unsigned int offset, size_t len)
{
	unsigned int pos = skb_headlen(skb), end = offset + len;
	int i;

	for (i = 0; i < skb_shinfo(skb)->nr_frags && pos < end; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];
		unsigned int from = max(offset, pos);
		struct rst_held *h;

		pos += skb_frag_size(frag);
		if (from >= pos)
			continue;
		if (run->nheld == RST_HELD_PAGES)
			return;
		h = &run->held[run->nheld++];
		h->page = skb_frag_page(frag);
		get_page(h->page);
		h->data = (const u8 *)skb_frag_address(frag) +
			  (from - (pos - skb_frag_size(frag)));
		h->len = min_t(size_t, min(end, pos) - from, RST_HELD_MAX);
		memcpy(h->copy, h->data, h->len);
	}
}

/* Whether the pages kept still hold what was read; drops them. */
static const char *rst_held_check(struct rst_run *run)
{
	bool same = true;

	if (!run->nheld)
		return "none";
	while (run->nheld) {
		struct rst_held *h = &run->held[--run->nheld];

		same &= !memcmp(h->copy, h->data, h->len);
		put_page(h->page);
	}
	return same ? "ok" : "changed";
}

/* The actor: takes at most actor_max bytes of what it is offered. */
static int rst_actor(read_descriptor_t *desc, struct sk_buff *skb,
		     unsigned int offset, size_t len)
{
	struct rst_run *run = desc->arg.data;
	size_t n;
	int ret;

	run->actor_calls++;
	run->max_offered = max(run->max_offered, len);
	n = min3(len, desc->count, (size_t)max(actor_max, 1U));
	n = min_t(size_t, n, RST_BUF_SIZE);
	if (!n)
		return 0;
	ret = skb_copy_bits(skb, offset, run->buf, n);
	if (ret) {
		desc->error = ret;
		return ret;
	}
	if (n < len)
		run->partial++;
	if (hold_page)
		rst_hold(run, skb, offset, n);
	rst_consume(run, run->buf, n);
	desc->count -= n;
	desc->written += n;
	return n;
}

/*
 * One read_sock call, under the socket lock; up to desc_max bytes.
 * Returns the bytes read or a negative errno.
 */
static int rst_read_sock_once(struct rst_run *run)
{
	struct sock *sk = run->sock->sk;
	read_descriptor_t desc = {
		.count	= min_t(u64, max(desc_max, 1U), run->want - run->got),
		.arg.data = run,
	};
	int ret;

	ret = run->sock->ops->read_sock(sk, &desc, rst_actor);
	run->read_calls++;
	if (desc.error)
		return desc.error;
	if (ret < 0)
		return ret;
	if (ret != desc.written) {
		run->bad_return++;
		return -EPROTO;
	}
	return ret;
}

/*
 * After an empty read: 1 at the peer's orderly close, a negative errno
 * on an error, 0 if more may come.  Under the socket lock.
 */
static int rst_check_end(struct sock *sk)
{
	int err = sock_error(sk);

	if (err)
		return err;
	if (sk->sk_shutdown & RCV_SHUTDOWN)
		return 1;
	if (sk->sk_state == TCP_CLOSE)
		return -ENOTCONN;
	return 0;
}

/* Reads what is there, under the socket lock (read_sock_cb). */
static void rst_drain(struct rst_run *run)
{
	int ret;

	while (!run->err && run->got < run->want) {
		ret = rst_read_sock_once(run);
		if (ret < 0)
			run->err = ret;
		if (ret <= 0)
			break;
	}
}

/*
 * Both callbacks chain to the socket's own, which wake its waiters: a
 * blocking connect() sleeps until sk_state_change.
 */
static void rst_data_ready(struct sock *sk)
{
	/* Owned, or in softirq, where only the spinlock can be held. */
	bool locked = sock_owned_by_user_nocheck(sk) || in_softirq();
	void (*saved)(struct sock *sk) = NULL;
	struct rst_run *run;

	read_lock_bh(&sk->sk_callback_lock);
	run = sk->sk_user_data;
	if (run) {
		saved = run->saved_data_ready;
		atomic_inc(&run->data_ready);
		if (run->sdp && run->mode == RST_READ_SOCK_CB && !locked)
			atomic_inc(&run->violations);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (!run)
		return;

	/*
	 * The run stays: the reader takes the socket lock before it puts
	 * the callbacks back, and whoever calls us has the socket locked.
	 */
	if (run->mode == RST_READ_SOCK_CB && (locked || !run->sdp))
		rst_drain(run);
	set_bit(0, &run->wake);
	wake_up_interruptible(&run->wait);
	saved(sk);
}

static void rst_state_change(struct sock *sk)
{
	void (*saved)(struct sock *sk) = NULL;
	struct rst_run *run;

	read_lock_bh(&sk->sk_callback_lock);
	run = sk->sk_user_data;
	if (run) {
		saved = run->saved_state_change;
		set_bit(0, &run->wake);
		wake_up_interruptible(&run->wait);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (saved)
		saved(sk);
}

static void rst_set_callbacks(struct rst_run *run)
{
	struct sock *sk = run->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	run->saved_data_ready = sk->sk_data_ready;
	run->saved_state_change = sk->sk_state_change;
	sk->sk_user_data = run;
	sk->sk_data_ready = rst_data_ready;
	sk->sk_state_change = rst_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
}

static void rst_restore_callbacks(struct rst_run *run)
{
	struct sock *sk = run->sock->sk;

	lock_sock(sk);
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = run->saved_data_ready;
	sk->sk_state_change = run->saved_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);
}

/*
 * Waits for a callback since the reader last cleared run->wake.
 * 0, or -ETIMEDOUT after timeout_s without one, or -EINTR.
 */
static int rst_wait(struct rst_run *run)
{
	long ret;

	ret = wait_event_interruptible_timeout(run->wait,
					       test_bit(0, &run->wake),
					       max(timeout_s, 1U) * HZ);
	if (ret < 0)
		return -EINTR;
	return ret ? 0 : -ETIMEDOUT;
}

static int rst_run_read_sock(struct rst_run *run)
{
	struct sock *sk = run->sock->sk;
	int ret, end;

	while (run->got < run->want) {
		clear_bit(0, &run->wake);
		lock_sock(sk);
		ret = rst_read_sock_once(run);
		end = ret ? 0 : rst_check_end(sk);
		release_sock(sk);
		if (ret < 0)
			return ret;
		if (ret > 0)
			continue;
		if (end < 0)
			return end;
		if (end) {
			run->eof = true;
			return 0;
		}
		ret = rst_wait(run);
		if (ret)
			return ret;
	}
	return 0;
}

static int rst_run_read_sock_cb(struct rst_run *run)
{
	struct sock *sk = run->sock->sk;
	int ret, end;
	u64 got;

	/* The callback reads; this only looks whether it is done. */
	for (;;) {
		clear_bit(0, &run->wake);
		lock_sock(sk);
		ret = run->err;
		end = (run->got < run->want && !ret) ? rst_check_end(sk) : 0;
		if (end > 0) {
			/* All data came before the close: none may be left. */
			got = run->got;
			rst_drain(run);
			run->late = run->got - got;
			ret = run->err;
		}
		release_sock(sk);
		if (ret)
			return ret;
		if (run->got >= run->want)
			return 0;
		if (end < 0)
			return end;
		if (end) {
			run->eof = true;
			return run->late ? -EPROTO : 0;
		}
		ret = rst_wait(run);
		if (ret)
			return ret;
	}
}

/* Alternates a 4-byte read (an RPC record marker) with a large one. */
static int rst_run_recvmsg_kvec(struct rst_run *run)
{
	struct msghdr msg = {};
	struct kvec kv;
	bool marker = true;
	int ret;

	while (run->got < run->want) {
		kv.iov_base = run->buf;
		kv.iov_len = min_t(u64, marker ? 4 : RST_BUF_SIZE - 1,
				   run->want - run->got);
		clear_bit(0, &run->wake);
		iov_iter_kvec(&msg.msg_iter, ITER_DEST, &kv, 1, kv.iov_len);
		ret = sock_recvmsg(run->sock, &msg, MSG_DONTWAIT);
		run->read_calls++;
		if (ret > (int)kv.iov_len)
			return -EPROTO;
		if (ret > 0) {
			rst_consume(run, run->buf, ret);
			if ((size_t)ret == kv.iov_len)
				marker = !marker;
			continue;
		}
		if (!ret) {
			run->eof = true;
			return 0;
		}
		if (ret != -EAGAIN)
			return ret;
		ret = rst_wait(run);
		if (ret)
			return ret;
	}
	return 0;
}

static int rst_run_recvmsg_bvec(struct rst_run *run)
{
	struct bio_vec bvec[RST_BVEC_PAGES] = {};
	struct msghdr msg = {};
	size_t room = 0, len, n, done;
	int i, ret = 0;

	for (i = 0; i < RST_BVEC_PAGES; i++) {
		bvec[i].bv_page = alloc_page(GFP_KERNEL);
		if (!bvec[i].bv_page) {
			ret = -ENOMEM;
			goto out;
		}
		bvec[i].bv_offset = i ? 0 : RST_BVEC_OFFSET;
		bvec[i].bv_len = PAGE_SIZE - bvec[i].bv_offset;
		room += bvec[i].bv_len;
	}

	while (run->got < run->want) {
		len = min_t(u64, room, run->want - run->got);
		clear_bit(0, &run->wake);
		iov_iter_bvec(&msg.msg_iter, ITER_DEST, bvec, RST_BVEC_PAGES, len);
		ret = sock_recvmsg(run->sock, &msg, MSG_DONTWAIT);
		run->read_calls++;
		if (ret > (int)len) {
			ret = -EPROTO;
			break;
		}
		if (ret > 0) {
			for (i = 0, done = 0; done < (size_t)ret; i++) {
				u8 *p = kmap_local_page(bvec[i].bv_page);

				n = min_t(size_t, bvec[i].bv_len, ret - done);
				rst_consume(run, p + bvec[i].bv_offset, n);
				kunmap_local(p);
				done += n;
			}
			continue;
		}
		if (!ret) {
			run->eof = true;
			break;
		}
		if (ret != -EAGAIN)
			break;
		ret = rst_wait(run);
		if (ret)
			break;
	}
	if (ret > 0)
		ret = 0;
out:
	for (i = 0; i < RST_BVEC_PAGES; i++)
		if (bvec[i].bv_page)
			__free_page(bvec[i].bv_page);
	return ret;
}

/* Fills @ss from the text address @addr and @port; its length, or 0. */
static int rst_parse_addr(const char *addr, u16 port,
			  struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (in4_pton(addr, -1, (u8 *)&sin->sin_addr.s_addr, '\0', NULL)) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		return sizeof(*sin);
	}
	if (in6_pton(addr, -1, sin6->sin6_addr.s6_addr, '\0', NULL)) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		return sizeof(*sin6);
	}
	return 0;
}

static int rst_connect(struct rst_run *run, struct sockaddr_storage *ss,
		       int len)
{
	int family = run->sdp ? AF_INET_SDP : ss->ss_family;
	int ret;

	ret = sock_create_kern(&init_net, family, SOCK_STREAM,
			       run->sdp ? 0 : IPPROTO_TCP, &run->sock);
	if (ret) {
		run->sock = NULL;
		return ret;
	}
	sock_set_sndtimeo(run->sock->sk, max(timeout_s, 1U));
	/* Before the connection exists, so that no data_ready is missed. */
	rst_set_callbacks(run);
	return kernel_connect(run->sock, (struct sockaddr_unsized *)ss, len, 0);
}

static int rst_read(struct rst_run *run)
{
	switch (run->mode) {
	case RST_READ_SOCK:
	case RST_READ_SOCK_CB:
		if (!run->sock->ops->read_sock)
			return -EOPNOTSUPP;
		if (run->mode == RST_READ_SOCK)
			return rst_run_read_sock(run);
		return rst_run_read_sock_cb(run);
	case RST_RECVMSG_KVEC:
		return rst_run_recvmsg_kvec(run);
	case RST_RECVMSG_BVEC:
		return rst_run_recvmsg_bvec(run);
	}
	return -EINVAL;
}

/*
 * Whether the socket's proto_ops.read_sock is the exported sdp_read_sock()
 * (looked up by name: no link-time dependency on sdp.ko).
 */
static bool rst_read_sock_exported(const struct proto_ops *ops)
{
	void *fn = __symbol_get("sdp_read_sock");
	bool same = fn && fn == (void *)ops->read_sock;

	if (fn)
		__symbol_put("sdp_read_sock");
	return same;
}

static void rst_report(struct rst_run *run, const struct proto_ops *ops,
		       int ret, s64 ms, const char *held)
{
	char pattern[32] = "ok", read_sock[KSYM_NAME_LEN] = "none";
	int len = 0;
	char *p;

	if (run->bad_at != U64_MAX)
		snprintf(pattern, sizeof(pattern), "bad@%llu", run->bad_at);
	else if (!run->got)
		strscpy(pattern, "none", sizeof(pattern));
	if (ops && ops->read_sock) {
		/* "name [module]": the name only */
		snprintf(read_sock, sizeof(read_sock), "%ps", ops->read_sock);
		p = strchr(read_sock, ' ');
		if (p)
			*p = '\0';
	}

	mutex_lock(&rst_result_lock);
	if (ret)
		len = scnprintf(rst_result, sizeof(rst_result), "error=%d (%pe) ",
				ret, ERR_PTR(ret));
	scnprintf(rst_result + len, sizeof(rst_result) - len,
		  "bytes=%llu checksum=%08x eof=%d pattern=%s mode=%s family=%s ms=%lld read_calls=%u actor_calls=%u partial=%u max_offered=%zu data_ready=%d violations=%d late=%llu bad_return=%u read_sock=%s exported=%d held=%s\n",
		  run->got, ~run->crc, run->eof, pattern,
		  rst_mode_names[run->mode], run->sdp ? "sdp" : "tcp", ms,
		  run->read_calls, run->actor_calls, run->partial,
		  run->max_offered, atomic_read(&run->data_ready),
		  atomic_read(&run->violations), run->late, run->bad_return,
		  read_sock, ops && rst_read_sock_exported(ops), held);
	mutex_unlock(&rst_result_lock);
}

/* "ADDR PORT BYTES MODE [tcp]": one run, its outcome in rst_result. */
static int rst_do_run(const char *cmd)
{
	char addr[64], mode[16], fam[8] = "sdp";
	struct sockaddr_storage ss;
	struct rst_run *run;
	unsigned long long bytes;
	const char *held;
	int n, len, ret, i;
	ktime_t start;
	u16 port;
	s64 ms;

	n = sscanf(cmd, "%63s %hu %llu %15s %7s", addr, &port, &bytes, mode,
		   fam);
	if (n < 4 || !port || !bytes || bytes > RST_MAX_BYTES)
		return -EINVAL;
	if (strcmp(fam, "sdp") && strcmp(fam, "tcp"))
		return -EINVAL;
	len = rst_parse_addr(addr, port, &ss);
	if (!len)
		return -EINVAL;
	i = match_string(rst_mode_names, ARRAY_SIZE(rst_mode_names), mode);
	if (i < 0)
		return -EINVAL;

	run = kzalloc_obj(*run, GFP_KERNEL);
	if (!run)
		return -ENOMEM;
	run->buf = kvmalloc(RST_BUF_SIZE, GFP_KERNEL);
	if (!run->buf) {
		kfree(run);
		return -ENOMEM;
	}
	run->mode = i;
	run->sdp = !strcmp(fam, "sdp");
	run->want = bytes;
	run->crc = ~0U;
	run->pat = RST_SEED;
	run->bad_at = U64_MAX;
	init_waitqueue_head(&run->wait);

	start = ktime_get();
	ret = rst_connect(run, &ss, len);
	if (!ret)
		ret = rst_read(run);
	if (!ret && atomic_read(&run->violations))
		ret = -EPROTO;
	ms = ktime_ms_delta(ktime_get(), start);
	held = rst_held_check(run);
	if (run->sock) {
		rst_restore_callbacks(run);
		/* the socket holds its family's module: ops stay valid */
		rst_report(run, run->sock->ops, ret, ms, held);
		sock_release(run->sock);
	} else {
		rst_report(run, NULL, ret, ms, held);
	}

	kvfree(run->buf);
	kfree(run);
	return 0;
}

static struct sdp_ktest_cmd rst_run_cmd = {
	.run	= rst_do_run,
	.lock	= &rst_run_lock,
	.size	= RST_CMD_SIZE,
	.busy	= true,
};

static struct sdp_ktest_text rst_result_text = {
	.buf	= rst_result,
	.size	= sizeof(rst_result),
	.lock	= &rst_result_lock,
};

static const struct sdp_ktest_file rst_files[] = {
	{ .name = "run",	.cmd = &rst_run_cmd },
	{ .name = "result",	.text = &rst_result_text },
};

static int __init rst_init(void)
{
	return sdp_ktest_init("sdp_read_sock_test", rst_files,
			      ARRAY_SIZE(rst_files));
}

static void __exit rst_exit(void)
{
	sdp_ktest_exit();
}

module_init(rst_init);
module_exit(rst_exit);

MODULE_DESCRIPTION("Test of the in-kernel receive paths of SDP sockets");
MODULE_LICENSE("GPL");
