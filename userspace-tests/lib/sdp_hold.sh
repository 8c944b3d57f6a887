# sdp_hold.sh: keep an SDP connection and its listener open in the
# background while a shell test looks at the system (source it).
#   sdp_hold_start [sdp_pair options]   returns once the connection is up
#   sdp_hold_stop                       closes them and waits for sdp_pair
SDP_PAIR=${SDP_PAIR:-$SDP_BUILD/tools/sdp_pair}

sdp_hold_start() {
    local out
    coproc SDP_HOLD { exec "$SDP_PAIR" -q -w "$@"; }
    read -r -t 60 -u "${SDP_HOLD[0]}" out || { echo "sdp_pair did not come up"; return 1; }
    [[ $out == ready ]] || { echo "sdp_pair: $out"; return 1; }
}

sdp_hold_stop() {
    local pid=$SDP_HOLD_PID
    exec {SDP_HOLD[1]}>&-
    wait "$pid"
}
