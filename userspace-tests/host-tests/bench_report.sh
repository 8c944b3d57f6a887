#!/bin/bash
# bench_report.sh: the bench's report (bench/report) on results whose
# answers are known, on the host (no guest).
#   call_cost        RPC rows over one connection made from a fixed cost
#                    per call and a cost per MiB: the report gives both back
#   call_cost_noise  the same with the runs spread around the medians: the
#                    medians decide
#   one_block        rows of a single block size: no fit, no section
#   ratios           the tracked ratios are the medians' quotients
#   alt_ratios       another sdp.ko build's runs (TEST_alt) against the
#                    test's; no row where none ran
#   rpc_alt_ratios   the same for the RPC rows over netid sdp_alt, which
#                    also get their line in the RPC table and its fit
#   link_anchor      one connection against the link in its own turns
#                    (rpc_KIND_rc_c1, the kcheck rows against the kernel
#                    rows'; nfs_rc_bw), else against the qperf cases'
#                    rc_bw; the rc rows get no fit
#   serial_anchor    RC one message at a time, from the rc_lat medians at 1
#                    MiB and 64 B, and one connection against it; none
#                    without both
#   checked_rows     the kernel rows with every byte checked: their table,
#                    their fit, their ratio to the stamped rows
#   counters         sdp.ko's counters per MiB sent (in Data messages and
#                    read by the peer): medians of the runs, a run that did
#                    not move a counter counting as 0
#   link_faults      the runs in which the link delivered out of sequence,
#                    with the median and the sum of each link counter; a
#                    line saying none did when all were 0; no section in
#                    results that did not count them
#   cpu_placement    each bandwidth run's figure beside each CPU's busy
#                    share and share of NET_RX; no section in results
#                    that did not count them
# Usage: bench_report.sh
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
report=$here/bench/report
work=$(mktemp -d /tmp/sdp-bench-report.XXXX)
trap 'rm -rf "$work"' EXIT

# rows TEST FIXED_US MS_PER_MIB SPREAD BLOCK...: CSV rows of TEST, three runs
# per block, the bandwidth a call of BLOCK bytes has at that cost, the
# runs SPREAD (a fraction) below and above the median
rows() {
    local test=$1 fixed=$2 per_mib=$3 spread=$4 b
    shift 4
    for b in "$@"; do
        awk -v t="$test" -v b="$b" -v f="$fixed" -v m="$per_mib" -v s="$spread" 'BEGIN {
            bw = b / (f * 1e-6 + b / 1048576 * m * 1e-3) / 1e6
            printf "%s,%d,1,%.6f,MB/s\n%s,%d,2,%.6f,MB/s\n%s,%d,3,%.6f,MB/s\n",
                   t, b, bw * (1 - s), t, b, bw, t, b, bw * (1 + s)
        }'
    done
}

# report_of NAME ROWS...: DIR/results.md of a folder with those rows
report_of() {
    local dir=$work/$1
    shift
    mkdir -p "$dir"
    { echo "test,size,run,value,unit"; printf '%s\n' "$@"; } >"$dir/results.csv"
    "$report" "$dir" >/dev/null 2>&1
    cat "$dir/results.md"
}

# expect_row MD TEST FIXED PER_MIB: the section's row of TEST says so
expect_row() {
    local row
    row=$(grep -F "| \`$2\` |" <<<"$1") || { echo "no row for $2"; return 1; }
    echo "$row"
    awk -F'|' -v f="$3" -v m="$4" '{ gsub(/ /, ""); exit !($3 == f && $4 == m) }' <<<"$row" ||
        { echo "want $3 us per call and $4 ms per MiB"; return 1; }
}

call_cost() {
    local md
    md=$(report_of exact \
        "$(rows rpc_kernel_sdp_c1 500 16 0 4096 65536 1048576)" \
        "$(rows rpc_kernel_tcp_c1 120 5.5 0 4096 65536 1048576)" \
        "$(rows rpc_kernel_sdp_c4 900 30 0 4096 65536 1048576)")
    grep -q "Where one connection's time goes" <<<"$md" || { echo "no section"; return 1; }
    expect_row "$md" rpc_kernel_sdp_c1 500 16.00
    expect_row "$md" rpc_kernel_tcp_c1 120 5.50
    ! grep -qF '| `rpc_kernel_sdp_c4` | 900' <<<"$md" ||
        { echo "a fit for four connections"; return 1; }
}

call_cost_noise() {
    local md
    md=$(report_of noise "$(rows rpc_user_sdp_c1 381 24.7 0.2 4096 65536 1048576)")
    expect_row "$md" rpc_user_sdp_c1 381 24.70
}

one_block() {
    local md
    md=$(report_of one "$(rows rpc_kernel_sdp_c1 500 16 0 1048576)")
    grep -q "RPC bandwidth, kernel to kernel" <<<"$md" || { echo "no RPC table"; return 1; }
    ! grep -q "Where one connection's time goes" <<<"$md" || { echo "a fit from one block"; return 1; }
}

ratios() {
    local md
    md=$(report_of ratios "$(rows rpc_kernel_sdp_c1 0 20 0.1 1048576)" \
         "rc_bw,1048576,1,80,MB/s" "rc_bw,1048576,2,40,MB/s" "rc_bw,1048576,3,70,MB/s")
    # 1 MiB at 20 ms per MiB: 52.4288 MB/s, against 70
    grep -F "| rpc_kernel_sdp_c1 / rc_bw at 1 MiB |" <<<"$md" | grep -qF "**0.75**" ||
        { grep -F "rpc_kernel_sdp_c1 / rc_bw" <<<"$md"; echo "want 0.75"; return 1; }
    # the spinning reader against raw RC that polls too
    md=$(report_of lat_poll "sdp_lat,64,1,120,us" "sdp_lat,64,2,100,us" "sdp_lat,64,3,500,us" \
         "rc_lat_poll,64,1,80,us" "rc_lat_poll,64,2,90,us" "rc_lat_poll,64,3,70,us")
    grep -F "| sdp_lat / rc_lat_poll at 64 B |" <<<"$md" | grep -qF "**1.50**" ||
        { grep -F "rc_lat_poll" <<<"$md"; echo "want 1.50"; return 1; }
}

# Another build's runs (TEST_alt) against the test's: a row of their own,
# the medians' quotient; none for a test that has no alt runs.
alt_ratios() {
    local md
    md=$(report_of alt "sdp_lat,64,1,50,us" "sdp_lat,64,2,52,us" "sdp_lat,64,3,54,us" \
         "sdp_lat_alt,64,1,40,us" "sdp_lat_alt,64,2,39,us" "sdp_lat_alt,64,3,90,us" \
         "sdp_bw,65536,1,60,MB/s")
    grep -F "| sdp_lat_alt / sdp_lat at 64 B |" <<<"$md" | grep -qF "**0.77**" ||
        { grep -F "_alt" <<<"$md"; echo "want 0.77 (40 / 52)"; return 1; }
    ! grep -qF "sdp_bw_alt" <<<"$md" || { echo "a row for sdp_bw_alt, which did not run"; return 1; }
    md=$(report_of alt_alone "sdp_bw_alt,65536,1,60,MB/s")
    grep -F "| sdp_bw_alt / sdp_bw at 64 KiB |" <<<"$md" | grep -qF "no sdp_bw at 64 KiB" ||
        { grep -F "_alt" <<<"$md"; echo "want the row to say sdp_bw did not run"; return 1; }
}

# The RPC rows over netid sdp_alt against the same rows over sdp: a ratio
# row each, beside their own line in the RPC section and its fit.
rpc_alt_ratios() {
    local md
    md=$(report_of rpc_alt "$(rows rpc_kernel_sdp_c1 500 20 0.1 65536 1048576)" \
         "$(rows rpc_kernel_sdp_alt_c1 500 16 0.1 65536 1048576)" \
         "$(rows rpc_user_sdp_alt_c1 500 16 0 1048576)")
    # 1 MiB: 1 / (0.5 + 20) against 1 / (0.5 + 16) ms
    grep -F "| rpc_kernel_sdp_alt_c1 / rpc_kernel_sdp_c1 at 1 MiB |" <<<"$md" | grep -qF "**1.24**" ||
        { grep -F "_alt" <<<"$md"; echo "want 1.24 (20.5 / 16.5)"; return 1; }
    grep -F "| rpc_user_sdp_alt_c1 / rpc_user_sdp_c1 at 1 MiB |" <<<"$md" | grep -qF "no rpc_user_sdp_c1 at 1 MiB" ||
        { grep -F "rpc_user_sdp_alt" <<<"$md"; echo "want the row to say rpc_user_sdp_c1 did not run"; return 1; }
    expect_row "$md" rpc_kernel_sdp_alt_c1 500 16.00
}

link_anchor() {
    local md
    md=$(report_of link "$(rows rpc_kernel_sdp_c1 0 20 0 65536 1048576)" \
         "$(rows rpc_kcheck_sdp_c1 0 25 0 65536 1048576)" \
         "$(rows rpc_kernel_rc_c1 0 10 0 65536 1048576)" \
         "$(rows rpc_user_sdp_c1 0 20 0 1048576)" \
         "rc_bw,1048576,1,60,MB/s" "rc_bw,1048576,2,70,MB/s" "rc_bw,1048576,3,90,MB/s" \
         "nfs_write_sdp,33554432,1,30,MB/s" "nfs_read_sdp,33554432,1,35,MB/s" \
         "nfs_rc_bw,1048576,1,60,MB/s" "nfs_rc_bw,1048576,2,70,MB/s" "nfs_rc_bw,1048576,3,50,MB/s")
    # 1 MiB at 20 and 25 ms per MiB, against 10 in the same turns
    grep -F "| rpc_kernel_sdp_c1 / rpc_kernel_rc_c1 at 1 MiB |" <<<"$md" | grep -qF "**0.50**" ||
        { grep -F "rpc_kernel_sdp_c1 /" <<<"$md"; echo "want 0.50 against rpc_kernel_rc_c1"; return 1; }
    grep -F "| rpc_kcheck_sdp_c1 / rpc_kernel_rc_c1 at 1 MiB |" <<<"$md" | grep -qF "**0.40**" ||
        { grep -F "rpc_kcheck_sdp_c1 /" <<<"$md"; echo "want 0.40 against rpc_kernel_rc_c1"; return 1; }
    # no rc in the user rows' turns: the qperf cases' rc_bw (52.4288 / 70)
    grep -F "| rpc_user_sdp_c1 / rc_bw at 1 MiB |" <<<"$md" | grep -qF "**0.75**" ||
        { grep -F "rpc_user_sdp_c1 /" <<<"$md"; echo "want 0.75 against rc_bw"; return 1; }
    grep -F "| nfs_write_sdp / nfs_rc_bw at 1 MiB |" <<<"$md" | grep -qF "**0.50**" ||
        { grep -F "nfs_write_sdp /" <<<"$md"; echo "want 0.50 against nfs_rc_bw"; return 1; }
    grep -F "| nfs_read_sdp / nfs_rc_bw at 1 MiB |" <<<"$md" | grep -qF "**0.58**" ||
        { grep -F "nfs_read_sdp /" <<<"$md"; echo "want 0.58 against nfs_rc_bw"; return 1; }
    grep -qF "The link in the same turns (\`nfs_rc_bw\`" <<<"$md" || { echo "no link line under NFS"; return 1; }
    ! grep -qE '^\| (bw|rc) \|' <<<"$md" || { echo "the link's row taken for an NFS proto"; return 1; }
    expect_row "$md" rpc_kernel_sdp_c1 0 20.00
    ! grep -qF '| `rpc_kernel_rc_c1` |' <<<"$md" || { echo "a call-cost fit for the link"; return 1; }
}

serial_anchor() {
    local md lat=("rc_lat,1048576,1,10385.76,us" "rc_lat,1048576,2,9000,us" "rc_lat,1048576,3,12000,us")
    # 1 MiB / (10385.76 + 100) us: 100 MB/s
    md=$(report_of serial "$(rows rpc_kernel_sdp_c1 0 20 0.1 1048576)" "${lat[@]}" \
         "rc_lat,64,1,100,us" "rc_lat,64,2,90,us" "rc_lat,64,3,300,us" "rc_bw,1048576,1,80,MB/s")
    grep -F "| rc_serial_bw / rc_bw at 1 MiB |" <<<"$md" | grep -qF "**1.25**" ||
        { grep -F "rc_serial_bw / rc_bw" <<<"$md"; echo "want 1.25"; return 1; }
    grep -F "| rpc_kernel_sdp_c1 / rc_serial_bw at 1 MiB |" <<<"$md" | grep -qF "**0.52**" ||
        { grep -F "rpc_kernel_sdp_c1 / rc_serial_bw" <<<"$md"; echo "want 0.52"; return 1; }
    md=$(report_of serial_none "$(rows rpc_kernel_sdp_c1 0 20 0.1 1048576)" "${lat[@]}")
    grep -F "| rpc_kernel_sdp_c1 / rc_serial_bw at 1 MiB |" <<<"$md" | grep -qF "| n/a |" ||
        { grep -F "rc_serial_bw" <<<"$md"; echo "want no rc_serial_bw without rc_lat at 64 B"; return 1; }
}

# The rows with every byte checked: a table of their own, and their ratio
# to the stamped rows.
checked_rows() {
    local md
    md=$(report_of checked "$(rows rpc_kernel_sdp_c1 0 20 0 65536 1048576)" \
         "$(rows rpc_kcheck_sdp_c1 0 25 0 65536 1048576)")
    grep -q "RPC bandwidth, kernel to kernel, every byte checked" <<<"$md" ||
        { echo "no table of the checked rows"; return 1; }
    expect_row "$md" rpc_kcheck_sdp_c1 0 25.00
    grep -F "| rpc_kcheck_sdp_c1 / rpc_kernel_sdp_c1 at 1 MiB |" <<<"$md" | grep -qF "**0.80**" ||
        { grep -F "rpc_kcheck_sdp_c1 / rpc_kernel_sdp_c1" <<<"$md"; echo "want 0.80"; return 1; }
}

counters() {
    local dir=$work/counters row
    mkdir -p "$dir"
    echo "test,size,run,value,unit" >"$dir/results.csv"
    printf '%s\n' "sdp_bw,65536,1,70,MB/s" "sdp_bw,65536,2,72,MB/s" "sdp_bw,65536,3,71,MB/s" >>"$dir/results.csv"
    # 2 MiB a run; CreditStalls 40, (none), 60: median 40, 20 per MiB;
    # Data 32 a run: 16 per MiB; CqEventHandovers 1, 2, 9: 1 per MiB
    {
        echo "test,size,run,counter,delta"
        for r in 1 2 3; do
            echo "sdp_bw,65536,$r,TxBytes,2097152"
            echo "sdp_bw,65536,$r,TxMsgData,32"
        done
        echo "sdp_bw,65536,1,CreditStalls,40"
        echo "sdp_bw,65536,3,CreditStalls,60"
        echo "sdp_bw,65536,1,CqEventHandovers,1"
        echo "sdp_bw,65536,2,CqEventHandovers,2"
        echo "sdp_bw,65536,3,CqEventHandovers,9"
        # 4 MiB a run, all but 1 KiB of it read by the peer: 1 SrcAvail per MiB
        for r in 1 2 3; do
            echo "sdp_bw,1048576,$r,TxBytes,1024"
            echo "sdp_bw,1048576,$r,TxReadZcopyBytes,$((4194304 - 1024))"
            echo "sdp_bw,1048576,$r,TxMsgSrcAvail,4"
        done
    } >"$dir/sdpstats.csv"
    "$report" "$dir" >/dev/null 2>&1
    row=$(grep -F '| `sdp_bw` | 64 KiB |' "$dir/results.md") || { echo "no counters row"; return 1; }
    echo "$row"
    # run | size | MiB a run | Data | SrcAvail | credit stalls | credit
    # updates | memory stalls | CQ events | in a task | handed over | ...
    awk -F'|' '{ gsub(/ /, "") } $4 == "2" && $5 == "16.0" && $6 == "0" && $7 == "20.0" &&
        $8 == "0" && $12 == "1" { ok = 1 } END { exit !ok }' <<<"$row" ||
        { echo "want 2 MiB a run, 16 Data, 0 SrcAvail, 20 credit stalls, 1 CQ handover per MiB"; return 1; }
    row=$(grep -F '| `sdp_bw` | 1 MiB |' "$dir/results.md") || { echo "no counters row at 1 MiB"; return 1; }
    echo "$row"
    awk -F'|' '{ gsub(/ /, "") } $4 == "4" && $5 == "0" && $6 == "1" { ok = 1 } END { exit !ok }' <<<"$row" ||
        { echo "want 4 MiB a run (Data and read zero-copy), 1 SrcAvail per MiB"; return 1; }
}

# stats_report NAME ROW...: DIR/results.md of a folder with an sdp_bw row
# and those sdpstats.csv rows
stats_report() {
    local dir=$work/$1
    shift
    mkdir -p "$dir"
    printf '%s\n' "test,size,run,value,unit" "sdp_bw,65536,1,70,MB/s" >"$dir/results.csv"
    printf '%s\n' "test,size,run,counter,delta" "$@" >"$dir/sdpstats.csv"
    "$report" "$dir" >/dev/null 2>&1
    cat "$dir/results.md"
}

link_faults() {
    local md row r zeros=() faults=()
    for r in 1 2 3; do
        zeros+=("nfs_read_rdma,33554432,$r,LinkOutOfSequence,0"
                "nfs_read_rdma,33554432,$r,LinkDuplicates,0" "nfs_read_rdma,33554432,$r,LinkRetries,0")
    done
    # out of sequence 19, 0, 3: median 3, sum 22; duplicates 156, 0, 10;
    # retries 11, 0, 2
    faults=("${zeros[@]}" "nfs_read_sdp,33554432,1,LinkOutOfSequence,19"
            "nfs_read_sdp,33554432,1,LinkDuplicates,156" "nfs_read_sdp,33554432,1,LinkRetries,11"
            "nfs_read_sdp,33554432,2,LinkOutOfSequence,0" "nfs_read_sdp,33554432,2,LinkDuplicates,0"
            "nfs_read_sdp,33554432,2,LinkRetries,0" "nfs_read_sdp,33554432,3,LinkOutOfSequence,3"
            "nfs_read_sdp,33554432,3,LinkDuplicates,10" "nfs_read_sdp,33554432,3,LinkRetries,2")
    md=$(stats_report faults "${faults[@]}")
    row=$(grep -F '| `nfs_read_sdp` | 32 MiB |' <<<"$md") || { echo "no link row"; return 1; }
    echo "$row"
    awk -F'|' '{ gsub(/ /, "") } $4 == "3(22)" && $5 == "10(166)" && $6 == "2(13)" { ok = 1 }
        END { exit !ok }' <<<"$row" || { echo "want 3 (22), 10 (166), 2 (13)"; return 1; }
    ! grep -qF '| `nfs_read_rdma` |' <<<"$md" || { echo "a link row for a run without faults"; return 1; }
    md=$(stats_report clean "${zeros[@]}")
    grep -q "No run saw a packet out of sequence" <<<"$md" || { echo "no line for a clean link"; return 1; }
    md=$(stats_report uncounted "sdp_bw,65536,1,TxBytes,2097152")
    ! grep -q "The link's faults" <<<"$md" || { echo "a link section without link counters"; return 1; }
}

cpu_placement() {
    local md row
    # CPU 0 busy all of the run (its idle time did not move), CPU 1 25%;
    # NET_RX on CPU 1 alone
    md=$(stats_report cpus "sdp_bw,65536,1,CpuBusy0,80" "sdp_bw,65536,1,CpuBusy1,20" \
         "sdp_bw,65536,1,CpuIdle1,60" "sdp_bw,65536,1,CpuNetRx1,50")
    row=$(grep -F '| `sdp_bw` | 64 KiB | 70.0 ·' <<<"$md") || { echo "no CPU row"; return 1; }
    echo "$row"
    [[ $row == *"| 70.0 · 100/25 · 0/100 |"* ]] ||
        { echo "want 70.0 MB/s, CPUs 100% and 25% busy, NET_RX 0% and 100%"; return 1; }
    md=$(stats_report cpus_idle "sdp_bw,65536,1,CpuIdle0,10" "sdp_bw,65536,1,CpuIdle1,10" \
         "sdp_bw,65536,1,CpuBusy1,0")
    grep -qF '| 70.0 · 0/0 · –/– |' <<<"$md" || { echo "want both idle, no NET_RX"; return 1; }
    md=$(stats_report cpus_uncounted "sdp_bw,65536,1,TxBytes,2097152")
    ! grep -q "Where each run's work ran" <<<"$md" || { echo "a CPU section without CPU counters"; return 1; }
}

ktap_plan 12
ktap_run call_cost call_cost
ktap_run call_cost_noise call_cost_noise
ktap_run one_block one_block
ktap_run ratios ratios
ktap_run alt_ratios alt_ratios
ktap_run rpc_alt_ratios rpc_alt_ratios
ktap_run link_anchor link_anchor
ktap_run serial_anchor serial_anchor
ktap_run checked_rows checked_rows
ktap_run counters counters
ktap_run link_faults link_faults
ktap_run cpu_placement cpu_placement
ktap_finish
