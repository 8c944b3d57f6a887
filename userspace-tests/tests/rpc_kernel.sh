#!/bin/bash
# rpc_kernel.sh: kernel RPC over SDP with the kernel ends of the RPC
# bandwidth program (kmod-rpc-bw/, built by `make userspace`, insmod-ed from
# build/) on the patched sunrpc.ko (lib/sunrpc_modules.sh): the server
# module on host B's addresses (TCP and SDP listeners on one port, IPv4 and
# IPv6, the TCP ones registered with rpcbind), the client module's runs
# from host A.
#   kernel to kernel: tcp, sdp and sdp6, 1 and 4 connections, WRITE,
#     WRITE_STAMPED and READ, one call and several in flight on a
#     connection; the server counts every WRITE block intact (of a stamped
#     one, its stamps) and exactly the bytes the client sent, the client
#     every READ block intact; NETID tells each end's
#     transport, SDP's byte counters grew by the data (or did not, for
#     tcp) and an SDP run set up one SDP connection for each of its
#     connections; port 0 finds the server through rpcbind
#   kernel client to user server (rpc_bw_server -m, multi-threaded, with
#     the interposer) over tcp and sdp: the paper's Fig. 9 case
#   user client (rpc_bw_client with the interposer) to kernel server over
#     tcp and sdp, and stamped blocks, one of them spoiled, which the
#     server finds
#   faults: a port with no listener fails at once with ECONNREFUSED; bad
#     run lines are refused; a run killed midway ends at once, and the
#     client module cannot go while it runs; the server module unloaded
#     under a run ends the run with an error
#   then everything unloads and no SDP socket is left.
# Env: SDP_KRPC_TOTAL  bytes a run moves (default 2 MiB)
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sunrpc_modules.sh"
. "$here/lib/sdp_resources.sh"
. "$here/lib/sdp_rpc.sh"
. "$here/lib/sdp_ktest.sh"
. "$here/bed/hosts.env"
KO_DIR=${SDP_KRPC_MODULES:-$SDP_BUILD/kmod-rpc-bw/$(uname -r)}
USERVER=$SDP_BUILD/rpc/rpc_bw_server UCLIENT=$SDP_BUILD/rpc/rpc_bw_client
DBG=/sys/kernel/debug/sdp_krpc_bw_client
SDBG=/sys/kernel/debug/sdp_krpc_bw_server
TOTAL=${SDP_KRPC_TOTAL:-2097152}
KPORT=20050        # the kernel server's port
UPORT=20051        # the user server's
NOPORT=20059       # nobody's
T=120              # seconds a run may take
PROG=$((0x20005344))
MODULES0=$(modules_now)
SOCKS0=$(sdp_socks)

work=$(mktemp -d)
# shellcheck disable=SC2329  # (the EXIT trap runs it)
cleanup() {
    [[ ! -f $work/userver.pid ]] || kill "$(cat "$work/userver.pid")" 2>/dev/null || true
    sdp_rpc_cleanup
    rm -rf "$work"
}
trap cleanup EXIT
sdp_rpc_netconfig "$work"
sdp_rpc_rpcbind

# server_stat NAME: the server module's counter NAME
server_stat() { field "$1" "$(<"$SDBG/stats")"; }

# krun LINE: a run of the client module; its result line in $RES.  Fails
# with the write's status when the write fails.
krun() {
    local rc=0
    # shellcheck disable=SC2016  # (bash -c gets them as $1 and $2)
    timeout -k 5 "$T" bash -c 'echo "$1" >"$2"' _ "$1" "$DBG/run" 2>"$work/krun.err" || rc=$?
    RES=$(cat "$DBG/result")
    echo "run '$1': status $rc $(cat "$work/krun.err")"
    echo "  $RES"
    return "$rc"
}

# run_ok NETID PROC BYTES: $RES is a clean run of PROC moving BYTES over NETID
run_ok() {
    [[ $(field errors "$RES") == 0 && $(field first_error "$RES") == 0 ]] ||
        { echo "calls failed"; return 1; }
    [[ $(field bytes "$RES") == "$3" ]] || { echo "moved $(field bytes "$RES") bytes, want $3"; return 1; }
    [[ $(field netid "$RES") == "$1" && $(field server_netid "$RES") == "$1" ]] ||
        { echo "want netid $1 at both ends"; return 1; }
    [[ $(field proc "$RES") == "$2" && $(field bad_read "$RES") == 0 && $(field bad_write "$RES") == 0 ]] ||
        { echo "damaged blocks"; return 1; }
}

modules_load() {
    local list
    [[ -f $KO_DIR/sdp_krpc_bw_server.ko && -f $KO_DIR/sdp_krpc_bw_client.ko ]] ||
        { echo "no $KO_DIR/sdp_krpc_bw_{server,client}.ko: run make krpc-bw-test"; return 1; }
    sunrpc_load_patched
    insmod "$KO_DIR/sdp_krpc_bw_server.ko" port=$KPORT threads=4
    insmod "$KO_DIR/sdp_krpc_bw_client.ko"
    cat "$SDBG/stats" "$DBG/result"
    # the TCP listeners registered, the SDP ones not (found under tcp)
    list=$(rpcinfo -p localhost; rpcinfo "$SDP_B4")
    echo "$list" | grep -E "^ +$PROG +1 "
    grep -qE "^ +$PROG +1 +tcp +$KPORT( |$)" <<<"$list" || { echo "no tcp registration on port $KPORT"; return 1; }
    grep -qE "^ +$PROG +1 +tcp6 +.*\.$((KPORT / 256))\.$((KPORT % 256)) " <<<"$list" ||
        { echo "no tcp6 registration on port $KPORT"; return 1; }
    ! grep -qE "^ +$PROG +1 +sdp" <<<"$list" || { echo "an sdp netid registered"; return 1; }
}

# k2k NETID ADDR PORT PROC CONNS [BLOCK [DEPTH]]: a kernel client run to
# the kernel server, DEPTH calls in flight on each connection (default 1);
# the server's counters and SDP's agree with it, and an SDP run set up
# exactly CONNS connections.
k2k() {
    local netid=$1 addr=$2 port=$3 proc=$4 conns=$5 block=${6:-65536} depth=${7:-1}
    local blocks0 bad0 bytes0 rbytes0 tx0 rx0 opens0 tx rx opens
    blocks0=$(server_stat blocks) bad0=$(server_stat bad) bytes0=$(server_stat bytes)
    rbytes0=$(server_stat read_bytes) tx0=$(sdp_stat TxBytes) rx0=$(sdp_stat RxBytes)
    opens0=$(sdp_stat ActiveOpens)
    krun "$addr $port $netid $proc $block $TOTAL $conns $depth"
    tx=$(($(sdp_stat TxBytes) - tx0)) rx=$(($(sdp_stat RxBytes) - rx0))
    opens=$(($(sdp_stat ActiveOpens) - opens0))
    echo "  server: $(cat "$SDBG/stats"); SDP TxBytes +$tx RxBytes +$rx ActiveOpens +$opens"
    run_ok "$netid" "$proc" "$TOTAL"
    [[ $(field conns "$RES") == "$conns" && $(field depth "$RES") == "$depth" ]] ||
        { echo "not $conns connections of $depth calls in flight"; return 1; }
    if [[ $proc != read ]]; then
        (($(server_stat bad) == bad0)) || { echo "the server found damaged blocks"; return 1; }
        (($(server_stat bytes) - bytes0 == TOTAL)) ||
            { echo "the server got $(($(server_stat bytes) - bytes0)) bytes intact, want $TOTAL"; return 1; }
        (($(server_stat blocks) - blocks0 == $(field calls "$RES"))) ||
            { echo "the server counted other blocks than the client's calls"; return 1; }
    else
        (($(server_stat read_bytes) - rbytes0 == TOTAL)) || { echo "the server sent other than $TOTAL bytes"; return 1; }
    fi
    # both ends are in this guest: each byte crosses SDP once each way
    if [[ $netid == sdp* ]]; then
        ((tx >= TOTAL && rx >= TOTAL)) || { echo "less than $TOTAL bytes went over SDP"; return 1; }
        ((opens == conns)) || { echo "$opens SDP connections set up, want $conns"; return 1; }
    else
        ((tx < TOTAL / 2)) || { echo "a tcp run went over SDP"; return 1; }
    fi
}

k2k_tcp() {
    k2k tcp "$SDP_B4" 0 write 1
    k2k tcp "$SDP_B4" "$KPORT" write 4 1048576
    k2k tcp "$SDP_B4" 0 read 1 4096
    k2k tcp "$SDP_B4" "$KPORT" read 4
}

k2k_sdp_write() {
    k2k sdp "$SDP_B4" 0 write 1
    k2k sdp "$SDP_B4" 0 write 4 262144
}

k2k_sdp_read() {
    k2k sdp "$SDP_B4" "$KPORT" read 1
    k2k sdp "$SDP_B4" 0 read 4 1048576
}

# Several calls in flight on one connection (clones of its RPC client, as
# an NFS mount's slots): blocks intact, no more connections than CONNS.
k2k_depth() {
    k2k sdp "$SDP_B4" "$KPORT" write 1 1048576 4
    k2k sdp "$SDP_B4" 0 read 1 65536 3
    k2k sdp6 "$SDP_B6" "$KPORT" write 2 131072 2
    k2k tcp "$SDP_B4" "$KPORT" write 1 262144 4
}

# Stamped WRITEs, as the bench sends them: blocks of 256 stamps, of two
# (the last block cut short) and of one.
k2k_stamped() {
    k2k sdp "$SDP_B4" "$KPORT" stamped 1 1048576 2
    k2k sdp "$SDP_B4" 0 stamped 2 5000
    k2k tcp "$SDP_B4" "$KPORT" stamped 1 4100
    k2k sdp6 "$SDP_B6" "$KPORT" stamped 1 65536
}

k2k_sdp6() {
    k2k sdp6 "$SDP_B6" 0 write 1 4096
    k2k sdp6 "$SDP_B6" "$KPORT" write 4
    k2k sdp6 "$SDP_B6" 0 read 1 1048576
    k2k sdp6 "$SDP_B6" "$KPORT" read 4 131072
}

# start_user_server ARGS...: rpc_bw_server with the interposer, in the
# background (its output in a file: ktap_run would wait for it).
start_user_server() {
    LD_PRELOAD=$SDP_RPC_PRELOAD "$USERVER" "$@" >"$work/userver.out" 2>&1 &
    echo $! >"$work/userver.pid"
    for _ in $(seq 100); do
        grep -q '^ready' "$work/userver.out" && return 0
        kill -0 "$(cat "$work/userver.pid")" 2>/dev/null || break
        sleep 0.1
    done
    cat "$work/userver.out"; echo "the user server did not start"; return 1
}

# stop_user_server: SIGTERM; it prints its counters ("blocks N bad N bytes N")
stop_user_server() {
    local pid
    pid=$(cat "$work/userver.pid")
    rm -f "$work/userver.pid"
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    cat "$work/userver.out"
}

# The kernel client to the multi-threaded user server (no rpcbind: the
# kernel server owns the program's registration).
k2u() {
    local out want=$((4 * TOTAL))
    start_user_server -m -R -p "$UPORT" tcp sdp
    krun "$SDP_B4 $UPORT tcp write 65536 $TOTAL 2"
    run_ok tcp write "$TOTAL"
    krun "$SDP_B4 $UPORT sdp write 262144 $TOTAL 4"
    run_ok sdp write "$TOTAL"
    krun "$SDP_B4 $UPORT sdp write 1048576 $TOTAL 1"
    run_ok sdp write "$TOTAL"
    krun "$SDP_B4 $UPORT sdp stamped 1048576 $TOTAL 1"
    run_ok sdp stamped "$TOTAL"
    krun "$SDP_B4 $UPORT sdp read 65536 $TOTAL 2"
    run_ok sdp read "$TOTAL"
    krun "$SDP_B4 $UPORT tcp read 131072 $TOTAL 1"
    run_ok tcp read "$TOTAL"
    out=$(stop_user_server)
    echo "user server: $out"
    grep -qE "^blocks [1-9][0-9]* bad 0 bytes $want$" <<<"$out" ||
        { echo "want the user server to count $want bytes intact, none damaged"; return 1; }
}

# uclient ARGS...: rpc_bw_client with the interposer, to the kernel server
uclient() {
    LD_PRELOAD=$SDP_RPC_PRELOAD timeout -k 5 "$T" "$UCLIENT" -p "$KPORT" "$@" 2>&1
}

# u2k NETID ADDR CONNS [ARGS...]: rpc_bw_client (WRITE, then READ of each
# block; ARGS: more of its options) to the kernel server.
u2k() {
    local out bytes0 bad0
    bytes0=$(server_stat bytes) bad0=$(server_stat bad)
    out=$(uclient -h "$2" -n "$1" -b 65536 -c "$3" -t "$TOTAL" -r -s "${@:4}") ||
        { echo "$out"; return 1; }
    echo "$out"
    echo "server: $(cat "$SDBG/stats")"
    grep -q "^netid $1 server_netid $1 " <<<"$out" || { echo "want netid $1 at both ends"; return 1; }
    grep -q '^server_blocks [1-9][0-9]* server_bad 0 ' <<<"$out" ||
        { echo "the server counted damaged or no blocks"; return 1; }
    (($(server_stat bytes) - bytes0 == TOTAL && $(server_stat bad) == bad0)) ||
        { echo "the server did not get $TOTAL bytes intact"; return 1; }
}

u2k_all() {
    u2k tcp "$SDP_B4" 1
    u2k sdp "$SDP_B4" 2
    u2k sdp6 "$SDP_B6" 1
    u2k sdp "$SDP_B4" 1 -S
}

# A stamped block with a spoiled stamp: the kernel server counts it
# damaged and says so, and the client stops there.
u2k_spoiled() {
    local out rc=0 bytes0 bad0 blocks0
    bytes0=$(server_stat bytes) bad0=$(server_stat bad) blocks0=$(server_stat blocks)
    out=$(uclient -h "$SDP_B4" -n sdp -b 1048576 -t "$TOTAL" -S -D) || rc=$?
    echo "$out"
    echo "server: $(cat "$SDBG/stats")"
    ((rc == 1)) && grep -q '^damaged_block stream 0 seq 0$' <<<"$out" ||
        { echo "want the spoiled stamp found in the first block, exit 1 (got $rc)"; return 1; }
    (($(server_stat bad) == bad0 + 1 && $(server_stat bytes) == bytes0 &&
      $(server_stat blocks) == blocks0)) ||
        { echo "want one block counted damaged, none intact"; return 1; }
}

# A port nobody listens on: the run fails at once (the client's NULL ping
# is a soft connection) with ECONNREFUSED, over TCP and SDP alike.
no_listener() {
    local netid rc s0
    for netid in tcp sdp; do
        s0=$SECONDS rc=0
        krun "$SDP_B4 $NOPORT $netid write 4096 4096 1" || rc=$?
        echo "  after $((SECONDS - s0)) s"
        ((rc != 0)) || { echo "the run succeeded"; return 1; }
        [[ $(field first_error "$RES") == -111 ]] || { echo "want first_error=-111 (ECONNREFUSED)"; return 1; }
        grep -q "Connection refused" "$work/krun.err" || { echo "the write did not fail with ECONNREFUSED"; return 1; }
    done
}

bad_requests_refused() {
    local req
    for req in "$SDP_B4 0 tcp write 4096 4096" "nohost 0 tcp write 4096 4096 1" \
               "$SDP_B4 0 udp write 4096 4096 1" "$SDP_B4 0 tcp6 write 4096 4096 1" \
               "$SDP_B6 0 sdp write 4096 4096 1" "$SDP_B4 0 tcp append 4096 4096 1" \
               "$SDP_B4 0 tcp write 0 4096 1" "$SDP_B4 0 tcp write 2097152 4194304 1" \
               "$SDP_B4 0 tcp write 4096 4096 0" "$SDP_B4 0 tcp write 4096 4096 65" \
               "$SDP_B4 0 tcp write 4096 4096 1 0" "$SDP_B4 0 tcp write 4096 4096 1 17" \
               "$SDP_B4 0 tcp write 4096 4096 5 13" "$SDP_B4 0 tcp write 4096 7 2 4"; do
        if echo "$req" >"$DBG/run" 2>"$work/err"; then
            echo "'$req' was accepted"; return 1
        fi
        grep -q "Invalid argument" "$work/err" || { cat "$work/err"; echo "'$req': not EINVAL"; return 1; }
    done
}

# bg_run LINE: a run in the background, its writer's pid in $work/bg.pid;
# waits until the server has counted calls of it.
bg_run() {
    local calls0
    calls0=$(server_stat calls)
    # shellcheck disable=SC2016  # (bash -c gets them as $1 and $2)
    bash -c 'echo "$1" >"$2"' _ "$1" "$DBG/run" >"$work/bg.out" 2>&1 &
    echo $! >"$work/bg.pid"
    for _ in $(seq 300); do
        (($(server_stat calls) > calls0 + 4)) && return 0
        sleep 0.1
    done
    echo "the run did not start"; return 1
}

# bg_wait: waits (bounded) for the background run; prints its result
bg_wait() {
    local pid
    pid=$(cat "$work/bg.pid")
    for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    ! kill -0 "$pid" 2>/dev/null || { echo "the run did not end within 60 s"; return 1; }
    RES=$(cat "$DBG/result")
    echo "  $RES $(cat "$work/bg.out")"
}

# A long run: a second one is refused (EBUSY), the client module will not
# go (in use); its writer killed, the run ends at once, interrupted
# (-EINTR), no block damaged; a new run then works.
run_killed() {
    bg_run "$SDP_B4 $KPORT sdp write 1048576 1073741824 2"
    ! echo "$SDP_B4 0 tcp write 4096 4096 1" 2>"$work/err" >"$DBG/run" ||
        { echo "a second run started"; return 1; }
    grep -q "busy" "$work/err" || { cat "$work/err"; echo "want EBUSY"; return 1; }
    ! rmmod sdp_krpc_bw_client 2>"$work/err" || { echo "the client module went during a run"; return 1; }
    cat "$work/err"
    kill -9 "$(cat "$work/bg.pid")"
    bg_wait
    [[ $(field first_error "$RES") == -4 && $(field bad_write "$RES") == 0 ]] ||
        { echo "want first_error=-4 (EINTR, the calls killed), no damaged block"; return 1; }
    (($(field bytes "$RES") < 1073741824)) || { echo "the run was not cut short"; return 1; }
    krun "$SDP_B4 0 sdp write 65536 $TOTAL 1"
    run_ok sdp write "$TOTAL"
}

# The server module unloaded under a run: it goes, and the run ends with
# an error within the client's (shortened) time limits, no block damaged;
# no registration is left in rpcbind.
server_unloaded_mid_run() {
    local p=/sys/module/sdp_krpc_bw_client/parameters/timeout_s t0
    t0=$(cat $p)
    echo 5 >$p
    bg_run "$SDP_B4 $KPORT sdp write 262144 1073741824 2"
    timeout 60 rmmod sdp_krpc_bw_server || { echo "$t0" >$p; echo "rmmod failed"; return 1; }
    bg_wait || { echo "$t0" >$p; return 1; }
    echo "$t0" >$p
    (($(field first_error "$RES") < 0 && $(field errors "$RES") > 0)) ||
        { echo "want the run to end with an error"; return 1; }
    [[ $(field bad_write "$RES") == 0 ]] || { echo "damaged blocks"; return 1; }
    ! rpcinfo "$SDP_B4" | grep -E "^ +$PROG +1 " || { echo "still registered with rpcbind"; return 1; }
}

# Everything this test loaded unloads; no SDP socket is left behind.
modules_unload() {
    rmmod sdp_krpc_bw_client
    ! module_loaded sdp_krpc_bw_server || rmmod sdp_krpc_bw_server
    [[ ! -e $DBG && ! -e $SDBG ]] || { echo "debugfs entries left"; return 1; }
    modules_unload_since "$MODULES0"
    sdp_wait_socks "$SOCKS0" 20
}

ktap_plan 15
ktap_run modules_load modules_load
ktap_run kernel_to_kernel_tcp k2k_tcp
ktap_run kernel_to_kernel_sdp_write k2k_sdp_write
ktap_run kernel_to_kernel_sdp_read k2k_sdp_read
ktap_run kernel_to_kernel_sdp6 k2k_sdp6
ktap_run kernel_to_kernel_calls_in_flight k2k_depth
ktap_run kernel_to_kernel_stamped k2k_stamped
ktap_run kernel_client_user_server k2u
ktap_run user_client_kernel_server u2k_all
ktap_run user_client_spoiled_stamp u2k_spoiled
ktap_run no_listener no_listener
ktap_run bad_requests_refused bad_requests_refused
ktap_run run_killed run_killed
ktap_run server_unloaded_mid_run server_unloaded_mid_run
ktap_run modules_unload modules_unload
ktap_finish
