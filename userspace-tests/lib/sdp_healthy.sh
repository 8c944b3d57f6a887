# shellcheck shell=bash
# sdp_healthy.sh: a healthy SDP connection beside a test that hurts
# others (hostile peers, fuzzers): tools/sdp_pair moves BYTES at a time,
# connection after connection, each checked with FNV-1a, until stopped.
#
#   healthy_start DIR PORT BYTES   in the background, on ports PORT to
#                                  PORT+9 in turn; HEALTHY_PID is its pid
#   healthy_stop DIR               stops it, says how its transfers ended;
#                                  fails (their output printed) if one failed

healthy_start() {
    local dir=$1 port=$2 bytes=$3
    (
        local i=0 rc
        while [[ ! -e $dir/stop ]]; do
            timeout -k 5 240 "$SDP_PAIR" -q -p $((port + i % 10)) -s "$bytes" \
                >"$dir/pair.$i" 2>&1 && rc=0 || rc=$?
            echo "$rc" >>"$dir/rcs"
            i=$((i + 1))
        done
    ) &
    HEALTHY_PID=$!
}

healthy_stop() {
    local dir=$1
    touch "$dir/stop"
    wait "$HEALTHY_PID"
    echo "healthy transfers: $(wc -l <"$dir/rcs"), exit statuses: $(sort "$dir/rcs" | uniq -c | xargs)"
    if grep -qv '^0$' "$dir/rcs"; then
        cat "$dir"/pair.*; echo "a healthy transfer failed"; return 1
    fi
}
