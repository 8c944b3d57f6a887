# shellcheck shell=bash
# sdp_qperf.sh: what the scripts that run qperf between the bed's hosts
# (qperf_sdp.sh, the bench, the demo) share.  Source after bed/hosts.env.
#   rxe_counter DEV COUNTER   a Soft-RoCE port counter of DEV
#   rxe_pkt_counts            packets rxeA sent, rxeB received, rxeB sent,
#                             rxeA received
#   qperf_server_start PORT LOG
#                             a qperf server on PORT, its output appended
#                             to LOG, its pid in QPERF_SERVER; returns once
#                             its control port listens, 1 if not in 10 s
#   qperf_test_kill           the server's test child, if one hangs, killed
#   qperf_server_stop         the server and its test child stopped, if
#                             one was started

rxe_counter() { rdma statistic show link "$1/1" | grep -oE " $2 [0-9]+" | cut -d' ' -f3; }

rxe_pkt_counts() {
    echo "$(rxe_counter "$SDP_A_RDMA" sent_pkts) $(rxe_counter "$SDP_B_RDMA" rcvd_pkts)" \
         "$(rxe_counter "$SDP_B_RDMA" sent_pkts) $(rxe_counter "$SDP_A_RDMA" rcvd_pkts)"
}

QPERF_SERVER=
qperf_server_start() {
    qperf --listen_port "$1" >>"$2" 2>&1 &
    # shellcheck disable=SC2034  # (the callers read it)
    QPERF_SERVER=$!
    for _ in $(seq 50); do
        ss -Hltn "sport = :$1" | grep -q . && return 0
        sleep 0.2
    done
    return 1
}

qperf_test_kill() { [[ -z $QPERF_SERVER ]] || pkill -P "$QPERF_SERVER" 2>/dev/null || true; }

qperf_server_stop() {
    [[ -n $QPERF_SERVER ]] || return 0
    qperf_test_kill
    kill "$QPERF_SERVER" 2>/dev/null || true
    wait "$QPERF_SERVER" 2>/dev/null || true
}
