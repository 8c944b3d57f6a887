#!/bin/bash
# rpc_user.sh: user-space ONC RPC over SDP with Debian's own libtirpc and
# the interposer (libtirpc-sdp.so, LD_PRELOAD): the RPC bandwidth programs
# between host B (server) and host A (client) over netids tcp, sdp and
# sdp6, single- and multi-threaded servers, the content of every block
# checked by its receiver, and stamped blocks' stamps; rpcbind (stock,
# over TCP) knowing the sdp registrations; nettypes "sdp" and "tcp";
# accepted connections keeping the listener's netid; SDP traffic proven
# by the module's counters; and the faults: sdp.ko absent, and the server
# killed mid-call.
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_rpc.sh"
SERVER=$SDP_BUILD/rpc/rpc_bw_server CLIENT=$SDP_BUILD/rpc/rpc_bw_client
export LD_PRELOAD=$SDP_RPC_PRELOAD
TOTAL=${SDP_RPC_TOTAL:-2097152}     # bytes per client run
PORT=${SDP_RPC_PORT:-20049}         # the server's port, for tcp and sdp alike
T=120                               # a client run's time limit

work=$(mktemp -d)
server=
# shellcheck disable=SC2329  # (the EXIT trap runs it)
cleanup() {
    stop_server
    sdp_rpc_cleanup
    rm -rf "$work"
}
trap cleanup EXIT
sdp_rpc_netconfig "$work"
sdp_rpc_rpcbind

# start_server ARGS...: the server in the background; waits for "ready".
start_server() {
    "$SERVER" "$@" >"$work/server.out" 2>&1 &
    server=$!
    for _ in $(seq 100); do
        grep -q '^ready' "$work/server.out" && return 0
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    cat "$work/server.out"; echo "server did not start"; return 1
}

# stop_server: SIGTERM (it withdraws from rpcbind), then its counters.
stop_server() {
    [[ -n $server ]] || return 0
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=
    cat "$work/server.out"
}

# sdp_bytes: payload bytes SDP has sent, from the module's counters
sdp_bytes() { awk '$1 == "TxBytes" { print $2 }' /proc/net/sdpstats; }

# client ARGS...: a client run from host A; prints its output.
client() { timeout -k 5 "$T" "$CLIENT" "$@" 2>&1; }

# expect_run NETID SERVER_NETID OUT: the client's run used NETID and the
# server's end of it SERVER_NETID, every block arrived intact, and the
# server counted none damaged.
expect_run() {
    grep -q "^netid $1 server_netid $2 " <<<"$3" ||
        { echo "want netid $1 served as $2"; return 1; }
    grep -q '^server_blocks [1-9][0-9]* server_bad 0 ' <<<"$3" ||
        { echo "the server counted damaged or no blocks"; return 1; }
}

# over_sdp CMD...: CMD's traffic went over SDP (TxBytes grew by at least
# TOTAL: each block crossed as a WRITE).
over_sdp() {
    local b0 b1
    b0=$(sdp_bytes)
    "$@"
    b1=$(sdp_bytes)
    echo "SDP TxBytes +$((b1 - b0))"
    ((b1 - b0 >= TOTAL)) || { echo "less than $TOTAL bytes went over SDP"; return 1; }
}

run_tcp() {
    local out
    out=$(client -h "$SDP_B4" -n tcp -b 65536 -t "$TOTAL" -r -s) || { echo "$out"; return 1; }
    echo "$out"
    expect_run tcp tcp "$out"
}

run_sdp() {
    local out
    out=$(client -h "$SDP_B4" -n sdp -b 65536 -c 2 -t "$TOTAL" -r -s) || { echo "$out"; return 1; }
    echo "$out"
    expect_run sdp sdp "$out"
}

run_sdp6() {
    local out
    out=$(client -h "$SDP_B6" -n sdp6 -b 16384 -t "$TOTAL" -s) || { echo "$out"; return 1; }
    echo "$out"
    expect_run sdp6 sdp6 "$out"
}

# The server registered netid sdp with the stock rpcbind, beside tcp.
rpcinfo_lists_sdp() {
    local list
    list=$(rpcinfo "$SDP_B4")
    grep -E "^ +$((0x20005344)) +1 +sdp +" <<<"$list" &&
        grep -E "^ +$((0x20005344)) +1 +tcp +" <<<"$list" ||
        { echo "$list"; echo "no sdp and tcp entries for the program"; return 1; }
}

single_threaded() {
    start_server -p "$PORT" tcp sdp sdp6
    run_tcp
    over_sdp run_sdp
    over_sdp run_sdp6
    rpcinfo_lists_sdp
    stop_server
}

multi_threaded() {
    local out
    start_server -m -p "$PORT" tcp sdp
    out=$(client -h "$SDP_B4" -n sdp -b 262144 -c 4 -t "$TOTAL" -s) || { echo "$out"; return 1; }
    echo "$out"
    expect_run sdp sdp "$out"
    stop_server
}

# svc_create() and clnt_create() by nettype "sdp" find each other through
# rpcbind; nettype "tcp" leaves the sdp netids alone.
nettypes() {
    local out
    start_server -N sdp
    out=$(client -h "$SDP_B4" -N sdp -t 65536 -s) || { echo "$out"; return 1; }
    echo "$out"
    expect_run sdp sdp "$out"
    stop_server
    start_server -N tcp
    ! rpcinfo "$SDP_B4" | grep -E "^ +$((0x20005344)) +1 +sdp" ||
        { echo "svc_create(tcp) registered an sdp netid"; return 1; }
    out=$(client -h "$SDP_B4" -N tcp -t 65536 -s) || { echo "$out"; return 1; }
    echo "$out"
    expect_run tcp tcp "$out"
    stop_server
}

# Without sdp.ko (and its autoload), netid sdp gives a clear RPC error
# (RPC_SYSTEMERROR 12: address family not supported); tcp still works.
sdp_module_absent() {
    local modprobe out rc=0
    start_server -p "$PORT" tcp
    modprobe=$(cat /proc/sys/kernel/modprobe)
    rmmod sdp
    echo /bin/true >/proc/sys/kernel/modprobe
    out=$(client -h "$SDP_B4" -n sdp -t 65536) || rc=$?
    echo "$modprobe" >/proc/sys/kernel/modprobe
    echo "$out"
    if [[ -n ${SDP_MODULE_FILE:-} ]]; then insmod "$SDP_MODULE_FILE"; else modprobe sdp; fi
    ((rc == 1)) && grep -q "^rpc_error 12 .*Address family not supported" <<<"$out" ||
        { echo "want rpc_error 12, address family not supported"; return 1; }
    out=$(client -h "$SDP_B4" -n tcp -t 65536) || { echo "$out"; return 1; }
    echo "$out"
    stop_server
}

# Stamped WRITEs, as the bench sends them: the server checks the stamps,
# with blocks of one stamp, of two with the last block cut short, and of
# 256; it counts them all intact, and finds a spoiled one (-D).
stamped_writes() {
    local out rc=0 want=$((3 * TOTAL))
    start_server -m -p "$PORT" tcp sdp
    out=$(client -h "$SDP_B4" -n sdp -b 1048576 -t "$TOTAL" -S -s) || { echo "$out"; return 1; }
    echo "$out"
    expect_run sdp sdp "$out"
    out=$(client -h "$SDP_B4" -n sdp -b 5000 -c 2 -t "$TOTAL" -S -s) || { echo "$out"; return 1; }
    echo "$out"
    expect_run sdp sdp "$out"
    out=$(client -h "$SDP_B4" -n tcp -b 4100 -t "$TOTAL" -S -s) || { echo "$out"; return 1; }
    echo "$out"
    expect_run tcp tcp "$out"
    out=$(client -h "$SDP_B4" -n sdp -b 65536 -t "$TOTAL" -S -D) || rc=$?
    echo "$out"
    ((rc == 1)) && grep -q '^damaged_block stream 0 seq 0$' <<<"$out" ||
        { echo "want the spoiled stamp found in the first block, exit 1 (got $rc)"; return 1; }
    out=$(stop_server)
    echo "$out"
    grep -qE "^blocks [0-9]+ bad 1 bytes $want$" <<<"$out" ||
        { echo "want the server to count $want bytes intact and one block damaged"; return 1; }
}

# The server killed mid-call: the client gets RPC_CANTSEND (3),
# RPC_CANTRECV (4) or RPC_TIMEDOUT (5), within its time limit.
server_killed() {
    local out rc=0 pid
    start_server -p "$PORT" sdp
    client -h "$SDP_B4" -n sdp -b 1048576 -t 1073741824 -T 20 >"$work/client.out" &
    pid=$!
    sleep 3
    kill -9 "$server"
    wait "$server" 2>/dev/null || true
    server=
    wait "$pid" || rc=$?
    out=$(cat "$work/client.out")
    echo "$out"
    ((rc == 1)) && grep -qE '^rpc_error (3|4|5) ' <<<"$out" ||
        { echo "want rpc_error 3, 4 or 5, exit 1 (got $rc)"; return 1; }
}

ktap_plan 6
ktap_run single_threaded single_threaded
ktap_run multi_threaded multi_threaded
ktap_run stamped_writes stamped_writes
ktap_run nettypes nettypes
ktap_run sdp_module_absent sdp_module_absent
ktap_run server_killed server_killed
ktap_finish
