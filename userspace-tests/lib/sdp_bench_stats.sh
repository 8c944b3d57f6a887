# shellcheck shell=bash
# sdp_bench_stats.sh: sdp.ko's counters (/proc/net/sdpstats) around a
# benchmark's run, to tell where its time went: credit stalls, memory
# stalls, wake-ups, message kinds.  Both hosts of the bed share the
# guest's namespace: a delta is the sum of the two ends.  The gauges
# (memory held, buffers posted) are left out.  Beside them, the link's
# own faults, summed over both Soft-RoCE devices, for every transport
# that crosses them: LinkOutOfSequence (packets that came before one sent
# ahead of them: the sender goes back and sends again from the missing
# one), LinkDuplicates (packets received twice), LinkRetries (the
# requests a sender sent again).  And where the work ran, per CPU N of
# the guest: CpuBusyN and CpuIdleN (/proc/stat: jiffies busy, and idle or
# waiting for I/O) and CpuNetRxN (/proc/softirqs: NET_RX softirqs, which
# mark the CPU that took the link's packets in): both hosts and the
# emulated link share the guest's CPUs.
#   sdpstats_snap                      the counters now, for:
#   sdpstats_moved CSV TEST SIZE RUN   appends each counter that moved since,
#                                      and the link's always, to CSV
#                                      (test,size,run,counter,delta)

sdpstats_now() {
    cat /proc/net/sdpstats
    rdma statistic show link | awk '
        { for (i = 1; i < NF; i++) n[$i] += $(i + 1) }
        END {
            print "LinkOutOfSequence", n["out_of_seq_request"] + 0
            print "LinkDuplicates", n["duplicate_request"] + 0
            print "LinkRetries", n["completer_retry_err"] + 0
        }'
    awk '/^cpu[0-9]/ { n = substr($1, 4)
                       print "CpuBusy" n, $2 + $3 + $4 + $7 + $8 + $9; print "CpuIdle" n, $5 + $6 }' /proc/stat
    awk '$1 == "NET_RX:" { for (i = 2; i <= NF; i++) print "CpuNetRx" i - 2, $i }' /proc/softirqs
}
sdpstats_snap() { SDPSTATS_BEFORE=$(sdpstats_now); }
sdpstats_moved() {
    [[ -s $1 ]] || echo "test,size,run,counter,delta" >"$1"
    awk -v t="$2" -v s="$3" -v r="$4" '
        NR == FNR { before[$1] = $2; next }
        $1 ~ /^(BufferMemory|PoolMemory|PoolBuffersPosted)$/ { next }
        $1 in before && ($2 != before[$1] || $1 ~ /^Link/) { printf "%s,%s,%s,%s,%d\n", t, s, r, $1, $2 - before[$1] }
    ' <(printf '%s\n' "$SDPSTATS_BEFORE") <(sdpstats_now) >>"$1"
}
