#!/bin/bash
# module_lifecycle.sh: sdp.ko as DKMS installed it: its version and alias,
# autoloading by socket(27, ...), unloading refused while a socket is open,
# 20 load/connect/unload cycles that leave no RDMA object and no memory
# behind, and buffers of sizes across the rx_buf_size range.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_hold.sh"
. "$here/lib/sdp_resources.sh"
CYCLES=${SDP_CYCLES:-20}

loaded() { grep -q "^sdp " /proc/modules; }

modinfo_as_installed() {
    local want
    want=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$here/../dkms.conf")
    [[ $(modinfo -F version sdp) == "$want" ]] || { echo "version $(modinfo -F version sdp), want $want"; return 1; }
    modinfo -F alias sdp | grep -qx "net-pf-27"
    modinfo -F filename sdp | grep -q "/updates/"
}

rmmod_refused_while_open() {
    loaded || modprobe sdp
    sdp_hold_start
    if rmmod sdp 2>/dev/null; then echo "rmmod succeeded with sockets open"; return 1; fi
    loaded
    sdp_hold_stop
    rmmod sdp
    ! loaded
}

socket_autoloads() {
    ! loaded || rmmod sdp
    "$SDP_PAIR" -q
    loaded
}

# Memory the kernel can still hand out, in KiB.  The buffers are whole
# pages, in no slab cache: a leaked pool shows only here.  Free pages
# in the per-CPU lists are not in MemAvailable, and those lists swing by
# megabytes from one moment to the next: they are added back, from
# /proc/zoneinfo, after the per-CPU counters are folded in.
mem_avail() {
    echo 1 >/proc/sys/vm/stat_refresh
    awk -v kib=$(($(getconf PAGESIZE) / 1024)) '
        FILENAME ~ /zoneinfo/ && $1 == "count:" { pcp += $2 }
        FILENAME ~ /meminfo/ && $1 == "MemAvailable:" { avail = $2 }
        END { print avail + pcp * kib }' /proc/zoneinfo /proc/meminfo
}

load_unload_cycles() {
    local res0 avail0 avail1 i
    loaded || modprobe sdp
    "$SDP_PAIR" -q -n 2                   # warm the caches up
    rmmod sdp
    res0=$(rdma resource show) avail0=$(mem_avail)
    for ((i = 0; i < CYCLES; i++)); do
        modprobe sdp
        "$SDP_PAIR" -q -n 2
        "$SDP_PAIR" -q -6
        rmmod sdp
        [[ $(rdma resource show) == "$res0" ]] ||
            { echo "cycle $i: RDMA objects left:"; rdma resource show; echo "before:"; echo "$res0"; return 1; }
        ! grep -q "^SDP " /proc/slabinfo || { echo "cycle $i: SDP slab cache survived rmmod"; return 1; }
    done
    avail1=$(mem_avail)
    echo "MemAvailable and per-CPU free pages: $avail0 KiB before, $avail1 KiB after $CYCLES cycles"
    # Each cycle makes 3 connections and the two devices' receive pools
    # (4 MiB each with the default parameters): a leak of the pools in
    # every cycle would take 160 MiB.
    ((avail0 - avail1 < 16384)) || { echo "they fell by $((avail0 - avail1)) KiB"; return 1; }
    modprobe sdp
}

# Buffers are made of pieces posted as one SGE each, 16 at most
# (sdp_buf.c): pages, or for a buffer bigger than 16 pages the least
# power-of-two multiple of a page that does (Soft-RoCE takes 27 SGEs in a
# shared receive queue's requests).  For each size: data arrives intact;
# each device's shared receive pool holds rx_pool_size buffers of that many
# pieces (sdpstats' PoolMemory, with spare pieces on top, 8 buffers' worth
# at most); and a connected end that has been idle a while holds its send
# slots' headers alone (the mem column of /proc/net/sdp).  The BSDH of
# each buffer's message lands apart, in a 16-byte slot of the pool's.
buffer_sizes() {
    local page size shift n chunk pool tx want got mems _
    page=$(getconf PAGESIZE)
    trap 'rmmod sdp 2>/dev/null; modprobe sdp' EXIT    # the defaults again, whatever happens
    for size in 1024 40000 65536 1048576; do
        ! loaded || rmmod sdp
        modprobe sdp rx_buf_size="$size"
        pool=$(cat /sys/module/sdp/parameters/rx_pool_size)
        tx=$(cat /sys/module/sdp/parameters/tx_ring_size)
        timeout 60 "$SDP_PAIR" -q -s $((3 * size + 12345)) ||
            { echo "rx_buf_size=$size: the transfer failed"; sdp_pair_state; return 1; }
        shift=0
        while (((16 * page << shift) < size)); do shift=$((shift + 1)); done
        n=$(((size + (page << shift) - 1) / (page << shift)))
        chunk=$((page << shift))
        want=$((2 * pool * (n * chunk + 16)))    # two devices: buffers, and the slots their BSDHs land in
        sdp_hold_start -p 18530 -s $((3 * size))
        got=$(sdp_stat PoolMemory)
        for _ in $(seq 50); do
            mems=$(awk '$4 == "01" { print $8 }' /proc/net/sdp | sort -u)
            [[ $mems == "$((tx * 32))" ]] && break
            sleep 0.1
        done
        sdp_hold_stop 30 || { echo "rx_buf_size=$size"; return 1; }
        ((got >= want && got <= want + 2 * 8 * n * chunk)) ||
            { echo "rx_buf_size=$size: pools of $got bytes, want $want and spares"; return 1; }
        [[ $mems == "$((tx * 32))" ]] ||
            { echo "rx_buf_size=$size: idle ends hold $mems bytes, want $((tx * 32))"; return 1; }
    done
}

ktap_plan 5
ktap_run modinfo_as_installed modinfo_as_installed
ktap_run rmmod_refused_while_open rmmod_refused_while_open
ktap_run socket_autoloads socket_autoloads
ktap_run load_unload_cycles load_unload_cycles
ktap_run buffer_sizes buffer_sizes
ktap_finish
