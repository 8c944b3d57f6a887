// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/sdp: one line per SDP socket of the reader's namespace, in the
 * manner of /proc/net/tcp; its column mem is the memory (bytes) of the
 * buffers its connection holds (its send slots' headers and pages: the
 * receive buffers are the device's, sdp_dev.c; received data waiting is
 * rx_queue), and the last, path, what its connections run over: sdp,
 * tcp (TCP fallback), or both (a listener with fallback).
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "sdp.h"

/* Every SDP socket, from sk_alloc() to its destructor. */
static LIST_HEAD(sdp_sock_list);
static DEFINE_SPINLOCK(sdp_sock_list_lock);

void sdp_sock_list_add(struct sock *sk)
{
	spin_lock(&sdp_sock_list_lock);
	list_add_tail(&sdp_sk(sk)->node, &sdp_sock_list);
	spin_unlock(&sdp_sock_list_lock);
}

void sdp_sock_list_del(struct sock *sk)
{
	spin_lock(&sdp_sock_list_lock);
	list_del(&sdp_sk(sk)->node);
	spin_unlock(&sdp_sock_list_lock);
}

static void sdp_proc_addr(struct seq_file *seq, const struct sock *sk,
			  int family, bool remote)
{
	const struct inet_sock *inet = inet_sk(sk);
	const struct in6_addr *a6;

	if (family == AF_INET) {
		seq_printf(seq, " %08X:%04X",
			   remote ? inet->inet_daddr : inet->inet_rcv_saddr,
			   ntohs(remote ? inet->inet_dport : inet->inet_sport));
		return;
	}
	a6 = remote ? &sk->sk_v6_daddr : &sk->sk_v6_rcv_saddr;
	seq_printf(seq, " %08X%08X%08X%08X:%04X",
		   a6->s6_addr32[0], a6->s6_addr32[1], a6->s6_addr32[2],
		   a6->s6_addr32[3],
		   ntohs(remote ? inet->inet_dport : inet->inet_sport));
}

/*
 * The line of a socket that carries a TCP connection (TCP fallback): the
 * TCP socket's addresses, state and queues, as /proc/net/tcp has them.
 */
static void sdp_proc_tcp(struct seq_file *seq, const struct sock *tsk)
{
	const struct tcp_sock *tp = tcp_sk(tsk);
	int rx = READ_ONCE(tp->rcv_nxt) - READ_ONCE(tp->copied_seq);

	sdp_proc_addr(seq, tsk, tsk->sk_family, false);
	sdp_proc_addr(seq, tsk, tsk->sk_family, true);
	seq_printf(seq, " %02X %08X:%08X", inet_sk_state_load(tsk),
		   READ_ONCE(tp->write_seq) - tp->snd_una, max(rx, 0));
}

/* What the socket's connections run over: SDP, TCP, or both (a listener). */
static const char *sdp_proc_path(struct sock *sk)
{
	const struct sdp_fallback *fb = sdp_sk(sk)->fb;

	if (sdp_went_tcp(sk))
		return "tcp";
	if (sk->sk_state == TCP_LISTEN && fb && READ_ONCE(fb->tcp))
		return "both";
	return "sdp";
}

static int sdp_proc_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	struct sdp_sock *ssk;
	int sl = 0;

	seq_puts(seq, "  sl  local_address rem_address   st tx_queue rx_queue   uid  inode mem path\n");
	spin_lock(&sdp_sock_list_lock);
	list_for_each_entry(ssk, &sdp_sock_list, node) {
		struct sock *sk = &ssk->isk.sk;

		if (!net_eq(sock_net(sk), net))
			continue;
		seq_printf(seq, "%4d:", sl++);
		if (!sdp_fb_proc(sk, seq, sdp_proc_tcp)) {
			sdp_proc_addr(seq, sk, ssk->addr_family, false);
			sdp_proc_addr(seq, sk, ssk->addr_family, true);
			seq_printf(seq, " %02X %08X:%08X",
				   inet_sk_state_load(sk),
				   READ_ONCE(sk->sk_wmem_queued),
				   READ_ONCE(ssk->rx_queued));
		}
		/* (the inode number is a u64 on newer kernels) */
		seq_printf(seq, " %5u %llu %lu %s\n",
			   from_kuid_munged(seq_user_ns(seq), sk_uid(sk)),
			   (u64)sock_i_ino(sk), READ_ONCE(ssk->buf_bytes),
			   sdp_proc_path(sk));
	}
	spin_unlock(&sdp_sock_list_lock);
	return 0;
}

static int __net_init sdp_proc_net_init(struct net *net)
{
	if (!proc_create_net_single("sdp", 0444, net->proc_net, sdp_proc_show,
				    NULL))
		return -ENOMEM;
	return 0;
}

static void __net_exit sdp_proc_net_exit(struct net *net)
{
	remove_proc_entry("sdp", net->proc_net);
}

static struct pernet_operations sdp_proc_net_ops = {
	.init = sdp_proc_net_init,
	.exit = sdp_proc_net_exit,
};

int sdp_proc_init(void)
{
	return register_pernet_subsys(&sdp_proc_net_ops);
}

void sdp_proc_exit(void)
{
	unregister_pernet_subsys(&sdp_proc_net_ops);
}
