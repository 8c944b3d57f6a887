#!/bin/bash
# observability.sh: what SDP shows of itself: the per-namespace counters in
# /proc/net/sdpstats, the sdp tracepoints, and the rx_queue/tx_queue
# columns of /proc/net/sdp.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_hold.sh"
. "$here/lib/sdp_resources.sh"
TRACING=/sys/kernel/tracing

# waits (bounded) until counter $1 reaches $2: connections close in the background
wait_stat() {
    local i
    for i in $(seq 100); do
        (($(sdp_stat "$1") >= $2)) && return 0
        sleep 0.1
    done
    echo "$1 is $(sdp_stat "$1"), want $2"; return 1
}

counters_follow_a_transfer() {
    local before=/tmp/sdpstats.before bytes=1048576
    cp /proc/net/sdpstats "$before"
    "$SDP_PAIR" -q -s "$bytes"
    wait_stat OrderlyCloses $(($(sdp_stat OrderlyCloses "$before") + 2))
    local k want
    for k in ActiveOpens:1 PassiveOpens:1 TxBytes:$bytes RxBytes:$bytes RxMsgDisConn:2 TxMsgDisConn:2; do
        want=$(($(sdp_stat "${k%%:*}" "$before") + ${k#*:}))
        [[ $(sdp_stat "${k%%:*}") -eq $want ]] || { echo "${k%%:*} is $(sdp_stat "${k%%:*}"), want $want"; return 1; }
    done
    # each Data message carries a receive buffer's size at most (its header lands apart)
    local payload least
    payload=$(cat /sys/module/sdp/parameters/rx_buf_size)
    least=$(((bytes + payload - 1) / payload))
    (($(sdp_stat TxMsgData) - $(sdp_stat TxMsgData "$before") >= least)) ||
        { echo "fewer than $least Data messages"; return 1; }
    [[ $(sdp_stat Resets) -eq $(sdp_stat Resets "$before") ]] || { echo "a connection was reset"; return 1; }
}

tracepoints_fire() {
    # Without recording task names: that hooks sched_switch and sched_wakeup,
    # and under TCG a vCPU running ttwu_do_activate() while its tracepoint is
    # patched in has been seen to hit the breakpoint after the patch was done.
    local record_cmd
    record_cmd=$(cat "$TRACING/options/record-cmd")
    echo 0 >"$TRACING/options/record-cmd"
    echo 1 >"$TRACING/events/sdp/enable"
    echo >"$TRACING/trace"
    "$SDP_PAIR" -q -s 1000
    sleep 1
    echo 0 >"$TRACING/events/sdp/enable"
    echo "$record_cmd" >"$TRACING/options/record-cmd"
    local e
    for e in "sdp_connect: .* 10.99.0.1:[0-9]* -> 10.99.0.2" "sdp_accept: .* 10.99.0.2:[0-9]* -> 10.99.0.1" "sdp_close:"; do
        grep -q "$e" "$TRACING/trace" || { cat "$TRACING/trace"; echo "no '$e' event"; return 1; }
    done
    [[ $(grep -c "sdp_close:" "$TRACING/trace") -eq 2 ]] || { echo "want two sdp_close events"; return 1; }
}

queues_in_proc_net_sdp() {
    sdp_hold_start -p 18520 -s 5000
    local line
    # the accepted end has the 5000 bytes (0x1388) unread: its rx_queue
    line=$(awk '$2 ~ /:4858$/ && $4 == "01"' /proc/net/sdp)
    sdp_hold_stop
    [[ $(awk '{ print $5 }' <<<"$line") == 00000000:00001388 ]] || { echo "line: $line"; return 1; }
}

other_namespace_counts_nothing() {
    "$SDP_PAIR" -q
    (($(sdp_stat ActiveOpens) > 0))
    [[ $(unshare -n awk '$1 == "ActiveOpens" { print $2 }' /proc/self/net/sdpstats) == 0 ]]
}

ktap_plan 4
ktap_run counters_follow_a_transfer counters_follow_a_transfer
ktap_run tracepoints_fire tracepoints_fire
ktap_run queues_in_proc_net_sdp queues_in_proc_net_sdp
ktap_run other_namespace_counts_nothing other_namespace_counts_nothing
ktap_finish
