/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces that differ between the kernels sdp builds on
 * (6.1, 6.12 and the newest), in the way of the kernel's backports: the
 * code is written against the newest interface, and this header defines
 * it for the older kernels.  Nothing else in the module, or in the test
 * modules (which include it too), looks at the kernel's version.
 */
#ifndef _SDP_COMPAT_H
#define _SDP_COMPAT_H

#include <linux/net.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/version.h>
#include <net/sock.h>

/*
 * 7.3: proto_ops.bind and .connect take a struct sockaddr_unsized, the
 * sockaddr of no fixed size; before, a struct sockaddr, of the same layout.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 3, 0)
#define sockaddr_unsized sockaddr
#endif

/*
 * 6.10: proto_ops.accept takes its flags in a struct proto_accept_arg.
 * sdp_accept() is written that way; the ops table holds sdp_accept_op,
 * on older kernels a wrapper of the old form.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 10, 0)
struct proto_accept_arg {
	int flags;
	int err;
	int is_empty;
	bool kern;
};
#endif

int sdp_accept(struct socket *sock, struct socket *newsock,
	       struct proto_accept_arg *arg);

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 10, 0)

static inline int sdp_accept_op(struct socket *sock, struct socket *newsock,
				int flags, bool kern)
{
	struct proto_accept_arg arg = { .flags = flags, .kern = kern };

	return sdp_accept(sock, newsock, &arg);
}
#else
#define sdp_accept_op	sdp_accept
#endif

/* 6.16: sk_uid() reads the owner's uid; sock_i_uid() is gone since. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 16, 0)
static inline kuid_t sk_uid(const struct sock *sk)
{
	return sock_i_uid((struct sock *)sk);
}
#endif

/*
 * 6.5: in-kernel senders hand pages over for a socket to reference
 * instead of copying them with sendmsg(MSG_SPLICE_PAGES) on a bio_vec
 * iterator; before, a page at a time through proto_ops.sendpage, which
 * SDP sockets then have (sdp_sendpage(), a wrapper of the new form).
 * sdp_msg_splice() tells whether a sendmsg() call is such a send.  (Some
 * 6.1 releases define the flag, and still use sendpage.)
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
#define SDP_HAVE_SENDPAGE
#endif

static inline bool sdp_msg_splice(const struct msghdr *msg)
{
#ifdef MSG_SPLICE_PAGES
	return msg->msg_flags & MSG_SPLICE_PAGES;
#else
	return false;
#endif
}

/*
 * The page at the start of a bio_vec iterator, up to @max bytes of it,
 * referenced and taken from the iterator; 0 when it must not be
 * referenced (a slab page: sendpage_ok(), as TCP checks).  6.3 brought
 * iov_iter_extract_pages(), which leaves a bio_vec's pages unreferenced
 * (and iov_iter_get_pages2() no longer references slab pages); before,
 * iov_iter_get_pages2() referenced every page.
 */
static inline ssize_t sdp_iter_get_page(struct iov_iter *from, size_t max,
					struct page **page, size_t *off)
{
	ssize_t got;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	struct page **pages = page;

	got = iov_iter_extract_pages(from, &pages, max, 1, 0, off);
	if (got <= 0)
		return got;
	if (!sendpage_ok(*page)) {
		iov_iter_revert(from, got);
		return 0;
	}
	get_page(*page);
#else
	got = iov_iter_get_pages2(from, page, max, 1, off);
	if (got <= 0)
		return got;
	if (!sendpage_ok(*page)) {
		put_page(*page);
		iov_iter_revert(from, got);
		return 0;
	}
#endif
	return got;
}

/* kzalloc_obj(): newer kernels allocate an object by its type. */
#ifndef kzalloc_obj
#define kzalloc_obj(obj, gfp)	kzalloc(sizeof(obj), gfp)
#endif
#ifndef kvzalloc_obj
#define kvzalloc_obj(obj, gfp)	kvzalloc(sizeof(obj), gfp)
#endif

#endif /* _SDP_COMPAT_H */
