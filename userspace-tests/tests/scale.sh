#!/bin/bash
# scale.sh: many SDP connections between host A and host B at once
# (tools/sdp_many): all set up concurrently, then each moves a checksummed
# amount both ways at the same time, to an orderly EOF.  Afterwards the
# SDP sockets (/proc/net/sdp) and the RDMA objects (`rdma resource`) are
# back where they were: nothing leaks.  The same over TCP first, the
# reference that checks the tool.
# Then idle connections all closed at once, a few times over: every end
# closes in order (both DisConns went through), none is reset, and their
# teardowns, racing each other and the CM's events, leave nothing behind
# (the bed's kernel-log check catches a teardown freed while queued).
# Then many more through one listener: SDP_SCALE_MANY (5000) connections
# all set up at once, a little data checked on each, all closed, nothing
# left (the listen backlog raised to take them, as a server's would be).
# Env: SDP_SCALE_CONNS (connections, default 200), SDP_SCALE_BYTES (bytes
# each way on each, default 32768), SDP_SCALE_CLOSE_CONNS (idle connections
# closed at once, default 100), SDP_SCALE_CLOSE_ROUNDS (default 3),
# SDP_SCALE_MANY (default 5000), SDP_SCALE_MANY_BYTES (default 4096).
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
MANY=${SDP_MANY:-$SDP_BUILD/tools/sdp_many}
CONNS=${SDP_SCALE_CONNS:-200}
BYTES=${SDP_SCALE_BYTES:-32768}
CLOSE_CONNS=${SDP_SCALE_CLOSE_CONNS:-100}
CLOSE_ROUNDS=${SDP_SCALE_CLOSE_ROUNDS:-3}
MANY_CONNS=${SDP_SCALE_MANY:-5000}
MANY_BYTES=${SDP_SCALE_MANY_BYTES:-4096}

# many [sdp_many options]: CONNS connections, BYTES each way, no leak after
many() {
    local base
    base=$(sdp_resources)
    timeout -k 5 240 "$MANY" -n "$CONNS" -s "$BYTES" "$@"
    sdp_wait_resources "$base"
}

# close_at_once: CLOSE_ROUNDS times, CLOSE_CONNS idle connections that the
# tool closes one end after the other as soon as they are up (standard
# input is empty); every end counts an orderly close, none a reset
close_at_once() {
    local base stats r closes resets
    base=$(sdp_resources)
    stats=$(mktemp)
    cat /proc/net/sdpstats >"$stats"
    for r in $(seq "$CLOSE_ROUNDS"); do
        timeout -k 5 240 "$MANY" -n "$CLOSE_CONNS" -s 0 -w -q </dev/null >/dev/null ||
            { echo "round $r: sdp_many failed"; return 1; }
    done
    sdp_wait_resources "$base"
    closes=$(($(sdp_stat OrderlyCloses) - $(sdp_stat OrderlyCloses "$stats")))
    resets=$(($(sdp_stat Resets) - $(sdp_stat Resets "$stats")))
    rm -f "$stats"
    echo "$((CLOSE_ROUNDS * CLOSE_CONNS)) connections: $closes orderly closes, $resets resets"
    ((closes == 2 * CLOSE_ROUNDS * CLOSE_CONNS && resets == 0))
}

# many_through_one_listener: MANY_CONNS connections at once, MANY_BYTES
# each way on each, checked; the RDMA objects and sockets back after
many_through_one_listener() {
    local base somaxconn rc=0
    somaxconn=$(sysctl -n net.core.somaxconn)
    ((somaxconn >= MANY_CONNS)) || sysctl -qw net.core.somaxconn="$MANY_CONNS"
    base=$(sdp_resources)
    timeout -k 5 600 "$MANY" -n "$MANY_CONNS" -s "$MANY_BYTES" || rc=$?
    sysctl -qw net.core.somaxconn="$somaxconn"
    ((rc == 0)) || return "$rc"
    sdp_wait_resources "$base"
}

ktap_plan 4
ktap_run "tcp_${CONNS}_connections" many -t
ktap_run "sdp_${CONNS}_connections" many
ktap_run "sdp_${CLOSE_CONNS}_closed_at_once" close_at_once
ktap_run "sdp_${MANY_CONNS}_through_one_listener" many_through_one_listener
ktap_finish
