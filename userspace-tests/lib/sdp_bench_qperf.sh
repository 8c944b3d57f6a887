# shellcheck shell=bash
# sdp_bench_qperf.sh: the bench's qperf runs (bench-guest.sh's cases, and
# the link's own figure in the turns of its RPC and NFS rows).  Source
# after bed/hosts.env and sdp_qperf.sh; the caller sets PORT (the qperf
# server's control port, on host B), TIME (seconds a run) and log()
# (bench.log).
#   qperf_run TEST SIZE       one run; prints "VALUE UNIT" (MB/s or us)
#   qperf_run_again TEST SIZE the same, once more if the first gave no
#                             figure
#   link_run ROW SIZE RUN CSV rc_bw at SIZE, appended to CSV as ROW's run
#                             RUN: the raw link in the turns of another row

# to_unit VALUE UNIT: qperf's figure in MB/s or us
to_unit() {
    awk -v v="$1" -v u="$2" 'BEGIN {
        f["bytes/sec"] = 1e-6; f["KB/sec"] = 1e-3; f["MB/sec"] = 1; f["GB/sec"] = 1e3
        f["ns"] = 1e-3; f["us"] = 1; f["ms"] = 1e3; f["sec"] = 1e6
        if (!(u in f) || v !~ /^[0-9.]+$/) exit 1
        printf "%.6g %s\n", v * f[u], (u ~ /sec$/ && u != "sec") ? "MB/s" : "us"
    }'
}

# variant_param TEST: the sdp.ko parameters and values a test variant
# runs with, as pairs on one line: TEST_bcopy read zero-copy off,
# TEST_copy every send copied (zcopy_thresh 0), TEST_zc every large send
# from the pages, whatever it costs, also where the device completes in
# process context (zcopy_task_cq, and zcopy_adapt off), TEST_nopoll a
# reader that never spins for data before it sleeps (recv_poll_us 0);
# nothing for the others
variant_param() {
    case $1 in
    *_bcopy) echo "read_zcopy 0" ;;
    *_copy) echo "zcopy_thresh 0" ;;
    *_zc) echo "zcopy_task_cq 1 zcopy_adapt 0" ;;
    *_nopoll) echo "recv_poll_us 0" ;;
    esac
}

# qperf_run TEST SIZE: one qperf run from host A to host B; prints
# "VALUE UNIT" (MB/s or us).  A variant (variant_param) runs qperf's test
# with its parameter set for the sockets the run makes; TEST_alt is
# TEST's, run by bench_case with the other sdp.ko.  A run that ends with
# no figure says ": no result ".
qperf_run() {
    local test=${1%_alt} size=$2 out value unit rc qtest i
    local -a opts=() params saved=()
    qtest=${test%_bcopy}
    qtest=${qtest%_copy}
    qtest=${qtest%_zc}
    qtest=${qtest%_nopoll}
    qtest=${qtest%_poll}
    # rc_lat_poll: raw RC polling its completion queues, as a spinning
    # sdp reader does, rather than waiting for their events
    [[ $test == rc_*_poll ]] && opts+=(-cp1)
    # qperf's RC tests reach a RoCE device only through the RDMA CM: its
    # own QP exchange sets no GRH ("failed to modify QP to RTR")
    [[ $test == rc_* ]] && opts+=(-cm1)
    read -ra params < <(variant_param "$test"; echo)
    for ((i = 0; i < ${#params[@]}; i += 2)); do
        saved+=("$(cat "/sys/module/sdp/parameters/${params[i]}")")
        echo "${params[i + 1]}" >"/sys/module/sdp/parameters/${params[i]}"
    done
    out=$(timeout -k 5 $((TIME * 2 + 60)) qperf "$SDP_B4" --listen_port "$PORT" "${opts[@]}" \
          -t "$TIME" -m "$size" -vvs "$qtest" 2>&1) && rc=0 || rc=$?
    for ((i = 0; i < ${#params[@]}; i += 2)); do
        echo "${saved[i / 2]}" >"/sys/module/sdp/parameters/${params[i]}"
    done
    ((!rc)) || { log "$out"; echo "qperf $test -m $size failed: $(tail -n1 <<<"$out")"; return 1; }
    log "$out"
    read -r value unit < <(awk '$1 == "bw" || $1 == "latency" { print $3, $4; exit }' <<<"$out")
    awk '$1 ~ /_errors$/ && $3 != 0 { bad = 1 } END { exit bad }' <<<"$out" ||
        { echo "qperf $test -m $size: errors: $(grep -E '_errors += +[1-9]' <<<"$out" | xargs)"; return 1; }
    awk -v v="${value:-0}" 'BEGIN { exit !(v > 0) }' ||
        { echo "qperf $test -m $size: no result ($value $unit)"; return 1; }
    to_unit "$value" "$unit"
}

# qperf_run_again TEST SIZE: qperf_run, and once more when it ended with
# no figure (now and then rc_lat -m 1M does, with no error)
qperf_run_again() {
    local r
    r=$(qperf_run "$1" "$2") && { echo "$r"; return 0; }
    [[ $r == *": no result "* ]] || { echo "$r"; return 1; }
    log "$r; run again"
    qperf_test_kill
    qperf_run "$1" "$2"
}

# link_run ROW SIZE RUN CSV: qperf's rc_bw with messages of SIZE, one
# QP, as row ROW's run RUN in CSV; prints its MB/s
link_run() {
    local r unit
    log "== $1 (rc_bw) size $2 run $3"
    r=$(qperf_run_again rc_bw "$2") || { echo "$r"; return 1; }
    read -r r unit <<<"$r"
    echo "$1,$2,$3,$r,$unit" >>"$4"
    echo "$r"
}
