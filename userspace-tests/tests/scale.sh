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
. "$here/lib/sdp_resources.sh"
MANY=${SDP_MANY:-$here/../build/tools/sdp_many}
CONNS=${SDP_SCALE_CONNS:-200}
BYTES=${SDP_SCALE_BYTES:-32768}

# many [sdp_many options]: CONNS connections, BYTES each way, no leak after
many() {
    local base
    base=$(sdp_resources)
    timeout -k 5 240 "$MANY" -n "$CONNS" -s "$BYTES" "$@"
    sdp_wait_resources "$base"
}

ktap_plan 2
ktap_run "tcp_${CONNS}_connections" many -t
ktap_run "sdp_${CONNS}_connections" many
ktap_finish
