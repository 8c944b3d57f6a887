#!/bin/bash
# qperf_sdp.sh: unmodified qperf's sdp_bw and sdp_lat (socket(27, ...),
# as qperf has always done it) between host B (the qperf server) and host
# A (the client), over IPv4 and IPv6, with tcp_bw as the control: each
# completes, reports a non-zero bandwidth or latency and no send or
# receive errors, and the SDP traffic crossed rxeA <-> rxeB.  sdp_lat's
# blocking reads also show who polls the completion queue.  Short runs,
# small messages: a test, not the benchmark (make bench).
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_qperf.sh"
. "$here/lib/sdp_resources.sh"
PORT=${SDP_QPERF_PORT:-19766}    # qperf's control port (not the default one)
TIME=${SDP_QPERF_TIME:-2}        # seconds per qperf test
T=$((TIME * 2 + 60))             # a qperf run's time limit

server_log=$(mktemp)
# shellcheck disable=SC2329  # (the EXIT trap runs it)
stop_server() {
    qperf_server_stop
    rm -f "$server_log"
}
trap stop_server EXIT
qperf_server_start "$PORT" "$server_log" || true    # (the cases say what fails)

# qperf_check HOST TEST MSG_SIZE: runs one qperf test from host A against
# the server at HOST; prints its output; fails unless it reports a
# positive result and no errors.
qperf_check() {
    local host=$1 test=$2 size=$3 out value unit errs
    out=$(timeout -k 5 "$T" qperf "$host" --listen_port "$PORT" -t "$TIME" -m "$size" \
          -vvs "$test" 2>&1) || { echo "$out"; echo "qperf failed"; return 1; }
    echo "$out"
    read -r value unit < <(awk '$1 == "bw" || $1 == "latency" { print $3, $4; exit }' <<<"$out")
    [[ -n ${value:-} ]] || { echo "qperf reported no result"; return 1; }
    awk -v v="$value" 'BEGIN { exit !(v > 0) }' ||
        { echo "$test: $value $unit: not a positive result"; return 1; }
    errs=$(awk '$1 ~ /_errors$/ && $3 != 0' <<<"$out")
    [[ -z $errs ]] || { echo "$test: errors: $errs"; return 1; }
}

tcp_bw() { qperf_check "$SDP_B4" tcp_bw 4096; }

# sdp_test HOST TEST SIZE: the qperf test, over rxeA -> rxeB and back
sdp_test() {
    local a0 b0 c0 d0 a1 b1 c1 d1
    read -r a0 b0 c0 d0 <<<"$(rxe_pkt_counts)"
    qperf_check "$@"
    read -r a1 b1 c1 d1 <<<"$(rxe_pkt_counts)"
    echo "packets $SDP_A_RDMA->$SDP_B_RDMA $((a1 - a0))/$((b1 - b0))," \
         "$SDP_B_RDMA->$SDP_A_RDMA $((c1 - c0))/$((d1 - d0)) (sent/received)"
    ((a1 > a0 && b1 > b0 && c1 > c0 && d1 > d0)) ||
        { echo "the traffic did not go between $SDP_A_RDMA and $SDP_B_RDMA"; return 1; }
}

# Soft-RoCE of the bed's 6.12 and 7.x raises completion events from a
# kworker, where sdp.ko hands each one to the reader that sleeps in
# recv() (CqEventHandovers), so that it polls the queue itself rather
# than through ksoftirqd; 6.1's raises them in a tasklet, where the
# softirq polls at once and nothing is handed over.  Either way every
# message received is a completion polled (CqCompletions), and the
# events are counted where they were raised (CqEvents, CqEventsInTask).
sdp_lat_handovers() {
    local rel c mark
    local -A moved=()
    mark=$(mktemp)
    cp /proc/net/sdpstats "$mark"
    sdp_test "$SDP_B4" sdp_lat 64
    for c in CqEventHandovers CqEvents CqEventsInTask CqCompletions RxMsgData; do
        moved[$c]=$(($(sdp_stat "$c") - $(sdp_stat "$c" "$mark")))
    done
    rm -f "$mark"
    rel=$(uname -r)
    echo "on $rel: $(for c in "${!moved[@]}"; do printf '%s +%s ' "$c" "${moved[$c]}"; done)"
    ((moved[RxMsgData] >= 100)) || { echo "fewer than 100 messages received"; return 1; }
    ((moved[CqCompletions] >= moved[RxMsgData])) ||
        { echo "fewer completions polled than messages received"; return 1; }
    ((moved[CqEvents] >= 1)) || { echo "no completion event"; return 1; }
    if [[ $(printf '%s\n' "$rel" 6.12 | sort -V | head -1) == 6.12 ]]; then
        ((moved[CqEventsInTask] == moved[CqEvents])) ||
            { echo "events raised outside a kworker"; return 1; }
        ((moved[CqEventHandovers] >= 100 && moved[CqEventHandovers] <= moved[CqEventsInTask])) ||
            { echo "sleeping readers polled no completions, or more than there were events"; return 1; }
    else
        ((moved[CqEventsInTask] == 0)) || { echo "events raised in process context"; return 1; }
        ((moved[CqEventHandovers] == 0)) || { echo "events from softirq were handed over"; return 1; }
    fi
}

ktap_plan 4
ktap_run tcp_bw tcp_bw
ktap_run sdp_bw sdp_test "$SDP_B4" sdp_bw 4096
ktap_run sdp_lat sdp_lat_handovers
ktap_run sdp_bw_ipv6 sdp_test "$SDP_B6" sdp_bw 4096
ktap_finish
