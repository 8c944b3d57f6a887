#!/bin/bash
# apps_iperf3.sh: iperf3, unmodified, on SDP through sdp_run (lib/sdp_apps.sh).
# The client sends BYTES (-n) and reports, in its JSON, what the server
# received.  Each run is two connections, iperf3's control connection and
# its data connection.  iperf3 checks no data, and its data cannot be
# checked from outside: its file mode (-F) sends from the start of its
# buffer again after a short write, which its non-blocking sockets get over
# TCP as well (iperf_tcp_send, 3.12 to 3.18); the other apps_*.sh check
# the same paths with checksums.
#  - sdp at both ends: the server listens on SDP only, the connections are
#    in /proc/net/sdp (path sdp) while the data flows, SDP counted two
#    active and two passive opens and carried what the server received.
#  - a client under a `both` rule against a server that speaks only TCP:
#    both connections fall back (FallbackRefused +2), no SDP open.
#  - a server under a `both` rule, listening on SDP and TCP, with a plain
#    TCP client: both connections are accepted over TCP (FallbackAccepts +2),
#    and an SDP client of the same server gets SDP.
# Env: SDP_APPS_BYTES  what the client sends (default 16 MiB)
# shellcheck disable=SC2317,SC2329  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_apps.sh"
PORT=5201
BYTES=${SDP_APPS_BYTES:-16777216}

# server RULE PATH: an iperf3 server on host B for one test, under RULE,
# listening on PATH (sdp, tcp, both)
server() {
    app_start server "$1" iperf3 -s -1 -B "$SDP_B4" -p "$PORT"
    app_listens "$PORT" "$2"
}

# client RULE: the client sends BYTES; RECEIVED is what the server got
client() {
    local out
    out=$(app_run "$1" iperf3 -c "$SDP_B4" -p "$PORT" -n "$BYTES" -J)
    app_wait server
    read -r RECEIVED bps < <(iperf3_received <<<"$out")
    echo "iperf3: the server received $RECEIVED bytes, $((bps / 1000000)) Mbit/s"
    ((RECEIVED > 0)) || { echo "$out"; return 1; }
}

sdp_both_ends() {
    apps_stats_mark
    server "use sdp server iperf3 $SDP_B4:$PORT" sdp
    app_watch_start "$PORT" sdp
    client "use sdp client iperf3 $SDP_B4:$PORT"
    app_watch_saw
    moved_by ActiveOpens 2
    moved_by PassiveOpens 2
    moved_at_least RxBytes "$RECEIVED"
}

both_client_tcp_server() {
    apps_stats_mark
    server "" tcp
    client "use both client iperf3 *:$PORT"
    moved_by FallbackRefused 2
    moved_by ActiveOpens 0
}

both_server_tcp_client() {
    apps_stats_mark
    server "use both server * *:$PORT" both
    client ""
    moved_by FallbackAccepts 2
    moved_by PassiveOpens 0
    server "use both server * *:$PORT" both
    client "use sdp client * *:$PORT"
    moved_by PassiveOpens 2
}

apps_cases
