// SPDX-License-Identifier: GPL-2.0
/*
 * SDP socket options at the SOL_TCP level, IPV6_V6ONLY, SOL_SDP's, and
 * the ioctls TCP answers.
 * SOL_SOCKET options are the core's (sock_setsockopt()).  Linux 6.1's
 * core refuses to set SO_REUSEPORT on any family but AF_INET and AF_INET6
 * (EOPNOTSUPP) and gives no family a way to take it: there only in-kernel
 * users set it on SDP sockets, with sock_set_reuseport().
 */
#include <linux/ioctl.h>
#include <linux/sockios.h>
#include <asm/ioctls.h>
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_wire.h"

/*
 * SOL_IPV6: IPV6_V6ONLY only.  An SDP socket learns its address family at
 * bind() or connect(); before that, an IPv6-level option makes it an IPv6
 * socket, so that getsockname() tells an unbound socket's family the way
 * it does for a TCP socket created AF_INET6 (libtirpc's bindresvport()
 * and __binddynport() go by it).  As for TCP, the option is fixed once
 * the socket has a port.
 */
static int sdp_set_v6only(struct sock *sk, int val)
{
	int err = 0;

	lock_sock(sk);
	if (sdp_sk(sk)->bound || sk->sk_state != TCP_CLOSE) {
		err = -EINVAL;
	} else {
		sk->sk_ipv6only = !!val;
		sdp_sk(sk)->addr_family = AF_INET6;
	}
	release_sock(sk);
	return err;
}

/*
 * SDP_FALLBACK: before connect() or listen(), on a socket with a file
 * (the fallback hands the file over to a TCP socket).
 */
static int sdp_set_fallback(struct socket *sock, int val)
{
	struct sock *sk = sock->sk;
	int err;

	if (!sock->file)
		return -EOPNOTSUPP;
	lock_sock(sk);
	err = -EISCONN;
	if (sk->sk_state != TCP_CLOSE || sock->state != SS_UNCONNECTED)
		goto out;
	err = val ? sdp_fb_alloc(sk) : 0;
	if (!err && sdp_sk(sk)->fb)
		sdp_sk(sk)->fb->enabled = !!val;
out:
	release_sock(sk);
	return err;
}

int sdp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int val, err = 0;

	if (level != SOL_TCP && level != SOL_SDP &&
	    (level != SOL_IPV6 || optname != IPV6_V6ONLY))
		return -ENOPROTOOPT;
	if (level == SOL_SDP && optname != SDP_FALLBACK &&
	    optname != SDP_READ_ZCOPY)
		return -ENOPROTOOPT;
	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;
	if (level == SOL_IPV6)
		return sdp_set_v6only(sk, val);
	if (level == SOL_SDP && optname == SDP_FALLBACK)
		return sdp_set_fallback(sock, val);
	if (level == SOL_SDP) {
		/* Read at the Hello or HelloAck, which a later call misses. */
		lock_sock(sk);
		ssk->read_zcopy = !!val;
		release_sock(sk);
		return 0;
	}

	lock_sock(sk);
	switch (optname) {
	case TCP_NODELAY:
		/*
		 * SDP has no Nagle: a buffer is held back only while corked or
		 * while a send is in flight (sdp_tx.c).  As TCP, setting it
		 * sends what is held.
		 */
		ssk->nodelay = !!val;
		if (val)
			sdp_tx_push(sk);
		break;
	case TCP_CORK:
		ssk->cork = !!val;
		if (!val)
			sdp_tx_push(sk);
		break;
	case TCP_MAXSEG:
		if (val && (val < TCP_MIN_MSS || val > MAX_TCP_WINDOW))
			err = -EINVAL;
		else
			ssk->user_mss = val;
		break;
	case TCP_KEEPIDLE:
		if (val < 1 || val > MAX_TCP_KEEPIDLE) {
			err = -EINVAL;
		} else {
			ssk->keepidle = val;
			sdp_watchdog_arm(sk);
		}
		break;
	case TCP_KEEPINTVL:
		if (val < 1 || val > MAX_TCP_KEEPINTVL)
			err = -EINVAL;
		else
			ssk->keepintvl = val;
		break;
	case TCP_KEEPCNT:
		if (val < 1 || val > MAX_TCP_KEEPCNT)
			err = -EINVAL;
		else
			ssk->keepcnt = val;
		break;
	case TCP_USER_TIMEOUT:
		if (val < 0) {
			err = -EINVAL;
		} else {
			ssk->user_timeout = val;
			sdp_watchdog_arm(sk);
		}
		break;
	default:
		err = -ENOPROTOOPT;
		break;
	}
	release_sock(sk);
	return err;
}

/* TCP_MAXSEG: the largest payload of a message, once connected. */
static int sdp_maxseg(const struct sock *sk)
{
	const struct sdp_sock *ssk = sdp_sk(sk);
	int max;

	if (!ssk->peer_rcv_size || sk->sk_state == TCP_CLOSE ||
	    sk->sk_state == TCP_LISTEN)
		return ssk->user_mss ? : TCP_MSS_DEFAULT;
	max = ssk->peer_rcv_size - sizeof(struct sdp_bsdh);
	return ssk->user_mss ? min(max, ssk->user_mss) : max;
}

/*
 * TCP_INFO, with the figures SDP has: the state; for a listener its
 * backlog, as TCP gives it; else the message sizes, the credits as the
 * congestion window (messages the peer has buffers for: times snd_mss,
 * the bytes it can take now), the messages in flight and each way, the
 * payload bytes each way and those held back.  The RC connection
 * retransmits in the device, out of sight: no retransmits, no RTT.
 * @len: what the caller has room for, up to the kernel's struct.
 */
static int sdp_tcp_info(struct sock *sk, char __user *optval,
			int __user *optlen, unsigned int len)
{
	const struct sdp_sock *ssk = sdp_sk(sk);
	struct tcp_info info = {};

	len = min_t(unsigned int, len, sizeof(info));
	lock_sock(sk);
	info.tcpi_state = sk->sk_state;
	if (sk->sk_state == TCP_LISTEN) {
		info.tcpi_unacked = READ_ONCE(sk->sk_ack_backlog);
		info.tcpi_sacked = READ_ONCE(sk->sk_max_ack_backlog);
	} else {
		info.tcpi_snd_mss = sdp_maxseg(sk);
		info.tcpi_rcv_mss = sdp_rx_buf_size;
		info.tcpi_advmss = info.tcpi_rcv_mss;
		info.tcpi_snd_cwnd = max(ssk->tx_credits, 0);
		info.tcpi_unacked = ssk->tx_head - ssk->tx_tail;
		info.tcpi_segs_out = ssk->tx_mseq;
		info.tcpi_segs_in = ssk->rx_mseq;
		info.tcpi_bytes_sent = ssk->bytes_sent;
		info.tcpi_bytes_received = ssk->bytes_received;
		info.tcpi_notsent_bytes = ssk->tx_held;
	}
	release_sock(sk);
	if (put_user(len, optlen) || copy_to_user(optval, &info, len))
		return -EFAULT;
	return 0;
}

int sdp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct net *net = sock_net(sk);
	int val, len;

	if (level != SOL_TCP && level != SOL_SDP &&
	    (level != SOL_IPV6 || optname != IPV6_V6ONLY))
		return -ENOPROTOOPT;
	if (level == SOL_SDP && optname != SDP_FALLBACK &&
	    optname != SDP_PATH && optname != SDP_READ_ZCOPY)
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	if (level == SOL_TCP && optname == TCP_INFO)
		return sdp_tcp_info(sk, optval, optlen, len);
	len = min_t(unsigned int, len, sizeof(int));

	if (level == SOL_IPV6) {
		val = sk->sk_ipv6only;
		goto out;
	}
	if (level == SOL_SDP) {
		/* (a socket that went TCP answers in sdp_fallback.c) */
		if (optname == SDP_FALLBACK)
			val = ssk->fb && READ_ONCE(ssk->fb->enabled);
		else if (optname == SDP_READ_ZCOPY)
			val = READ_ONCE(ssk->read_zcopy);
		else
			val = sdp_connected(sk) ? SDP_PATH_SDP : SDP_PATH_NONE;
		goto out;
	}
	lock_sock(sk);
	switch (optname) {
	case TCP_NODELAY:
		val = ssk->nodelay;
		break;
	case TCP_CORK:
		val = ssk->cork;
		break;
	case TCP_MAXSEG:
		val = sdp_maxseg(sk);
		break;
	case TCP_KEEPIDLE:
		val = ssk->keepidle ? :
		      READ_ONCE(net->ipv4.sysctl_tcp_keepalive_time) / HZ;
		break;
	case TCP_KEEPINTVL:
		val = ssk->keepintvl ? :
		      READ_ONCE(net->ipv4.sysctl_tcp_keepalive_intvl) / HZ;
		break;
	case TCP_KEEPCNT:
		val = ssk->keepcnt ? :
		      READ_ONCE(net->ipv4.sysctl_tcp_keepalive_probes);
		break;
	case TCP_USER_TIMEOUT:
		val = ssk->user_timeout;
		break;
	default:
		release_sock(sk);
		return -ENOPROTOOPT;
	}
	release_sock(sk);
out:
	if (put_user(len, optlen) || copy_to_user(optval, &val, len))
		return -EFAULT;
	return 0;
}

int sdp_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int answ;

	switch (cmd) {
	case SIOCINQ:
	case SIOCOUTQ:
	case SIOCOUTQNSD:
		if (sk->sk_state == TCP_LISTEN)
			return -EINVAL;
		break;
	default:
		return -ENOIOCTLCMD;
	}

	lock_sock(sk);
	if (cmd == SIOCINQ)
		answ = ssk->rx_queued;
	else if (cmd == SIOCOUTQ)	/* written, not yet at the peer */
		answ = sk->sk_wmem_queued -
		       (ssk->tx_head - ssk->tx_tail) * sizeof(struct sdp_bsdh);
	else				/* held back, not yet posted */
		answ = ssk->tx_held;
	release_sock(sk);
	return put_user(answ, (int __user *)arg);
}
