#!/bin/bash
# apps_redis.sh: redis-server with redis-cli and redis-benchmark, unmodified,
# on SDP through sdp_run (lib/sdp_apps.sh).  redis-cli stores a binary value
# (SET from a file) and reads it back (GET): the same bytes.
# redis-benchmark runs SET and GET from several clients at once (hiredis:
# non-blocking connects, its own event loop) and reports requests per
# second, p50 and p99 latency.
#  - sdp at both ends: the server listens on SDP only, the benchmark's
#    connections are in /proc/net/sdp (path sdp) while it runs, every
#    connection was an SDP open at both ends.
#  - clients under a `both` rule against a server that speaks only TCP:
#    every connection falls back (FallbackRefused), no SDP open.
#  - a server under a `both` rule with plain TCP clients (FallbackAccepts),
#    and an SDP client of the same server, which gets SDP.
# Env: SDP_APPS_VALUE_BYTES    the value's size (default 1 MiB)
#      SDP_APPS_REDIS_REQUESTS the benchmark's requests per test (default 5000)
# shellcheck disable=SC2317,SC2329  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_apps.sh"
PORT=6379
VALUE_BYTES=${SDP_APPS_VALUE_BYTES:-1048576}
REQUESTS=${SDP_APPS_REDIS_REQUESTS:-5000}
CLIENTS=4
VALUE=$APPS_WORK/redis.value GOT=$APPS_WORK/redis.got

# server RULE PATH: redis-server on host B, nothing saved, under RULE,
# listening on PATH (sdp, tcp, both)
server() {
    app_start server "$1" redis-server --bind "$SDP_B4" --port "$PORT" --save '' \
        --appendonly no --protected-mode no --daemonize no
    app_listens "$PORT" "$2"
}

# set_get RULE KEY: redis-cli under RULE stores VALUE at KEY and reads it back
set_get() {
    local out
    out=$(app_run "$1" redis-cli -h "$SDP_B4" -p "$PORT" -x SET "$2" <"$VALUE")
    [[ $out == OK ]] || { echo "SET $2: $out"; return 1; }
    # (--raw: the bytes as they are, and a newline; read whole, as a
    # reader that stops early would kill redis-cli with SIGPIPE)
    app_run "$1" redis-cli -h "$SDP_B4" -p "$PORT" --raw GET "$2" >"$GOT.raw"
    [[ $(stat -c %s "$GOT.raw") == $((VALUE_BYTES + 1)) && $(tail -c 1 "$GOT.raw" | od -An -c) == *'\n'* ]] ||
        { echo "GET $2: not the value and a newline"; return 1; }
    head -c "$VALUE_BYTES" "$GOT.raw" >"$GOT"
    same_file "$VALUE" "$GOT"
}

# bench RULE N: redis-benchmark under RULE, N requests of SET and of GET;
# both tests report requests per second and latencies
bench() {
    local out
    out=$(app_run "$1" redis-benchmark -h "$SDP_B4" -p "$PORT" -c "$CLIENTS" -n "$2" \
          -t set,get -d 64 --csv)
    echo "$out"
    awk -F'"' '$2 == "SET" || $2 == "GET" { n++; if ($4 + 0 <= 0) bad = 1 }
               END { exit !(n == 2 && !bad) }' <<<"$out" ||
        { echo "redis-benchmark did not run SET and GET"; return 1; }
    awk -F'"' '$2 == "SET" || $2 == "GET" {
        printf "# %s: %s requests/s, p50 %s ms, p99 %s ms\n", $2, $4, $10, $14 }' <<<"$out"
}

setup() {
    mkdir -p "$APPS_WORK"
    head -c "$VALUE_BYTES" /dev/urandom >"$VALUE"
}

sdp_both_ends() {
    local rule="use sdp client * $SDP_B4:$PORT"
    apps_stats_mark
    server "use sdp server redis-server $SDP_B4:$PORT" sdp
    set_get "$rule" sdp-key
    app_watch_start "$PORT" sdp
    bench "$rule" "$REQUESTS"
    app_watch_saw
    app_stop server
    moved_at_least ActiveOpens $((2 + CLIENTS))
    moved_by PassiveOpens "$(apps_moved ActiveOpens)"
    moved_at_least RxBytes $((2 * VALUE_BYTES))
}

both_client_tcp_server() {
    local rule="use both client * *:$PORT"
    apps_stats_mark
    server "" tcp
    set_get "$rule" fallback-key
    bench "$rule" 500
    app_stop server
    moved_at_least FallbackRefused $((2 + CLIENTS))
    moved_by ActiveOpens 0
}

both_server_tcp_client() {
    apps_stats_mark
    server "use both server redis-server *:$PORT" both
    set_get "" tcp-key
    moved_by FallbackAccepts 2
    set_get "use sdp client * *:$PORT" tcp-key
    app_stop server
    moved_by PassiveOpens 2
    moved_by FallbackAccepts 2
}

apps_cases
