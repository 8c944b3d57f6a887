#!/bin/bash
# read_sock.sh: SDP's receive path as in-kernel consumers use it, through
# the test module kmod-read-sock/ (built by `make userspace`, insmod-ed
# from build/): sdp_read_sock() as proto_ops.read_sock, from a waiting
# reader and from sk_data_ready itself, and sock_recvmsg(MSG_DONTWAIT)
# with kvec and bvec iterators as SunRPC does.  Each reads 1 MiB of the
# bed's test pattern that tools/sdp_pattern_send sends from host B, and
# its checksum must match the sender's; a peer that closes early gives
# EOF after what it sent.  The same runs over TCP first check the test
# itself.  An actor that keeps a reference on a page it was given finds
# it unchanged while read pages are reused for new receive buffers.  The
# module unloads and no SDP socket is left behind.
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/lib/sdp_ktest.sh"
. "$here/bed/hosts.env"
KO=${SDP_READ_SOCK_KO:-$SDP_BUILD/kmod-read-sock/$(uname -r)/sdp_read_sock_test.ko}
SEND=$SDP_BUILD/tools/sdp_pattern_send
DBG=/sys/kernel/debug/sdp_read_sock_test
BYTES=${SDP_READ_SOCK_BYTES:-1048576}
T=${SDP_READ_SOCK_TIMEOUT:-120}    # seconds one run may take
MODES=(read_sock read_sock_cb recvmsg_kvec recvmsg_bvec)

loaded() { grep -q "^sdp_read_sock_test " /proc/modules; }

module_loads() {
    [[ -f $KO ]] || { echo "no $KO: run make read-sock-test"; return 1; }
    ! loaded || rmmod sdp_read_sock_test
    insmod "$KO"
    [[ -w $DBG/run && -r $DBG/result ]] || { echo "no $DBG/{run,result}"; return 1; }
    cat "$DBG/result"
}

# one_run MODE PORT SEND_BYTES WANT FAMILY [sender options]: the sender on
# host B (at $ADDR), the module's reader on host A; checks what the reader
# got against what the sender sent.  FAMILY: sdp or tcp.
ADDR=$SDP_B4
one_run() {
    local mode=$1 port=$2 n=$3 want=$4 fam=$5 out res sres expect spid rc=0 src=0
    shift 5
    local -a opts=("$@")
    [[ -w $DBG/run ]] || { echo "the test module is not loaded"; return 1; }
    [[ $fam == tcp ]] && opts+=(-t)
    [[ $ADDR != *:* ]] || opts+=(-6)
    out=$(mktemp)
    timeout -k 5 "$T" "$SEND" -p "$port" -n "$n" "${opts[@]}" >"$out" 2>&1 &
    spid=$!
    for _ in $(seq 100); do    # until it listens
        grep -q '^listening' "$out" && break
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.1
    done
    grep -q '^listening' "$out" ||
        { kill "$spid" 2>/dev/null; cat "$out"; echo "the sender did not listen"; return 1; }

    echo "run: $ADDR $port $want $mode $fam"
    # shellcheck disable=SC2016  # (bash -c gets them as $1 and $2)
    timeout -k 5 "$T" bash -c 'echo "$1" >"$2"' _ "$ADDR $port $want $mode $fam" "$DBG/run" || rc=$?
    # the reader has closed: the sender ends at once, unless nobody connected
    for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
    kill "$spid" 2>/dev/null || true
    wait "$spid" || src=$?
    if ((rc)); then
        cat "$out"; rm -f "$out"; echo "writing to run: exit status $rc"; return 1
    fi
    res=$(cat "$DBG/result")
    sres=$(grep '^bytes=' "$out" || true)
    echo "reader: $res"
    if ((src)); then
        cat "$out"; rm -f "$out"; echo "sender: exit status $src"; return 1
    fi
    rm -f "$out"
    echo "sender: $sres"
    [[ $res != error=* ]] || { echo "the reader failed"; return 1; }
    expect=$((n < want ? n : want))
    [[ $(field bytes "$res") == "$expect" ]] || { echo "read $(field bytes "$res") bytes, want $expect"; return 1; }
    [[ $(field pattern "$res") == ok ]] || { echo "the data is not the pattern sent"; return 1; }
    [[ $(field checksum "$res") == "$(field checksum "$sres")" ]] || { echo "checksums differ"; return 1; }
    if ((n < want)); then
        [[ $(field eof "$res") == 1 ]] || { echo "no EOF after the peer closed"; return 1; }
    fi
    if [[ $fam == sdp && $mode == read_sock* ]]; then    # the contract: sdp.ko exports it
        [[ $(field read_sock "$res") == sdp_read_sock && $(field exported "$res") == 1 ]] ||
            { echo "proto_ops.read_sock is not the exported sdp_read_sock"; return 1; }
    fi
    case $mode in
    read_sock)    # the actor took part of what it was offered, desc->count ran out
        (($(field partial "$res") > 0)) || { echo "the actor never left data behind"; return 1; }
        (($(field read_calls "$res") > 1)) || { echo "one read_sock call read it all"; return 1; }
        ;;
    read_sock_cb)
        (($(field data_ready "$res") > 0)) || { echo "sk_data_ready never called"; return 1; }
        ;;
    esac
}

tcp_all_modes() {
    local port=19300 mode
    for mode in "${MODES[@]}"; do
        one_run "$mode" $((port++)) "$BYTES" "$BYTES" tcp
        one_run "$mode" $((port++)) 100000 "$BYTES" tcp -C
    done
}

# sdp_case MODE PORT [SEND_BYTES [sender options]]
sdp_case() {
    one_run "$1" "$2" "${3:-$BYTES}" "$BYTES" sdp "${@:4}"
}

bad_requests_refused() {
    local req
    for req in "$SDP_B4 19399" "$SDP_B4 0 10 read_sock" "nohost 19399 10 read_sock" \
               "$SDP_B4 19399 10 read_nothing" "$SDP_B4 19399 10 read_sock udp"; do
        if echo "$req" >"$DBG/run" 2>/dev/null; then
            echo "'$req' was accepted"; return 1
        fi
    done
}

# SDP sockets on the ports this test used, from /proc/net/sdp
sdp_sockets_left() {
    local p pat=
    for p in $(seq 19300 19399); do pat+="${pat:+|}:$(printf '%04X' "$p") "; done
    grep -cE "$pat" /proc/net/sdp || true
}

SOCKS0=$(sdp_socks)

module_unloads_clean() { sdp_test_module_unloads sdp_read_sock_test "$DBG" "$SOCKS0"; }

ipv6_read_sock() { ADDR=$SDP_B6 sdp_case read_sock 19326; }

# The actor keeps a reference on the first page it is given, as
# skb_splice_bits() does: SDP reuses pages the reader is done with for
# new receive buffers (RxPageReuses), but never one that someone still
# holds, so what the actor read there is unchanged after the rest came.
read_sock_page_kept() {
    local param=/sys/module/sdp_read_sock_test/parameters/hold_page reuses0 res rc=0
    reuses0=$(sdp_stat RxPageReuses)
    echo 1 >"$param"
    sdp_case read_sock 19327 || rc=$?
    echo 0 >"$param"
    ((rc == 0)) || return "$rc"
    res=$(cat "$DBG/result")
    [[ $(field held "$res") == ok ]] || { echo "the page kept: held=$(field held "$res")"; return 1; }
    (($(sdp_stat RxPageReuses) > reuses0)) || { echo "no read page was reused"; return 1; }
}

ktap_plan 12
ktap_run module_loads module_loads
ktap_run tcp_all_modes tcp_all_modes
ktap_run read_sock sdp_case read_sock 19320
ktap_run read_sock_cb sdp_case read_sock_cb 19321
ktap_run recvmsg_kvec sdp_case recvmsg_kvec 19322
ktap_run recvmsg_bvec sdp_case recvmsg_bvec 19323
ktap_run read_sock_eof sdp_case read_sock 19324 100000 -C
ktap_run recvmsg_kvec_eof sdp_case recvmsg_kvec 19325 100000 -C
ktap_run read_sock_ipv6 ipv6_read_sock
ktap_run read_sock_page_kept read_sock_page_kept
ktap_run bad_requests_refused bad_requests_refused
ktap_run module_unloads_clean module_unloads_clean
ktap_finish
