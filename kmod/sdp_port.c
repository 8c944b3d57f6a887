// SPDX-License-Identifier: GPL-2.0
/*
 * SDP ports: which socket may bind or listen where, by TCP's rules
 * (SO_REUSEADDR, SO_REUSEPORT, wildcard and v4-mapped addresses), and the
 * RDMA CM listen ids that serve the listeners.
 *
 * The RDMA CM allows one listener per address and port, and no listener
 * beside another id bound to the same port.  So a socket's own CM id is
 * bound only when it connects (sdp_conn_bind()); bind() and listen() are
 * decided here, in a table of the ports SDP sockets hold, per namespace.
 * Listeners on one address and port (SO_REUSEPORT) form a group sharing
 * one CM listen id; its connection requests go round robin to those of
 * them that listen.  Locking and lifetime: see struct sdp_port in sdp.h.
 */
#include <linux/hashtable.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <net/inet_sock.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/l3mdev.h>
#include <net/tcp_states.h>

#include "sdp.h"

static DEFINE_MUTEX(sdp_port_mutex);
static DEFINE_HASHTABLE(sdp_ports, 8);

static u32 sdp_port_hash(const struct net *net, unsigned short num)
{
	return num ^ net_hash_mix(net);
}

static struct sdp_port *sdp_port_find(const struct net *net,
				      unsigned short num)
{
	struct sdp_port *port;

	hash_for_each_possible(sdp_ports, port, node, sdp_port_hash(net, num))
		if (port->num == num && net_eq(read_pnet(&port->net), net))
			return port;
	return NULL;
}

/* The port's address as the socket holds it: IPv4 (mapped) or IPv6. */
static bool sdp_bound_v4(const struct sock *sk)
{
	return ipv6_addr_v4mapped(&sk->sk_v6_rcv_saddr);
}

/* Whether two bound addresses overlap, as inet_rcv_saddr_equal() says. */
static bool sdp_addr_overlap(const struct sock *sk, const struct sock *sk2)
{
	bool v4 = sdp_bound_v4(sk), v4_2 = sdp_bound_v4(sk2);

	if (v4 && v4_2)
		return sk->sk_rcv_saddr == sk2->sk_rcv_saddr ||
		       !sk->sk_rcv_saddr || !sk2->sk_rcv_saddr;
	if (v4 != v4_2) {
		/* Only the IPv6 wildcard of a dual-stack socket takes IPv4. */
		const struct sock *s6 = v4 ? sk2 : sk;

		return ipv6_addr_any(&s6->sk_v6_rcv_saddr) && !s6->sk_ipv6only;
	}
	return ipv6_addr_any(&sk->sk_v6_rcv_saddr) ||
	       ipv6_addr_any(&sk2->sk_v6_rcv_saddr) ||
	       ipv6_addr_equal(&sk->sk_v6_rcv_saddr, &sk2->sk_v6_rcv_saddr);
}

/*
 * Whether @sk may not hold its port beside @sk2, as inet_bind_conflict()
 * decides it for bind() and listen(): SO_REUSEADDR on both lets @sk in
 * beside a socket that does not listen; SO_REUSEPORT on both, with the
 * same owner, beside any.  @sk listening is the caller's concern.
 */
static bool sdp_conflict(const struct sock *sk, const struct sock *sk2)
{
	int dev = sk->sk_bound_dev_if, dev2 = READ_ONCE(sk2->sk_bound_dev_if);

	if (sk == sk2 || (dev && dev2 && dev != dev2))
		return false;
	if (!sdp_addr_overlap(sk, sk2))
		return false;
	if (sk->sk_reuse && sk2->sk_reuse && !sdp_sk(sk2)->group)
		return false;
	if (sk->sk_reuseport && sk2->sk_reuseport &&
	    uid_eq(sk_uid(sk), sk_uid(sk2)))
		return false;
	return true;
}

static bool sdp_port_conflict(const struct sdp_port *port,
			      const struct sock *sk)
{
	struct sdp_sock *owner;

	hlist_for_each_entry(owner, &port->owners, port_node)
		if (sdp_conflict(sk, &owner->isk.sk))
			return true;
	return false;
}

static struct sdp_port *sdp_port_new(struct net *net, unsigned short num)
{
	struct sdp_port *port = kzalloc(sizeof(*port), GFP_KERNEL);

	if (!port)
		return NULL;
	write_pnet(&port->net, net);
	port->num = num;
	INIT_HLIST_HEAD(&port->owners);
	INIT_LIST_HEAD(&port->groups);
	hash_add(sdp_ports, &port->node, sdp_port_hash(net, num));
	return port;
}

static void sdp_port_put_if_unused(struct sdp_port *port)
{
	if (hlist_empty(&port->owners) && list_empty(&port->groups)) {
		hash_del(&port->node);
		kfree(port);
	}
}

/* A port of the local range that no SDP socket of @net holds, or 0. */
static unsigned short sdp_port_pick(struct net *net)
{
	int low, high, n, i;
	u32 num;

	inet_get_local_port_range(net, &low, &high);
	n = high - low + 1;
	num = low + get_random_u32_below(n);
	for (i = 0; i < n; i++, num = num < high ? num + 1 : low) {
		if (inet_is_local_reserved_port(net, num))
			continue;
		if (!sdp_port_find(net, num))
			return num;
	}
	return 0;
}

/*
 * bind(): @sk takes @addr (checked, local), or a free port of it when
 * the port is 0, and its local address is set.  Socket lock held; the
 * socket holds no port yet.
 */
int sdp_port_bind(struct sock *sk, const struct sockaddr *addr)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct net *net = sock_net(sk);
	struct sockaddr_storage ss;
	struct sdp_port *port;
	unsigned short num;
	int ret = 0;

	memcpy(&ss, addr, addr->sa_family == AF_INET ?
	       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	mutex_lock(&sdp_port_mutex);
	num = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (!num) {
		num = sdp_port_pick(net);
		if (!num) {
			ret = -EADDRINUSE;	/* as inet_csk_get_port() */
			goto out;
		}
		((struct sockaddr_in *)&ss)->sin_port = htons(num);
	}

	/* The address decides the conflicts: set it, undo it on failure. */
	sdp_set_local(sk, (struct sockaddr *)&ss);
	port = sdp_port_find(net, num);
	if (port && sdp_port_conflict(port, sk)) {
		ret = -EADDRINUSE;
	} else if (!port) {
		port = sdp_port_new(net, num);
		if (!port)
			ret = -ENOMEM;
	}
	if (ret) {
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = AF_INET;
		sdp_set_local(sk, (struct sockaddr *)&ss);
		goto out;
	}
	hlist_add_head(&ssk->port_node, &port->owners);
	ssk->port = port;
out:
	mutex_unlock(&sdp_port_mutex);
	return ret;
}

/* The address the group's CM id listens on: the socket's, in CM form. */
static void sdp_listen_addr(const struct sock *sk, struct sockaddr_storage *cm)
{
	struct sockaddr_storage addr;

	sdp_fill_sockaddr(sk, (struct sockaddr *)&addr, false);
	sdp_cm_sockaddr((struct sockaddr *)&addr, cm);
}

static bool sdp_group_matches(const struct sdp_listen_group *group,
			      const struct sockaddr_storage *cm, bool v6only)
{
	size_t len = cm->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
			sizeof(struct sockaddr_in6);

	return group->v6only == v6only && !memcmp(&group->addr, cm, len);
}

static int sdp_port_cm_handler(struct rdma_cm_id *id,
			       struct rdma_cm_event *ev);

/* A group with a CM id listening on @cm; an ERR_PTR on failure. */
static struct sdp_listen_group *sdp_group_new(struct sock *sk,
					      const struct sockaddr_storage *cm,
					      int backlog)
{
	struct sdp_listen_group *group = kzalloc(sizeof(*group), GFP_KERNEL);
	struct rdma_cm_id *id;
	int ret;

	if (!group)
		return ERR_PTR(-ENOMEM);
	id = rdma_create_id(sock_net(sk), sdp_port_cm_handler, group,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		kfree(group);
		return ERR_CAST(id);
	}
	group->id = id;
	group->addr = *cm;
	group->v6only = sk->sk_ipv6only;
	INIT_LIST_HEAD(&group->members);

	ret = cm->ss_family == AF_INET6 ?
	      rdma_set_afonly(id, sk->sk_ipv6only) : 0;
	if (!ret)
		ret = rdma_bind_addr(id, (struct sockaddr *)cm);
	if (!ret)
		ret = rdma_listen(id, backlog);
	if (ret) {
		/* A listen that failed never ran our handler. */
		rdma_destroy_id(id);
		kfree(group);
		/* Another RDMA CM user holds the port, or overlaps it. */
		if (ret == -EADDRNOTAVAIL)
			ret = -EADDRINUSE;
		return ERR_PTR(ret);
	}
	return group;
}

/*
 * Takes @sk out of its group.  When it was the last member, returns the
 * group for the caller to free, with in *@id the CM id to destroy, if the
 * CM has not destroyed it already.  sdp_port_mutex held.
 */
static struct sdp_listen_group *sdp_group_leave(struct sock *sk,
						struct rdma_cm_id **id)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_listen_group *group = ssk->group;

	*id = NULL;
	if (!group)
		return NULL;
	list_del_init(&ssk->listen_node);
	ssk->group = NULL;
	if (!list_empty(&group->members))
		return NULL;
	if (group->port) {
		list_del(&group->node);
		group->port = NULL;
	}
	*id = group->id;
	group->id = NULL;
	return group;
}

/*
 * Not under sdp_port_mutex, nor the socket lock: destroying the id waits
 * for its handler, which takes both.
 */
static void sdp_group_free(struct sdp_listen_group *group,
			   struct rdma_cm_id *id)
{
	if (id)
		rdma_destroy_id(id);
	kfree(group);
}

/*
 * listen(): @sk, which holds a port, joins the group listening on its
 * address or starts one.  Socket lock held.
 */
int sdp_port_listen(struct sock *sk, int backlog)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_listen_group *group, *old = NULL;
	struct sockaddr_storage cm;
	struct rdma_cm_id *old_id;
	int ret = 0;

	mutex_lock(&sdp_port_mutex);
	if (ssk->group) {
		if (ssk->group->id)
			goto out;	/* still a member: listening again */
		/* Its device went away, and the CM destroyed its id. */
		old = sdp_group_leave(sk, &old_id);
	}
	if (!ssk->port) {
		ret = -EINVAL;
		goto out;
	}
	/* The same rules as bind(), now that the others may listen. */
	if (sdp_port_conflict(ssk->port, sk)) {
		ret = -EADDRINUSE;
		goto out;
	}

	sdp_listen_addr(sk, &cm);
	list_for_each_entry(group, &ssk->port->groups, node)
		if (sdp_group_matches(group, &cm, sk->sk_ipv6only))
			goto join;
	group = sdp_group_new(sk, &cm, backlog);
	if (IS_ERR(group)) {
		ret = PTR_ERR(group);
		goto out;
	}
	group->port = ssk->port;
	list_add_tail(&group->node, &ssk->port->groups);
join:
	list_add_tail(&ssk->listen_node, &group->members);
	ssk->group = group;
out:
	mutex_unlock(&sdp_port_mutex);
	kfree(old);
	return ret;
}

/*
 * close(): @sk gives up its port and leaves its group, whose CM id goes
 * when no listener is left.  Socket lock not held: the id's handler may
 * be waiting for it.
 */
void sdp_port_unbind(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_listen_group *group;
	struct rdma_cm_id *id;

	mutex_lock(&sdp_port_mutex);
	group = sdp_group_leave(sk, &id);
	if (ssk->port) {
		hlist_del(&ssk->port_node);
		sdp_port_put_if_unused(ssk->port);
		ssk->port = NULL;
	}
	mutex_unlock(&sdp_port_mutex);
	if (group)
		sdp_group_free(group, id);
}

/*
 * Whether listener @sk takes a request that came in on device @dev, as
 * TCP's lookup has it (inet_sk_bound_dev_eq()): a listener bound to a
 * device (SO_BINDTODEVICE) takes that device's, or its VRF's; an unbound
 * one takes those of no VRF, unless tcp_l3mdev_accept.  @master is
 * @dev's VRF, or 0.  In the @tier of the bound (1) or the unbound (0).
 */
static bool sdp_listener_takes(const struct sock *sk, int dev, int master,
			       int tier)
{
	int bound = READ_ONCE(sk->sk_bound_dev_if);

	if (inet_sk_state_load(sk) != TCP_LISTEN || !!bound != tier)
		return false;
	return inet_sk_bound_dev_eq(sock_net(sk), bound, master ? : dev,
				    master ? dev : 0);
}

/*
 * The next listener of @group that takes a request from device @dev (of
 * VRF @master, or 0), held: one bound to the device first, as TCP's lookup scores it; NULL
 * if none does.
 */
static struct sock *sdp_group_pick(struct sdp_listen_group *group, int dev,
				   int master)
{
	struct sdp_sock *ssk;
	unsigned int n = 0, i;
	int tier;

	for (tier = 1; tier >= 0 && !n; tier--)
		list_for_each_entry(ssk, &group->members, listen_node)
			if (sdp_listener_takes(&ssk->isk.sk, dev, master, tier))
				n++;
	if (!n)
		return NULL;
	tier++;		/* (the one that had some) */
	i = group->next++ % n;
	list_for_each_entry(ssk, &group->members, listen_node) {
		if (!sdp_listener_takes(&ssk->isk.sk, dev, master, tier))
			continue;
		if (!i--) {
			sock_hold(&ssk->isk.sk);
			return &ssk->isk.sk;
		}
	}
	return NULL;
}

/*
 * The group's CM id goes with its device: its listeners end with an
 * error, as one whose own id went (sdp_cm_fail()), and the CM destroys
 * the id when this handler returns 1.  Unless the last listener is
 * closing and destroying the id already, waiting for this handler.
 */
static int sdp_group_removed(struct sdp_listen_group *group)
{
	struct sdp_sock *ssk;
	struct sock **socks;
	unsigned int n = 0, i;

	mutex_lock(&sdp_port_mutex);
	if (!group->id) {
		mutex_unlock(&sdp_port_mutex);
		return 0;
	}
	group->id = NULL;
	if (group->port) {
		list_del(&group->node);
		sdp_port_put_if_unused(group->port);
		group->port = NULL;
	}
	list_for_each_entry(ssk, &group->members, listen_node)
		n++;
	socks = kmalloc_array(n, sizeof(*socks), GFP_KERNEL);
	n = 0;
	if (socks) {
		list_for_each_entry(ssk, &group->members, listen_node) {
			sock_hold(&ssk->isk.sk);
			socks[n++] = &ssk->isk.sk;
		}
	}
	mutex_unlock(&sdp_port_mutex);

	for (i = 0; i < n; i++) {
		struct sock *sk = socks[i];

		lock_sock(sk);
		if (sk->sk_state == TCP_LISTEN) {
			sk->sk_shutdown = SHUTDOWN_MASK;
			sdp_set_error(sk, -ECONNRESET);
		}
		release_sock(sk);
		sock_put(sk);
	}
	kfree(socks);
	return 1;
}

/*
 * Events of a group's CM id: connection requests go to one of its
 * listeners.  The CM calls this with the listen id's handler mutex and
 * the new id's held; the new id then gets its own socket and handler.
 */
static int sdp_port_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sdp_listen_group *group = id->context;
	int ret, dev, master;
	struct sock *lsk;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		dev = id->route.addr.dev_addr.bound_dev_if;
		master = l3mdev_master_ifindex_by_index(id->route.addr.dev_addr.net,
							dev);
		mutex_lock(&sdp_port_mutex);
		lsk = sdp_group_pick(group, dev, master);
		mutex_unlock(&sdp_port_mutex);
		if (!lsk)
			return -ECONNREFUSED;
		ret = sdp_cm_request(lsk, id, ev);
		sock_put(lsk);
		return ret;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return sdp_group_removed(group);
	default:
		return 0;
	}
}
