// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_nomem_test: makes the SDP module's atomic skb allocations fail, to
 * test what its receive path does when softirq finds no memory for
 * received data (the completion waits, and a work item processes it with
 * memory it may wait for).  The kernel has no fault injection built in,
 * so two kretprobes do it: on __alloc_skb() and alloc_skb_with_frags(),
 * a call made from sdp.ko's code with a gfp mask that may not sleep gets
 * NULL back (the skb it made is freed) while failures are left to make.
 * A test module: not installed, loaded by the tests; it holds sdp.ko
 * while it is loaded.
 *
 * Parameters, in /sys/module/sdp_nomem_test/parameters/:
 *   fails     allocations still to fail (write a number to arm it)
 *   injected  allocations failed so far (read only)
 */
#include <linux/gfp.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <net/net_namespace.h>

#include <uapi/linux/sdp.h>

static atomic_t nomem_fails = ATOMIC_INIT(0);
static atomic_t nomem_injected = ATOMIC_INIT(0);

static int nomem_set_fails(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (!ret)
		atomic_set(&nomem_fails, n);
	return ret;
}

static int nomem_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(kp->arg));
}

static const struct kernel_param_ops nomem_fails_ops = {
	.set	= nomem_set_fails,
	.get	= nomem_get,
};

static const struct kernel_param_ops nomem_injected_ops = {
	.get	= nomem_get,
};

module_param_cb(fails, &nomem_fails_ops, &nomem_fails, 0644);
MODULE_PARM_DESC(fails, "Atomic skb allocations of sdp.ko still to fail");
module_param_cb(injected, &nomem_injected_ops, &nomem_injected, 0444);
MODULE_PARM_DESC(injected, "Atomic skb allocations of sdp.ko failed so far");

/* sdp.ko, held from init to exit: its code is where the calls come from. */
static struct module *nomem_sdp;

/* What the entry handler saw of one call. */
struct nomem_call {
	gfp_t	gfp;
};

static int nomem_entry(struct kretprobe_instance *ri, struct pt_regs *regs,
		       unsigned int gfp_arg)
{
	struct nomem_call *call = (struct nomem_call *)ri->data;

	call->gfp = (__force gfp_t)regs_get_kernel_argument(regs, gfp_arg);
	return 0;
}

/* __alloc_skb(size, gfp_mask, flags, node) */
static int nomem_alloc_skb_entry(struct kretprobe_instance *ri,
				 struct pt_regs *regs)
{
	return nomem_entry(ri, regs, 1);
}

/* alloc_skb_with_frags(header_len, data_len, max_page_order, errcode, gfp_mask) */
static int nomem_with_frags_entry(struct kretprobe_instance *ri,
				  struct pt_regs *regs)
{
	return nomem_entry(ri, regs, 4);
}

static int nomem_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct nomem_call *call = (struct nomem_call *)ri->data;
	struct sk_buff *skb = (struct sk_buff *)regs_return_value(regs);

	if (!skb || gfpflags_allow_blocking(call->gfp) ||
	    !within_module(get_kretprobe_retaddr(ri), nomem_sdp) ||
	    !atomic_add_unless(&nomem_fails, -1, 0))
		return 0;
	kfree_skb(skb);
	regs_set_return_value(regs, 0);
	atomic_inc(&nomem_injected);
	return 0;
}

static struct kretprobe nomem_probes[] = {
	{
		.kp.symbol_name	= "__alloc_skb",
		.entry_handler	= nomem_alloc_skb_entry,
		.handler	= nomem_return,
		.data_size	= sizeof(struct nomem_call),
		.maxactive	= 64,
	},
	{
		.kp.symbol_name	= "alloc_skb_with_frags",
		.entry_handler	= nomem_with_frags_entry,
		.handler	= nomem_return,
		.data_size	= sizeof(struct nomem_call),
		.maxactive	= 64,
	},
};

static struct kretprobe *nomem_probe_ptrs[] = {
	&nomem_probes[0], &nomem_probes[1],
};

/* sdp.ko's struct module: the owner of an SDP socket's operations. */
static struct module *nomem_find_sdp(void)
{
	struct module *mod;
	struct socket *sock;
	int ret;

	ret = sock_create_kern(&init_net, AF_INET_SDP, SOCK_STREAM, 0, &sock);
	if (ret)
		return ERR_PTR(ret);
	mod = sock->ops->owner;
	__module_get(mod);
	sock_release(sock);
	return mod;
}

static int __init nomem_init(void)
{
	int ret;

	nomem_sdp = nomem_find_sdp();
	if (IS_ERR(nomem_sdp))
		return PTR_ERR(nomem_sdp);
	ret = register_kretprobes(nomem_probe_ptrs,
				  ARRAY_SIZE(nomem_probe_ptrs));
	if (ret)
		module_put(nomem_sdp);
	return ret;
}

static void __exit nomem_exit(void)
{
	unregister_kretprobes(nomem_probe_ptrs, ARRAY_SIZE(nomem_probe_ptrs));
	module_put(nomem_sdp);
}

module_init(nomem_init);
module_exit(nomem_exit);

MODULE_DESCRIPTION("Test: atomic skb allocations of sdp.ko fail on demand");
MODULE_LICENSE("GPL");
