# shellcheck shell=bash
# sdp_bench_stats.sh: sdp.ko's counters (/proc/net/sdpstats) around a
# benchmark's SDP run, to tell where its time went: credit stalls, memory
# stalls, wake-ups, message kinds.  Both hosts of the bed share the
# guest's namespace: a delta is the sum of the two ends.  The gauges
# (memory held, buffers posted) are left out.
#   sdpstats_snap                      the counters now, for:
#   sdpstats_moved CSV TEST SIZE RUN   appends each counter that moved since
#                                      to CSV (test,size,run,counter,delta)

sdpstats_snap() { SDPSTATS_BEFORE=$(cat /proc/net/sdpstats); }
sdpstats_moved() {
    [[ -s $1 ]] || echo "test,size,run,counter,delta" >"$1"
    awk -v t="$2" -v s="$3" -v r="$4" '
        NR == FNR { before[$1] = $2; next }
        $1 ~ /^(BufferMemory|PoolMemory|PoolBuffersPosted)$/ { next }
        $1 in before && $2 != before[$1] { printf "%s,%s,%s,%s,%d\n", t, s, r, $1, $2 - before[$1] }
    ' <(printf '%s\n' "$SDPSTATS_BEFORE") /proc/net/sdpstats >>"$1"
}
