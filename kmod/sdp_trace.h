/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SDP tracepoints: connection set-up, close, abort and credit stalls.
 * Under /sys/kernel/tracing/events/sdp/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sdp

#if !defined(_SDP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SDP_TRACE_H

#include <linux/in6.h>
#include <linux/tracepoint.h>
#include <net/sock.h>

#include "sdp.h"

/*
 * An abort's reason, a short constant phrase, in a field of fixed size:
 * the same on every kernel (__string()'s helpers changed form in 6.10).
 */
#define SDP_TRACE_WHY_LEN	48

DECLARE_EVENT_CLASS(sdp_sock_class,
		    TP_PROTO(const struct sock *sk),
		    TP_ARGS(sk),
		    TP_STRUCT__entry(__field(const void *, skaddr)
				     __field(int, state)
				     __array(u8, saddr, sizeof(struct sockaddr_in6))
				     __array(u8, daddr, sizeof(struct sockaddr_in6))),
		    TP_fast_assign(__entry->skaddr = sk;
				   __entry->state = sk->sk_state;
				   sdp_fill_sockaddr(sk, (void *)__entry->saddr, false);
				   sdp_fill_sockaddr(sk, (void *)__entry->daddr, true);),
		    TP_printk("sk=%p %pISpc -> %pISpc state=%d", __entry->skaddr,
			      __entry->saddr, __entry->daddr, __entry->state)
);

DEFINE_EVENT(sdp_sock_class, sdp_connect,
	     TP_PROTO(const struct sock *sk),
	     TP_ARGS(sk)
);

DEFINE_EVENT(sdp_sock_class, sdp_accept,
	     TP_PROTO(const struct sock *sk),
	     TP_ARGS(sk)
);

DEFINE_EVENT(sdp_sock_class, sdp_close,
	     TP_PROTO(const struct sock *sk),
	     TP_ARGS(sk)
);

TRACE_EVENT(sdp_abort,
	    TP_PROTO(const struct sock *sk, int err, const char *why),
	    TP_ARGS(sk, err, why),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(int, err)
			     __array(char, why, SDP_TRACE_WHY_LEN)),
	    TP_fast_assign(__entry->skaddr = sk;
			   __entry->err = err;
			   strscpy(__entry->why, why, sizeof(__entry->why));),
	    TP_printk("sk=%p err=%d %s", __entry->skaddr, __entry->err,
		      __entry->why)
);

TRACE_EVENT(sdp_credit_stall,
	    TP_PROTO(const struct sock *sk, int credits, u32 in_flight),
	    TP_ARGS(sk, credits, in_flight),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(int, credits)
			     __field(u32, in_flight)),
	    TP_fast_assign(__entry->skaddr = sk;
			   __entry->credits = credits;
			   __entry->in_flight = in_flight;),
	    TP_printk("sk=%p credits=%d in_flight=%u", __entry->skaddr,
		      __entry->credits, __entry->in_flight)
);

#endif /* _SDP_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sdp_trace
#include <trace/define_trace.h>
