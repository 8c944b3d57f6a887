#!/bin/bash
# idle_memory.sh: what an idle SDP connection costs the kernel.  N
# connections between host A and host B are set up (tools/sdp_many -w) and
# left idle; the growth of the kernel's used memory (MemTotal - MemFree -
# Buffers - Cached, page cache dropped before each reading), divided by
# the 2N socket ends, is the memory one idle end holds: everything it
# costs, socket, RDMA CM id, QP, CQ, rings, DMA mappings, counted by the
# page allocator.  It must stay within SDP_IDLE_MAX_KIB.  TCP's figure is
# measured the same way first, as the reference.  The module's own count
# agrees: the sockets' mem column of /proc/net/sdp adds up to sdpstats'
# BufferMemory but for the devices' shared receive pools (PoolMemory), and
# all of it is within what the kernel used.  Then all are closed, and
# everything goes back.  A connection's send pages come with its sends and
# go after a second idle.  Connections one after another share the
# devices' pools, which go 5 s after the last: BufferMemory is 0 then.
# Env: SDP_IDLE_CONNS (connections, default 1000), SDP_IDLE_MAX_KIB (the
# bound per end, default 128).
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/lib/sdp_hold.sh"
MANY=${SDP_MANY:-$SDP_BUILD/tools/sdp_many}
SDP_PAIR=${SDP_PAIR:-$SDP_BUILD/tools/sdp_pair}
CONNS=${SDP_IDLE_CONNS:-1000}
MAX_KIB=${SDP_IDLE_MAX_KIB:-128}
WORK=$(mktemp -d)
trap 'exec 8>&- 2>/dev/null; rm -rf "$WORK"' EXIT

# used_kib: the kernel's used memory, page cache dropped first
used_kib() {
    sync
    echo 3 >/proc/sys/vm/drop_caches
    awk '/^(MemTotal):/ { t = $2 } /^(MemFree|Buffers|Cached):/ { f += $2 }
         END { print t - f }' /proc/meminfo
}

# hold_idle [sdp_many options]: CONNS idle connections held open on fd 8
# (closing it ends them); waits until sdp_many says they are up
hold_idle() {
    rm -f "$WORK/in" "$WORK/out"
    mkfifo "$WORK/in"
    timeout -k 5 600 "$MANY" -n "$CONNS" -s 0 -w -q "$@" <"$WORK/in" >"$WORK/out" 2>&1 &
    echo $! >"$WORK/pid"
    exec 8>"$WORK/in"
    local _
    for _ in $(seq 1200); do
        grep -q ready "$WORK/out" 2>/dev/null && return 0
        kill -0 "$(cat "$WORK/pid")" 2>/dev/null || break
        sleep 0.25
    done
    cat "$WORK/out"
    echo "sdp_many did not get $CONNS connections up"
    return 1
}

release_idle() {
    exec 8>&-
    wait "$(cat "$WORK/pid")"
}

# per_end KIB_BEFORE: KiB per socket end that used memory grew by since
per_end() { echo $((($(used_kib) - $1) / (2 * CONNS))); }

tcp_reference() {
    local before
    before=$(used_kib)
    hold_idle -t
    sleep 2
    echo "TCP: $(per_end "$before") KiB per idle end ($CONNS connections)"
    release_idle
}

# sdp_mem_sum: the mem column of /proc/net/sdp, summed over every socket
sdp_mem_sum() { awk 'NR > 1 { s += $(NF - 1) } END { print s + 0 }' /proc/net/sdp; }

sdp_idle() {
    local before res kib shown total pools
    res=$(sdp_resources)
    before=$(used_kib)
    hold_idle
    # the connections' first messages (credit updates) are done by now
    sleep 2
    kib=$(per_end "$before")
    shown=$(sdp_mem_sum)
    total=$(sdp_stat BufferMemory)
    pools=$(sdp_stat PoolMemory)
    echo "SDP: $kib KiB per idle end ($CONNS connections);" \
         "/proc/net/sdp: $((shown / (2 * CONNS))) bytes of buffers per end;" \
         "sdpstats: $((total / 1024)) KiB of buffers, $((pools / 1024)) KiB of them the devices' pools"
    release_idle
    sdp_wait_resources "$res"
    ((shown == total - pools)) || { echo "/proc/net/sdp and sdpstats disagree"; return 1; }
    ((total / 1024 <= kib * 2 * CONNS)) || { echo "buffers counted exceed what the kernel used"; return 1; }
    ((kib <= MAX_KIB)) || { echo "over the bound of $MAX_KIB KiB per idle end"; return 1; }
}

# memory follows traffic: a client that sent 60000 bytes (copied: below
# zcopy_thresh) had send pages for them, and once idle for a second gives
# them back (TxBufferTrims); both ends then hold their send slots' headers
# alone.  (The server leaves the bytes unread: they stay within its
# receive space.)
send_pages_given_back() {
    local trims0 hdr mems _
    trims0=$(sdp_stat TxBufferTrims)
    # (a slot's headers: BSDH and extended header, 32 bytes)
    hdr=$(($(cat /sys/module/sdp/parameters/tx_ring_size) * 32))
    sdp_hold_start -p 18531 -s 60000
    for _ in $(seq 50); do
        mems=$(awk '$4 == "01" && ($2 ~ /:4863$/ || $3 ~ /:4863$/) { print $8 }' /proc/net/sdp | sort -u)
        [[ $mems == "$hdr" ]] && (($(sdp_stat TxBufferTrims) > trims0)) && break
        sleep 0.1
    done
    sdp_hold_stop
    echo "idle ends hold $mems bytes of buffers; TxBufferTrims went from $trims0 to $(sdp_stat TxBufferTrims)"
    [[ $mems == "$hdr" ]] && (($(sdp_stat TxBufferTrims) > trims0))
}

# every buffer is freed with its connection; a device's pool outlives its
# last connection by 5 s, so that connections one after another share it
# (ten of them make the two devices' pools at most), then goes: the
# module's total goes back to 0
buffers_back() {
    local made0 made total _
    made0=$(sdp_stat PoolsMade)
    "$SDP_PAIR" -q -n 10
    made=$(sdp_stat PoolsMade)
    echo "pools made for 10 connections one after another: $((made - made0))"
    ((made - made0 <= 2)) || { echo "want 2 at most"; return 1; }
    for _ in $(seq 100); do
        total=$(sdp_stat BufferMemory)
        [[ $total == 0 ]] && break
        sleep 0.2
    done
    echo "sdpstats BufferMemory with no connection: $total"
    [[ $total == 0 ]]
}

ktap_plan 4
ktap_run "tcp_${CONNS}_idle_reference" tcp_reference
ktap_run "sdp_${CONNS}_idle_at_most_${MAX_KIB}_kib_per_end" sdp_idle
ktap_run send_pages_given_back_when_idle send_pages_given_back
ktap_run pools_shared_then_freed buffers_back
ktap_finish
