#!/bin/bash
# scale.sh: many SDP connections between host A and host B at once
# (tools/sdp_many): all set up concurrently, then each moves a checksummed
# amount both ways at the same time, to an orderly EOF.  Afterwards the
# SDP sockets (/proc/net/sdp) and the RDMA objects (`rdma resource`) are
# back where they were: nothing leaks.  The same over TCP first, the
# reference that checks the tool.
# Env: SDP_SCALE_CONNS (connections, default 200), SDP_SCALE_BYTES (bytes
# each way on each, default 32768).
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
MANY=${SDP_MANY:-$here/../build/tools/sdp_many}
CONNS=${SDP_SCALE_CONNS:-200}
BYTES=${SDP_SCALE_BYTES:-32768}

# What must come back after the connections close: the RDMA objects of
# every device (pd, cq, qp, cm_id, mr counts) and the number of SDP sockets.
baseline() { rdma resource show; echo "sdp sockets: $(($(wc -l </proc/net/sdp) - 1))"; }

# no_leak BASELINE: waits (bounded: teardown is asynchronous) until the
# baseline is back
no_leak() {
    local now _
    for _ in $(seq 150); do
        now=$(baseline)
        [[ $now == "$1" ]] && return 0
        sleep 0.2
    done
    echo "before:"; echo "$1"; echo "now:"; echo "$now"; return 1
}

# many [sdp_many options]: CONNS connections, BYTES each way, no leak after
many() {
    local base
    base=$(baseline)
    timeout -k 5 240 "$MANY" -n "$CONNS" -s "$BYTES" "$@"
    no_leak "$base"
}

ktap_plan 2
ktap_run "tcp_${CONNS}_connections" many -t
ktap_run "sdp_${CONNS}_connections" many
ktap_finish
