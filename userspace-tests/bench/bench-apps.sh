#!/bin/bash
# bench-apps.sh: real programs for `make bench`, run in the same guest
# after bench-nfs.sh (KTAP: one case per program and path).  iperf3 (server
# on host B, client on host A, APPS_MIB MiB per run) and redis-benchmark
# (SET and GET from CLIENTS clients, 64-byte values, against redis-server
# on host B), unmodified, over three paths of the same link: tcp (plain, over
# va/vb), sdp (libsdp.so through sdp_run, a `use sdp` rule at each end) and
# rsocket (rdma-core's librspreload.so at each end, over rxeA/rxeB).
# Rows app_iperf3_PATH (size = the bytes sent, MB/s = 10^6 bytes/s, as the
# server received them), app_redis_set_PATH and app_redis_get_PATH (size =
# the value's bytes, req/s), app_redis_set_p50_PATH, ..._p99_PATH (ms).
# The sdp runs went over SDP (its counters), the rsocket runs over rxe (its
# packet counters).  Under librspreload each program is tried; one that
# does not run there (rsockets have no epoll; they refuse some getsockopt
# options) is a skip that says what failed.
# Env: SDP_BENCH_OUT (required), SDP_BENCH_RUNS, SDP_BENCH_APPS_MIB (0: no
# runs), SDP_BENCH_REDIS_REQUESTS, SDP_BENCH_APPS_PATHS (tcp sdp rsocket).
# shellcheck disable=SC2317,SC2329  # (the cases run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_resources.sh"
. "$here/lib/sdp_apps.sh"
. "$here/lib/sdp_qperf.sh"    # (rxe_counter)
OUT=${SDP_BENCH_OUT:?SDP_BENCH_OUT: the results folder}
RUNS=${SDP_BENCH_RUNS:-3}
APPS_MIB=${SDP_BENCH_APPS_MIB:-64}
REQUESTS=${SDP_BENCH_REDIS_REQUESTS:-10000}
read -ra PATHS <<<"${SDP_BENCH_APPS_PATHS:-tcp sdp rsocket}"
CLIENTS=4
VALUE=64
IPERF_PORT=5211 REDIS_PORT=6389
RSPRELOAD=$(compgen -G '/usr/lib/*/rsocket/librspreload.so' | head -n1 || true)
CSV=$OUT/results.csv
LOG=$OUT/bench.log
APPS_WORK=/run/sdp-bench-apps

log() { printf '%s\n' "$*" >>"$LOG"; }

# start NAME PATH PORT CMD...: CMD as a server on host B over PATH
start() {
    local name=$1 path=$2 port=$3
    shift 3
    case $path in
    tcp) app_start "$name" "" "$@" ;;
    sdp) app_start "$name" "use sdp server * $SDP_B4:$port" "$@" ;;
    rsocket) app_start "$name" "" env LD_PRELOAD="$RSPRELOAD" "$@" ;;
    esac
}

# client PATH PORT CMD...: CMD as a client on host A over PATH (60 s at most)
client() {
    local path=$1 port=$2
    shift 2
    case $path in
    tcp) timeout -k 5 60 "$@" ;;
    sdp) timeout -k 5 60 "$SDP_RUN" -r "use sdp client * $SDP_B4:$port" "$@" ;;
    rsocket) LD_PRELOAD=$RSPRELOAD timeout -k 5 60 "$@" ;;
    esac
}

# ready NAME TEXT: the server's output says TEXT (within 30 s)
ready() {
    local _
    for _ in $(seq 300); do
        grep -q "$2" "$APPS_WORK/$1.log" && return 0
        kill -0 "${APP_PID[$1]}" 2>/dev/null || break
        sleep 0.1
    done
    app_log "$1"
    echo "$1 did not say \"$2\""
    return 1
}

# The counters that show the path: SDP's opens, rxe's packets.
mark() { sdp0=$(sdp_stat ActiveOpens) rxe0=$(rxe_counter "$SDP_B_RDMA" rcvd_pkts); }
went_over() {
    case $1 in
    sdp) (($(sdp_stat ActiveOpens) > sdp0)) || { echo "no SDP connection was made"; return 1; } ;;
    rsocket) (($(rxe_counter "$SDP_B_RDMA" rcvd_pkts) - rxe0 > 1000)) || { echo "the traffic did not cross $SDP_B_RDMA"; return 1; } ;;
    tcp) (($(sdp_stat ActiveOpens) == sdp0)) || { echo "an SDP connection was made"; return 1; } ;;
    esac
}

# iperf3's error in its JSON output
json_error() { python3 -c 'import json, sys
print(json.load(sys.stdin).get("error", "no error reported"))' 2>/dev/null || echo "no JSON output"; }

# server_gone NAME: sets gone to "; NAME died (how)" if NAME is no more
server_gone() {
    local rc=0
    gone=
    kill -0 "${APP_PID[$1]}" 2>/dev/null && return 0
    wait "${APP_PID[$1]}" || rc=$?
    unset "APP_PID[$1]"
    if ((rc > 128)); then gone="; $1 died of signal $((rc - 128))"; else gone="; $1 exited ($rc)"; fi
}

iperf3_case() {
    local path=$1 run out bps mbs vals=()
    for ((run = 1; run <= RUNS; run++)); do
        log "== iperf3 $path run $run"
        mark
        start iperf3 "$path" $IPERF_PORT iperf3 -s -1 --forceflush -B "$SDP_B4" -p $IPERF_PORT
        ready iperf3 "Server listening"
        out=$(client "$path" $IPERF_PORT iperf3 -c "$SDP_B4" -p $IPERF_PORT -n "${APPS_MIB}M" -J) ||
            { log "$out"; app_stop iperf3 >/dev/null; app_log iperf3 >>"$LOG"
              echo "iperf3 over $path failed: $(json_error <<<"$out");" \
                   "the server said: $(grep -m1 '^iperf3: ' "$APPS_WORK/iperf3.log" || echo nothing)"
              return 1; }
        app_wait iperf3
        log "$out"
        read -r _ bps < <(iperf3_received <<<"$out")
        mbs=$(awk -v b="$bps" 'BEGIN { printf "%.6g\n", b / 8e6 }')
        went_over "$path"
        echo "app_iperf3_$path,$((APPS_MIB << 20)),$run,$mbs,MB/s" >>"$CSV"
        vals+=("$mbs")
    done
    echo "iperf3 over $path, $APPS_MIB MiB: ${vals[*]} MB/s"
}

redis_case() {
    local path=$1 run out rows
    for ((run = 1; run <= RUNS; run++)); do
        log "== redis $path run $run"
        mark
        start redis "$path" $REDIS_PORT redis-server --bind "$SDP_B4" --port $REDIS_PORT \
            --save '' --appendonly no --protected-mode no
        ready redis "Ready to accept"
        out=$(client "$path" $REDIS_PORT redis-benchmark -h "$SDP_B4" -p $REDIS_PORT \
              -c $CLIENTS -n "$REQUESTS" -d $VALUE -t set,get --csv) ||
            { log "$out"; server_gone redis; app_stop redis >/dev/null; app_log redis >>"$LOG"
              echo "redis-benchmark over $path failed${gone:-: $(tail -n1 <<<"$out")}"; return 1; }
        app_stop redis
        log "$out"
        went_over "$path"
        # "test","rps","avg","min","p50","p95","p99","max"
        rows=$(awk -F'"' -v p="$path" -v run="$run" -v size=$VALUE '
            $2 == "SET" || $2 == "GET" {
                t = tolower($2)
                printf "app_redis_%s_%s,%s,%s,%s,req/s\n", t, p, size, run, $4
                printf "app_redis_%s_p50_%s,%s,%s,%s,ms\n", t, p, size, run, $10
                printf "app_redis_%s_p99_%s,%s,%s,%s,ms\n", t, p, size, run, $14
            }' <<<"$out")
        [[ $(wc -l <<<"$rows") == 6 ]] || { echo "$out"; echo "redis-benchmark did not report SET and GET"; return 1; }
        echo "$rows" >>"$CSV"
        echo "redis over $path, run $run: $(grep -v '^"test"' <<<"$out" | xargs)"
    done
}

if ((APPS_MIB == 0)); then
    ktap_plan 1
    ktap_skip apps "SDP_BENCH_APPS_MIB=0: no runs of real programs asked for"
    ktap_finish
fi
mkdir -p "$APPS_WORK"
[[ -s $CSV ]] || echo "test,size,run,value,unit" >"$CSV"
{
    echo "apps: iperf3 $(iperf3 --version | head -n1 | cut -d' ' -f2), $APPS_MIB MiB per run;" \
         "redis $(redis-server --version | grep -o 'v=[^ ]*'), $CLIENTS clients, $REQUESTS requests," \
         "$VALUE B values; paths ${PATHS[*]}; librspreload ${RSPRELOAD:-absent}"
} >>"$OUT/env-guest.txt"
trap app_stop_all EXIT
# case PROGRAM PATH: rsockets run what they can; what they cannot (no
# epoll, getsockopt options they do not know) is a skip that says why
case_on() {
    local out rc=0
    if [[ $2 != rsocket ]]; then
        ktap_run "app_$1_$2" "$1_case" "$2"
        return
    fi
    out=$("$1_case" "$2" 2>&1) || rc=$?
    # shellcheck disable=SC2001
    sed 's/^/# /' <<<"$out"
    if ((rc == 0)); then ktap_ok "app_$1_$2"; else ktap_skip "app_$1_$2" "not under librspreload: $(tail -n1 <<<"$out")"; fi
}

ktap_plan $((${#PATHS[@]} * 2))
for p in "${PATHS[@]}"; do case_on iperf3 "$p"; done
for p in "${PATHS[@]}"; do case_on redis "$p"; done
ktap_finish
