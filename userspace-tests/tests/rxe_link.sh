#!/bin/bash
# rxe_link.sh: KTAP test of the test bed itself: both Soft-RoCE devices are
# ACTIVE on their veth ends, and RDMA CM connections with data verification
# (rping) work from host A to host B over IPv4 and IPv6, with the packets
# going rxeA <-> rxeB. Runs in the guest after bed/net-setup.
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/bed/hosts.env"
T=${SDP_RPING_TIMEOUT:-60}    # seconds; rping over rxe under TCG takes a few

# rxe_active DEV NETDEV
rxe_active() {
    rdma link show "$1/1" | grep -qE "state ACTIVE .* netdev $2( |$)" ||
        { echo "$1 is not ACTIVE on $2"; return 1; }
}
rxe_devices_active() {
    rdma link show
    rxe_active "$SDP_A_RDMA" "$SDP_A_IF"
    rxe_active "$SDP_B_RDMA" "$SDP_B_IF"
}

# pkts DEV COUNTER: a Soft-RoCE port counter (rdma statistic)
pkts() { rdma statistic show link "$1/1" | grep -oE " $2 [0-9]+" | cut -d' ' -f3; }
pkts_both_ways() {
    echo "$(pkts "$SDP_A_RDMA" sent_pkts) $(pkts "$SDP_B_RDMA" rcvd_pkts)" \
         "$(pkts "$SDP_B_RDMA" sent_pkts) $(pkts "$SDP_A_RDMA" rcvd_pkts)"
}

# rping_a_to_b B_ADDR A_ADDR PORT: 3 verified pings from host A to host B,
# and the packets went over rxeA <-> rxeB (not one device to itself)
rping_a_to_b() {
    local srv=$1 cli=$2 port=$3 slog spid out a0 b0 c0 d0 a1 b1 c1 d1
    read -r a0 b0 c0 d0 <<<"$(pkts_both_ways)"
    slog=$(mktemp)
    timeout "$T" rping -s -a "$srv" -p "$port" -C 3 -v >"$slog" 2>&1 &
    spid=$!
    for _ in $(seq 50); do    # wait until the server listens
        rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr [^ ]*:$port " && break
        sleep 0.2
    done
    out=$(timeout "$T" rping -c -a "$srv" -I "$cli" -p "$port" -C 3 -v 2>&1) || {
        echo "$out"; echo "rping client failed"; kill "$spid" 2>/dev/null; return 1
    }
    echo "$out"
    wait "$spid" || { cat "$slog"; echo "rping server failed"; return 1; }
    [[ $(grep -c "ping data: rdma-ping-" <<<"$out") -eq 3 ]] ||
        { echo "expected 3 verified pings"; return 1; }
    read -r a1 b1 c1 d1 <<<"$(pkts_both_ways)"
    echo "packets $SDP_A_RDMA->$SDP_B_RDMA sent $((a1 - a0)) received $((b1 - b0))," \
         "$SDP_B_RDMA->$SDP_A_RDMA sent $((c1 - c0)) received $((d1 - d0))"
    ((a1 > a0 && b1 > b0 && c1 > c0 && d1 > d0)) ||
        { echo "the traffic did not go between $SDP_A_RDMA and $SDP_B_RDMA"; return 1; }
}

ktap_plan 3
ktap_run rxe_devices_active rxe_devices_active
ktap_run rping_ipv4 rping_a_to_b "$SDP_B4" "$SDP_A4" 7174
ktap_run rping_ipv6 rping_a_to_b "$SDP_B6" "$SDP_A6" 7176
ktap_finish
