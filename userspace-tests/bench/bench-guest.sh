#!/bin/bash
# bench-guest.sh: the measurements of `make bench`, run in the test bed's
# guest by run-bench (through vm-run and run-tests, hence KTAP: one case
# per test and message size, which fails when a run fails or the traffic
# did not take the path it should).  qperf's server runs on host B, its
# client on host A: TCP crosses va/vb, RC and SDP cross rxeA/rxeB.
# Appends to $SDP_BENCH_OUT/results.csv (test,size,run,value,unit; MB/s
# is 10^6 bytes/s, us microseconds), keeps every tool's output in
# bench.log, the guest's side of the set-up in env-guest.txt and, for
# every run, the sdp.ko and link counters it moved in sdpstats.csv.  The
# qperf tests of one message size (and rstream at its size) take turns,
# run after run, so that the ratios compare runs of the same moment; a
# test named TEST_bcopy is qperf's TEST with sdp.ko's read_zcopy off
# (large sends as Data messages, copied into the receive queue).
# Then the kernel memory an idle connection costs, over TCP and SDP
# (idle_case; rows tcp_idle_*/sdp_idle_*, size = the number of connections,
# unit B/conn).  Then the connection set-up rate over TCP, SDP and
# rsockets, one client thread and eight (setup_case, tools/conn_rate; rows
# setup_TRANSPORT, size = the client threads, unit conn/s).  Then
# user-space RPC bandwidth, the RPC bandwidth programs
# with Debian's libtirpc and the interposer over netids tcp and sdp, a
# multi-threaded server on host B (rpc_case; rows rpc_user_NETID_cCONNS,
# size = the block size, unit MB/s).  Then kernel RPC bandwidth, the
# kernel RPC bandwidth modules (kmod-rpc-bw/) on the patched sunrpc.ko:
# WRITE calls from the client module on host A, a thread per connection,
# to the server module on host B (krpc_case; rows rpc_kernel_NETID_cCONNS),
# the same over one connection with several calls in flight on it, as an
# NFS mount's slots (rows rpc_kdepth_NETID_c1), and to the multi-threaded
# user server (rows rpc_k2u_NETID_cCONNS).  The netids of an RPC case
# take turns, run after run; netid sdp_alt is sdp with the other sdp.ko
# (SDP_BENCH_ALT_MODULE), loaded for each of its runs with the RPC
# servers stopped and started again around it; netid rc is no RPC but
# the link itself, qperf's rc_bw with messages of the block size (rows
# rpc_KIND_rc_c1), in the turns of the one-connection cases only: the
# anchor those rows are held against, measured in the same minutes.
# Their blocks are stamped (WRITE_STAMPED, rpc/sdp_bw_proto.h): checking
# every byte would take the emulated link's CPUs.  What that check costs:
# the kernel modules' rows rpc_kcheck_NETID_c1, one connection, every
# byte filled and checked, in turns with the stamped runs.
# Env (run-bench passes them): SDP_BENCH_OUT (required), SDP_BENCH_TESTS,
# SDP_BENCH_SIZES, SDP_BENCH_RUNS, SDP_BENCH_TIME, SDP_BENCH_RSTREAM_SIZE,
# SDP_BENCH_RSTREAM_MIB, SDP_BENCH_IDLE_CONNS, SDP_BENCH_SETUP_CONNS,
# SDP_BENCH_SETUP_THREADS, SDP_BENCH_RPC_BLOCKS,
# SDP_BENCH_RPC_CONNS, SDP_BENCH_RPC_NETIDS, SDP_BENCH_RPC_MIB, SDP_BENCH_KRPC_DEPTH,
# SDP_BENCH_LINK_RPS, SDP_BENCH_ALT_MODULE: see run-bench.  A test
# named TEST_alt is TEST with the other sdp.ko (SDP_BENCH_ALT_MODULE),
# loaded for each of its runs and the bench's own loaded again after it,
# so that two builds take turns in one boot.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_rpc.sh"
. "$here/lib/sunrpc_modules.sh"
. "$here/lib/sdp_ktest.sh"
. "$here/lib/sdp_qperf.sh"
. "$here/lib/sdp_bench_qperf.sh"
. "$here/lib/udev_quiet.sh"
. "$here/lib/sdp_bench_stats.sh"
OUT=${SDP_BENCH_OUT:?SDP_BENCH_OUT: the results folder}
read -ra TESTS <<<"${SDP_BENCH_TESTS:-tcp_bw tcp_lat rc_bw rc_lat sdp_bw sdp_lat sdp_bw_bcopy sdp_lat_bcopy sdp_bw_zc sdp_lat_nopoll rc_lat_poll}"
read -ra SIZES <<<"${SDP_BENCH_SIZES:-64 4096 65536 1048576}"
RUNS=${SDP_BENCH_RUNS:-5}
TIME=${SDP_BENCH_TIME:-2}
RS_SIZE=${SDP_BENCH_RSTREAM_SIZE:-65536}    # 0: no rstream
RS_MIB=${SDP_BENCH_RSTREAM_MIB:-32}         # MiB each way per rstream run
IDLE=${SDP_BENCH_IDLE_CONNS:-100}           # idle connections held; 0: none
SETUP=${SDP_BENCH_SETUP_CONNS:-200}         # connections per set-up run; 0: none
read -ra SETUP_THREADS <<<"${SDP_BENCH_SETUP_THREADS:-1 8}"
SETUP_PORT=18640                            # conn_rate's listener
read -ra RPC_BLOCKS <<<"${SDP_BENCH_RPC_BLOCKS:-4096 65536 1048576}"
read -ra RPC_CONNS <<<"${SDP_BENCH_RPC_CONNS:-1 4 8}"
# sdp_alt: SDP_BENCH_ALT_MODULE's sdp; rc: not RPC but the link, qperf's
# rc_bw with messages of the block size, in the one-connection rows' turns
read -ra RPC_NETIDS <<<"${SDP_BENCH_RPC_NETIDS:-tcp sdp rc}"
RPC_MIB=${SDP_BENCH_RPC_MIB:-8}             # MiB per RPC run; 0: no RPC
KRPC_DEPTH=${SDP_BENCH_KRPC_DEPTH:-4}       # calls in flight, kdepth rows; 0: none
RPC_PORT=20051                              # the RPC server's, tcp and sdp
KRPC_PORT=20050                             # the kernel RPC server's
KRPC_DIR=$SDP_BUILD/kmod-rpc-bw/$(uname -r)
KRPC_DBG=/sys/kernel/debug/sdp_krpc_bw_client
KRPC_STATS=/sys/kernel/debug/sdp_krpc_bw_server/stats
MANY=$SDP_BUILD/tools/sdp_many
PORT=19765                                  # qperf's control port
CSV=$OUT/results.csv
STATS_CSV=$OUT/sdpstats.csv                 # sdp.ko's counters each SDP run moved
LOG=$OUT/bench.log
ALT_MODULE=${SDP_BENCH_ALT_MODULE:-}        # the sdp.ko of the TEST_alt runs

# bytes SIZE: 64, 4K / 4k, 1M / 1m -> bytes (binary)
bytes() {
    case $1 in
    *[kK]) echo $((${1%?} * 1024)) ;;
    *[mM]) echo $((${1%?} * 1048576)) ;;
    *) echo $(($1)) ;;
    esac
}

log() { printf '%s\n' "$*" >>"$LOG"; }

# The qperf server on host B: it binds the wildcard, and the client
# reaches it at B's address, so both the control connection and the
# tests' own connections go A -> B over va/vb (and rxeA/rxeB).
start_qperf_server() {
    qperf_server_start "$PORT" "$OUT/qperf-server.log" ||
        log "qperf server did not listen on $PORT"
}
# After each case (in the main shell): the server comes back if it died.
check_qperf_server() {
    kill -0 "$QPERF_SERVER" 2>/dev/null && return
    wait "$QPERF_SERVER" 2>/dev/null || true
    log "qperf server died; restarting it"
    start_qperf_server
}
# shellcheck disable=SC2329  # (the EXIT trap runs it)
stop_all() {
    rpc_servers_stop 2>/dev/null || true
    sdp_rpc_cleanup
    rm -rf "$STATE"
    udev_resume
    qperf_server_stop
}
STATE=$(mktemp -d)    # what the cases' subshells leave for the others
trap stop_all EXIT
udev_pause

# Counters that show where the traffic went: Soft-RoCE packets both ways,
# the veth ends' bytes, and lo's (which should stay out of it); and the
# Soft-RoCE retries (go-back-N after a lost or reordered packet, both
# devices) with the packets that arrived twice because of them.
nbytes() { cat "/sys/class/net/$1/statistics/$2_bytes"; }
both() { echo $(($(rxe_counter "$SDP_A_RDMA" "$1") + $(rxe_counter "$SDP_B_RDMA" "$1"))); }
counters() {
    echo "$(rxe_pkt_counts)" \
         "$(nbytes "$SDP_A_IF" tx) $(nbytes "$SDP_B_IF" rx) $(nbytes lo tx)" \
         "$(both completer_retry_err) $(both duplicate_request)"
}

# sdp_module_load alt|own: sdp.ko unloaded, if loaded, and loaded again,
# ALT_MODULE or the one the guest loaded at boot, with the boot's
# parameters (no SDP socket is open between runs; a closing one may take
# a moment)
sdp_module_load() {
    local tries=50
    until [[ ! -d /sys/module/sdp ]] || rmmod sdp 2>/dev/null; do
        ((--tries)) || { echo "sdp.ko stays loaded: $(rmmod sdp 2>&1)"; return 1; }
        sleep 0.2
    done
    # shellcheck disable=SC2086  # (SDP_MODULE_PARAMS: words)
    if [[ $1 == alt ]]; then
        insmod "$ALT_MODULE" ${SDP_MODULE_PARAMS:-} 2>&1
    elif [[ -n ${SDP_MODULE_FILE:-} ]]; then
        insmod "$SDP_MODULE_FILE" ${SDP_MODULE_PARAMS:-} 2>&1
    else
        modprobe sdp ${SDP_MODULE_PARAMS:-} 2>&1
    fi
}

# sdp_module_for NAME alt|own: around a run of NAME (a qperf test TEST_alt,
# or an RPC row over netid sdp_alt), the RPC servers stopped, as they hold
# SDP listeners, and the other sdp.ko loaded (alt), or the bench's own
# loaded again (own; also when the other would not load); nothing for
# other names
sdp_module_for() {
    local out
    [[ $1 == *_alt ]] || return 0
    [[ $2 == own || -r $ALT_MODULE ]] || { echo "$1: no SDP_BENCH_ALT_MODULE to run with"; return 1; }
    out=$(rpc_servers_stop 2>&1 && sdp_module_load "$2") && return 0
    echo "$1: $out"
    [[ $2 == own || -d /sys/module/sdp ]] || sdp_module_load own >/dev/null 2>&1 || true
    return 1
}

# rstream_run SIZE RUN: rsockets' rstream, server on host B, client on A;
# ping-pong of RS_MIB one way then back; prints "MB/s"
rstream_run() {
    local size=$1 run=$2 count port out sout spid t
    count=$(((RS_MIB * 1048576 + size - 1) / size))
    port=$((7471 + run))
    sout=$(mktemp)
    timeout -k 5 180 rstream -b "$SDP_B4" -p "$port" -S "$size" -C "$count" -T b >"$sout" 2>&1 &
    spid=$!
    for _ in $(seq 50); do    # until it listens
        rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr $SDP_B4:$port " && break
        sleep 0.2
    done
    out=$(timeout -k 5 180 rstream -s "$SDP_B4" -b "$SDP_A4" -p "$port" -S "$size" -C "$count" -T b 2>&1) || {
        log "$out"; kill "$spid" 2>/dev/null || true; wait "$spid" 2>/dev/null || true
        log "$(cat "$sout")"; rm -f "$sout"; echo "rstream failed: $(tail -n1 <<<"$out")"; return 1
    }
    wait "$spid" 2>/dev/null || true
    log "$out"; log "server: $(cat "$sout")"; rm -f "$sout"
    # name bytes xfers iters total time Gb/sec usec/xfer; bytes both ways
    t=$(awk '$1 == "custom" { sub(/s$/, "", $6); print $6 }' <<<"$out")
    awk -v t="${t:-0}" -v b=$((2 * count * size)) 'BEGIN {
        if (t <= 0) exit 1; printf "%.6g MB/s\n", b / t / 1e6 }' ||
        { echo "rstream: no time in its output"; return 1; }
}

# check_path TEST BEFORE AFTER: the counters around a run of TEST say its
# traffic took the path it should; prints them
check_path() {
    local test=$1 a0 b0 c0 d0 va0 vb0 lo0 r0 u0 a1 b1 c1 d1 va1 vb1 lo1 r1 u1
    read -r a0 b0 c0 d0 va0 vb0 lo0 r0 u0 <<<"$2"
    read -r a1 b1 c1 d1 va1 vb1 lo1 r1 u1 <<<"$3"
    echo "  $test: $SDP_A_RDMA->$SDP_B_RDMA $((a1 - a0))/$((b1 - b0)) pkts," \
         "$SDP_B_RDMA->$SDP_A_RDMA $((c1 - c0))/$((d1 - d0)) pkts (sent/received);" \
         "$SDP_A_IF tx $((va1 - va0)) B, $SDP_B_IF rx $((vb1 - vb0)) B, lo tx $((lo1 - lo0)) B;" \
         "retries $((r1 - r0)), $((u1 - u0)) pkts twice"
    ((lo1 - lo0 < 65536)) || { echo "traffic went over lo"; return 1; }
    ((va1 > va0 && vb1 > vb0)) || { echo "no traffic over $SDP_A_IF -> $SDP_B_IF"; return 1; }
    if [[ $test != tcp_* ]]; then
        ((a1 > a0 && b1 > b0 && c1 > c0 && d1 > d0)) ||
            { echo "the traffic did not go between $SDP_A_RDMA and $SDP_B_RDMA"; return 1; }
    fi
}

# bench_case SIZE TEST...: RUNS runs of each TEST into the CSV, the tests
# taking turns; checks the path of every run
bench_case() {
    local size=$1 run r unit test before after
    local -A runs_of=()
    shift
    for ((run = 1; run <= RUNS; run++)); do
        for test in "$@"; do
            log "== $test size $size run $run"
            sdp_module_for "$test" alt || return 1
            before=$(counters)
            sdpstats_snap
            if [[ $test == rstream_bw ]]; then
                r=$(rstream_run "$size" "$run") || { echo "$r"; return 1; }
            else
                r=$(qperf_run_again "$test" "$size") ||
                    { echo "$r"; qperf_test_kill; sdp_module_for "$test" own; return 1; }
            fi
            after=$(counters)
            sdpstats_moved "$STATS_CSV" "$test" "$size" "$run"
            sdp_module_for "$test" own || return 1
            read -r r unit <<<"$r"
            echo "$test,$size,$run,$r,$unit" >>"$CSV"
            runs_of[$test]+="$r "
            ((run > 1)) || check_path "$test" "$before" "$after" || return 1
        done
    done
    for test in "$@"; do echo "$test $size B: ${runs_of[$test]}"; done
}

# The RPC bandwidth server on host B: multi-threaded, tcp and sdp on one
# port, found by port (no rpcbind).
# (started from a case's subshell: its pid is kept in $STATE)
start_rpc_server() {
    local seen
    [[ ! -f $STATE/rpcserver.pid ]] || return 0
    sdp_rpc_netconfig "$STATE"
    seen=$(grep -c '^ready' "$OUT/rpc-server.log" 2>/dev/null) || true
    LD_PRELOAD=$SDP_RPC_PRELOAD "$SDP_BUILD/rpc/rpc_bw_server" -m -R -p "$RPC_PORT" tcp sdp \
        >>"$OUT/rpc-server.log" 2>&1 &
    echo $! >"$STATE/rpcserver.pid"
    for _ in $(seq 50); do
        (($(grep -c '^ready' "$OUT/rpc-server.log") > ${seen:-0})) && return 0
        sleep 0.2
    done
    log "RPC server did not start"
}

# rpc_servers_stop: the user RPC server and the kernel RPC modules, which
# hold SDP listeners, stopped (the cases start them again when they need
# them)
rpc_servers_stop() {
    local pid
    if module_loaded sdp_krpc_bw_client; then
        rmmod sdp_krpc_bw_client sdp_krpc_bw_server || return 1
    fi
    [[ -f $STATE/rpcserver.pid ]] || return 0
    pid=$(cat "$STATE/rpcserver.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$STATE/rpcserver.pid"
}

# rpc_case CONNS BLOCK: RUNS runs of RPC_MIB MiB in WRITE calls of BLOCK
# bytes over CONNS connections from host A, over each of RPC_NETIDS in
# turns; every block is checked by the server, and a damaged one fails the
# run.  Rows rpc_user_NETID_cCONNS.
rpc_case() {
    local conns=$1 block=$2 run row out mbps
    local -A runs_of=()
    for ((run = 1; run <= RUNS; run++)); do
        for row in "${RPC_NETIDS[@]}"; do
            if [[ $row == rc ]]; then
                ((conns == 1)) || continue
                mbps=$(link_run "rpc_user_rc_c1" "$block" "$run" "$CSV") || { echo "$mbps"; return 1; }
                runs_of[$row]+="$mbps "
                continue
            fi
            log "== rpc $row conns $conns block $block run $run"
            sdp_module_for "$row" alt || return 1
            start_rpc_server
            sdpstats_snap
            out=$(LD_PRELOAD=$SDP_RPC_PRELOAD timeout -k 5 300 "$SDP_BUILD/rpc/rpc_bw_client" \
                  -h "$SDP_B4" -n "${row%_alt}" -p "$RPC_PORT" -b "$block" -c "$conns" -S \
                  -t $((RPC_MIB * 1048576)) 2>&1) ||
                { log "$out"; echo "$out"; sdp_module_for "$row" own; return 1; }
            log "$out"
            mbps=$(awk '$1 == "netid" { print $NF }' <<<"$out")
            sdpstats_moved "$STATS_CSV" "rpc_user_${row}_c$conns" "$block" "$run"
            sdp_module_for "$row" own || return 1
            echo "rpc_user_${row}_c$conns,$block,$run,$mbps,MB/s" >>"$CSV"
            runs_of[$row]+="$mbps "
        done
    done
    for row in "${RPC_NETIDS[@]}"; do
        [[ -z ${runs_of[$row]:-} ]] || echo "rpc $row x$conns, $block B blocks: ${runs_of[$row]}MB/s"
    done
}

# The kernel RPC modules: the server module on the bed's addresses (TCP
# and SDP listeners on KRPC_PORT, registered with rpcbind), a thread for
# each call in flight of the most a run has; the client module.
start_krpc() {
    local max=$KRPC_DEPTH c
    for c in "${RPC_CONNS[@]}"; do ((c > max)) && max=$c; done
    sdp_rpc_rpcbind
    sunrpc_load_patched >>"$LOG"
    insmod "$KRPC_DIR/sdp_krpc_bw_server.ko" port=$KRPC_PORT threads="$max"
    insmod "$KRPC_DIR/sdp_krpc_bw_client.ko"
}

# krpc_run ROW PORT NETID PROC BLOCK CONNS DEPTH RUN: one run of RPC_MIB
# MiB in PROC calls (stamped, or write: every byte filled and checked) of
# BLOCK bytes from the client module over CONNS connections, DEPTH calls
# in flight on each, to the server at PORT; its MB/s in row ROW.  It fails
# unless every call succeeded and the server module, if it is the server,
# counted every byte intact (the user server's count is in
# rpc-server.log).  Leaves the MB/s in krpc_mbps.
krpc_run() {
    local row=$1 port=$2 netid=$3 proc=$4 block=$5 conns=$6 depth=$7 run=$8
    local total=$((RPC_MIB * 1048576)) res b0 b1 bad0
    log "== $row ($proc) block $block run $run"
    b0=$(field bytes "$(cat "$KRPC_STATS")") bad0=$(field bad "$(cat "$KRPC_STATS")")
    sdpstats_snap
    # shellcheck disable=SC2016  # (bash -c gets them as $1 and $2)
    if ! timeout -k 5 300 bash -c 'echo "$1" >"$2"' _ \
         "$SDP_B4 $port $netid $proc $block $total $conns $depth" "$KRPC_DBG/run" 2>>"$LOG"; then
        echo "the run failed: $(tail -n1 "$LOG"), $(cat "$KRPC_DBG/result")"; return 1
    fi
    res=$(cat "$KRPC_DBG/result")
    log "$res"
    sdpstats_moved "$STATS_CSV" "$row" "$block" "$run"
    [[ $(field errors "$res") == 0 && $(field bytes "$res") == "$total" &&
       $(field bad_write "$res") == 0 && $(field server_netid "$res") == "$netid" ]] ||
        { echo "the run failed: $res"; return 1; }
    if [[ $port == "$KRPC_PORT" ]]; then
        b1=$(field bytes "$(cat "$KRPC_STATS")")
        (($(field bad "$(cat "$KRPC_STATS")") == bad0 && b1 - b0 == total)) ||
            { echo "the server module counted $((b1 - b0)) bytes intact, want $total"; return 1; }
    fi
    krpc_mbps=$(awk -v b="$total" -v ns="$(field ns "$res")" 'BEGIN { printf "%.2f", b * 1e3 / ns }')
    echo "$row,$block,$run,$krpc_mbps,MB/s" >>"$CSV"
}

# krpc_case KIND CONNS BLOCK: RUNS runs of stamped WRITE calls from the
# client module over CONNS connections, one call in flight on each, to
# the server module (KIND kernel) or the user server (KIND k2u), or
# KRPC_DEPTH calls in flight on each, to the server module (KIND kdepth),
# over each of RPC_NETIDS in turns; rows rpc_KIND_NETID_cCONNS.  Over one
# connection, each kernel run is followed by one whose every byte is
# filled and checked (rows rpc_kcheck_NETID_c1): in turns, so the two
# compare.
krpc_case() {
    local kind=$1 conns=$2 block=$3 run row mbps port=$KRPC_PORT depth=1
    local -A runs_of=() checked=()
    [[ $kind == kdepth ]] && depth=$KRPC_DEPTH
    [[ $kind == k2u ]] && port=$RPC_PORT
    for ((run = 1; run <= RUNS; run++)); do
        for row in "${RPC_NETIDS[@]}"; do
            if [[ $row == rc ]]; then
                ((conns == 1)) || continue
                mbps=$(link_run "rpc_${kind}_rc_c1" "$block" "$run" "$CSV") || { echo "$mbps"; return 1; }
                runs_of[$row]+="$mbps "
                continue
            fi
            sdp_module_for "$row" alt || return 1
            module_loaded sdp_krpc_bw_client || start_krpc >>"$LOG" 2>&1 ||
                { echo "cannot load the kernel RPC modules (see bench.log)"; sdp_module_for "$row" own; return 1; }
            [[ $kind != k2u ]] || start_rpc_server
            krpc_run "rpc_${kind}_${row}_c$conns" "$port" "${row%_alt}" stamped "$block" "$conns" "$depth" "$run" ||
                { sdp_module_for "$row" own; return 1; }
            runs_of[$row]+="$krpc_mbps "
            if [[ $kind == kernel && $conns == 1 ]]; then
                krpc_run "rpc_kcheck_${row}_c1" "$port" "${row%_alt}" write "$block" 1 1 "$run" ||
                    { sdp_module_for "$row" own; return 1; }
                checked[$row]+="$krpc_mbps "
            fi
            sdp_module_for "$row" own || return 1
        done
    done
    for row in "${RPC_NETIDS[@]}"; do
        [[ -n ${runs_of[$row]:-} ]] || continue
        echo "rpc $kind $row x$conns (calls in flight: $depth), $block B blocks: ${runs_of[$row]}MB/s"
        [[ -z ${checked[$row]:-} ]] || echo "  every byte checked: ${checked[$row]}MB/s"
    done
}

# meminfo FIELD...: those /proc/meminfo fields, in bytes, on one line
meminfo() {
    local f
    for f in "$@"; do awk -v k="$f:" '$1 == k { printf "%.0f ", $2 * 1024 }' /proc/meminfo; done
}
MEMFIELDS=(MemAvailable SUnreclaim VmallocUsed)

# idle_case PROTO: IDLE connections of PROTO (tcp or sdp) set up and left
# idle by sdp_many, RUNS times.  Both ends live in this one guest, so each
# figure counts both ends of a connection (the client on host A and the
# accepted socket on host B; the listener's share is 1/IDLE of one
# socket).  Per connection, the growth of: the kernel's unreclaimable slab
# (sockets, verbs objects), vmalloc (Soft-RoCE's queues), and the drop in
# MemAvailable (all of it, with sdp_many's own few pages; SDP's ring
# buffers are whole pages, counted only there).  SDP keeps no memory
# account of its own.
idle_case() {
    local proto=$1 run out pid in a0 s0 v0 a1 s1 v1 a2 s2 v2 slab vmalloc avail ret vals=()
    local -a opts=(-n "$IDLE" -s 0 -w -q)
    [[ $proto == tcp ]] && opts+=(-t)
    "$MANY" "${opts[@]}" -n 2 </dev/null >/dev/null    # warm the caches up
    for ((run = 1; run <= RUNS; run++)); do
        sleep 2    # the warm-up's (or the last run's) teardown
        read -r a0 s0 v0 <<<"$(meminfo "${MEMFIELDS[@]}")"
        coproc IDLE_HOLD { exec "$MANY" "${opts[@]}"; }
        pid=$IDLE_HOLD_PID in=${IDLE_HOLD[1]}
        read -r -t 120 -u "${IDLE_HOLD[0]}" out || out="nothing"
        if [[ $out != ready ]]; then
            kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
            echo "sdp_many $proto: $out"; return 1
        fi
        sleep 2    # let the set-up's work items finish
        read -r a1 s1 v1 <<<"$(meminfo "${MEMFIELDS[@]}")"
        if [[ $proto == sdp ]] && (($(wc -l </proc/net/sdp) - 1 < 2 * IDLE + 1)); then
            exec {in}>&-; wait "$pid"
            echo "fewer than $((2 * IDLE + 1)) SDP sockets while held"; return 1
        fi
        exec {in}>&-    # sdp_many closes them all
        ret=0; wait "$pid" || ret=$?
        ((ret == 0)) || { echo "sdp_many $proto exited with $ret"; return 1; }
        slab=$(((s1 - s0) / IDLE)) vmalloc=$(((v1 - v0) / IDLE)) avail=$(((a0 - a1) / IDLE))
        echo "${proto}_idle_slab,$IDLE,$run,$slab,B/conn" >>"$CSV"
        echo "${proto}_idle_vmalloc,$IDLE,$run,$vmalloc,B/conn" >>"$CSV"
        echo "${proto}_idle_avail,$IDLE,$run,$avail,B/conn" >>"$CSV"
        log "== $proto idle x $IDLE run $run: MemAvailable $a0 -> $a1, SUnreclaim $s0 -> $s1," \
            "VmallocUsed $v0 -> $v1"
        vals+=("$((slab / 1024))+$((vmalloc / 1024))/$((avail / 1024))")
    done
    sleep 2
    read -r a2 s2 v2 <<<"$(meminfo "${MEMFIELDS[@]}")"
    echo "$proto: $IDLE idle connections, KiB per connection (slab+vmalloc/MemAvailable): ${vals[*]}"
    echo "  after closing, from before the last run: MemAvailable $(((a2 - a0) / 1024)) KiB," \
         "SUnreclaim $(((s2 - s0) / 1024)) KiB, VmallocUsed $(((v2 - v0) / 1024)) KiB"
}

# setup_case TRANSPORT THREADS: SETUP connections set up, used (a byte
# each way) and closed by THREADS client threads in turn (tools/conn_rate),
# RUNS times; connections per second
setup_case() {
    local transport=$1 threads=$2 run out rate vals=()
    for ((run = 1; run <= RUNS; run++)); do
        out=$(timeout -k 5 300 "$SDP_BUILD/tools/conn_rate" -t "$transport" -c "$threads" \
              -n "$SETUP" -p $((SETUP_PORT + run))) || { echo "conn_rate: $out"; return 1; }
        log "== setup $transport x $threads run $run: $out"
        rate=$(awk '{ print $5 }' <<<"$out")
        echo "setup_$transport,$threads,$run,$rate,conn/s" >>"$CSV"
        vals+=("$rate")
        sleep 1    # the closed connections' teardown
    done
    echo "$transport, $threads client thread(s), $SETUP connections: ${vals[*]} conn/s"
}

mkdir -p "$OUT"
[[ -s $CSV ]] || echo "test,size,run,value,unit" >"$CSV"
# For the whole guest run, bench-nfs.sh and bench-apps.sh included.
if [[ -n ${SDP_BENCH_LINK_RPS:-} ]]; then
    for dev in "$SDP_A_IF" "$SDP_B_IF"; do
        echo "$SDP_BENCH_LINK_RPS" >"/sys/class/net/$dev/queues/rx-0/rps_cpus"
    done
fi
{
    echo "guest kernel: $(uname -r)"
    echo "cpus: $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs);" \
         "copy features: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
                           grep -xE 'rep_good|erms|fsrm' | xargs)"
    echo "sdp: $(modinfo -F version sdp) srcversion $(cat /sys/module/sdp/srcversion 2>/dev/null || echo '?')"
    [[ -z $ALT_MODULE ]] ||
        echo "sdp of the TEST_alt runs: srcversion $(modinfo -F srcversion "$ALT_MODULE" 2>&1)"
    echo "qperf: $(qperf --version 2>&1)"
    echo "links: $(rdma link show | xargs)"
    echo "mtu: $SDP_A_IF $(cat "/sys/class/net/$SDP_A_IF/mtu"), $SDP_B_IF $(cat "/sys/class/net/$SDP_B_IF/mtu")"
    echo "rps_cpus: $SDP_A_IF $(cat "/sys/class/net/$SDP_A_IF/queues/rx-0/rps_cpus")," \
         "$SDP_B_IF $(cat "/sys/class/net/$SDP_B_IF/queues/rx-0/rps_cpus")"
    echo "tests: ${TESTS[*]}; sizes: ${SIZES[*]}; runs: $RUNS; time: $TIME s; rstream: $RS_SIZE B x $RS_MIB MiB"
    echo "rpc: blocks ${RPC_BLOCKS[*]}; connections ${RPC_CONNS[*]}; $RPC_MIB MiB per run;" \
         "kernel calls in flight on one connection (kdepth): $KRPC_DEPTH;" \
         "libtirpc $(dpkg-query -W -f '${Version}' libtirpc3 2>/dev/null || echo '?') with libtirpc-sdp.so"
    p=/sys/module/sdp/parameters
    echo "idle connections: $IDLE; sdp rings per end: rx $(cat $p/rx_ring_size) x $(cat $p/rx_buf_size) B," \
         "tx $(cat $p/tx_ring_size) x $(cat $p/rx_buf_size) B"
    echo "set-up: $SETUP connections per run; client threads ${SETUP_THREADS[*]}"
} >"$OUT/env-guest.txt"
: >"$LOG"

start_qperf_server
cases=()
for size in "${SIZES[@]}"; do
    c="qperf $(bytes "$size") ${TESTS[*]}"
    ((RS_SIZE > 0 && $(bytes "$RS_SIZE") == $(bytes "$size"))) && c+=" rstream_bw"
    cases+=("$c")
done
((RS_SIZE > 0)) && [[ " ${cases[*]} " != *rstream_bw* ]] && cases+=("qperf $(bytes "$RS_SIZE") rstream_bw")
((IDLE > 0)) && cases+=("tcp_idle $IDLE" "sdp_idle $IDLE")
if ((SETUP > 0)); then
    for threads in "${SETUP_THREADS[@]}"; do
        cases+=("setup tcp $threads" "setup rsocket $threads" "setup sdp $threads")
    done
fi
if ((RPC_MIB > 0)); then
    for kind in user kernel k2u; do
        for conns in "${RPC_CONNS[@]}"; do
            for block in "${RPC_BLOCKS[@]}"; do cases+=("rpc $kind $conns $(bytes "$block")"); done
        done
    done
    if ((KRPC_DEPTH > 0)); then
        for block in "${RPC_BLOCKS[@]}"; do cases+=("rpc kdepth 1 $(bytes "$block")"); done
    fi
fi
# SDP last: if it takes the guest down, the rest is measured already
mapfile -t cases < <(printf '%s\n' "${cases[@]}" | grep -v '^sdp_'; printf '%s\n' "${cases[@]}" | grep '^sdp_' || true)

ktap_plan "${#cases[@]}"
for c in "${cases[@]}"; do
    # shellcheck disable=SC2086  # (TEST SIZE)
    case $c in
    *_idle\ *) ktap_run "${c/ /_}" idle_case "${c%%_*}" ;;
    setup\ *) ktap_run "${c// /_}" setup_case ${c#setup } ;;
    rpc\ user\ *) ktap_run "${c// /_}" rpc_case ${c#rpc user } ;;
    rpc\ *) ktap_run "${c// /_}" krpc_case ${c#rpc } ;;
    qperf\ *) read -ra w <<<"$c"; ktap_run "qperf_${w[1]}" bench_case "${w[@]:1}" ;;
    esac
    check_qperf_server
done
ktap_finish
