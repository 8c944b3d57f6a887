#!/bin/bash
# module_lifecycle.sh: sdp.ko as DKMS installed it: its version and alias,
# autoloading by socket(27, ...), unloading refused while a socket is open,
# and 20 load/connect/unload cycles that leave no RDMA object and no
# memory behind.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_hold.sh"
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

# Per-cache active objects of the kmalloc caches an SDP connection uses.
slab_objs() { awk '$1 == "kmalloc-16k" || $1 == "kmalloc-1k" { s += $2 } END { print s }' /proc/slabinfo; }

load_unload_cycles() {
    local res0 slab0 slab1 i
    loaded || modprobe sdp
    "$SDP_PAIR" -q -n 2                   # warm the caches up
    rmmod sdp
    res0=$(rdma resource show) slab0=$(slab_objs)
    for ((i = 0; i < CYCLES; i++)); do
        modprobe sdp
        "$SDP_PAIR" -q -n 2
        "$SDP_PAIR" -q -6
        rmmod sdp
        [[ $(rdma resource show) == "$res0" ]] ||
            { echo "cycle $i: RDMA objects left:"; rdma resource show; echo "before:"; echo "$res0"; return 1; }
        ! grep -q "^SDP " /proc/slabinfo || { echo "cycle $i: SDP slab cache survived rmmod"; return 1; }
    done
    slab1=$(slab_objs)
    echo "kmalloc-16k + kmalloc-1k objects: $slab0 before, $slab1 after $CYCLES cycles"
    # One leaked connection would leave a receive ring: 32 of kmalloc-16k.
    ((slab1 - slab0 < 32)) || { echo "slab objects grew by $((slab1 - slab0))"; return 1; }
    modprobe sdp
}

ktap_plan 4
ktap_run modinfo_as_installed modinfo_as_installed
ktap_run rmmod_refused_while_open rmmod_refused_while_open
ktap_run socket_autoloads socket_autoloads
ktap_run load_unload_cycles load_unload_cycles
ktap_finish
