# sdp_hold.sh: keep an SDP connection and its listener open in the
# background while a shell test looks at the system (source it).
#   sdp_hold_start [sdp_pair options]   returns once the connection is up
#   sdp_hold_stop [SECONDS]             closes them and waits for sdp_pair; if
#                                       it is still there after SECONDS (60),
#                                       shows sdp_pair_state, kills it, fails
#   sdp_pair_state                      what the connections, the module and
#                                       each sdp_pair are doing (for a hang)
SDP_PAIR=${SDP_PAIR:-$SDP_BUILD/tools/sdp_pair}

sdp_hold_start() {
    local out
    coproc SDP_HOLD { exec "$SDP_PAIR" -q -w "$@"; }
    read -r -t 60 -u "${SDP_HOLD[0]}" out || { echo "sdp_pair did not come up"; return 1; }
    [[ $out == ready ]] || { echo "sdp_pair: $out"; return 1; }
}

sdp_hold_stop() {
    local pid=$SDP_HOLD_PID _
    exec {SDP_HOLD[1]}>&-
    for _ in $(seq $((${1:-60} * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        echo "sdp_pair did not end"; sdp_pair_state; kill -9 "$pid"; wait "$pid"; return 1
    fi
    wait "$pid"
}

sdp_pair_state() {
    cat /proc/net/sdp
    awk '$2 != 0' /proc/net/sdpstats
    local p
    for p in $(pgrep -x sdp_pair); do echo "sdp_pair $p:"; cat "/proc/$p/task/"*/stack; done
}
