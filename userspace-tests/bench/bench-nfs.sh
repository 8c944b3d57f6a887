#!/bin/bash
# bench-nfs.sh: NFS sequential bandwidth for `make bench`, run in the same
# guest after bench-guest.sh (KTAP: one case per run).  nfsd on host
# B serves a tmpfs over TCP and SDP on 2049 and RPC-over-RDMA on 20049
# (the kernel's own xprtrdma, on the same rxe link); host A mounts it with
# vers=4.2, one connection (nconnect=1), 1 MiB rsize and wsize, and
# proto=tcp, proto=sdp and proto=rdma in turn, writes a file
# of NFS_MIB MiB (dd, bs=1M, fsync), remounts so nothing is cached, and
# reads it back.  The file read has the checksum of the file written; the
# traffic took the path it should (SDP's byte counters for sdp, the rxe
# packet counters for rdma).  Rows nfs_write_PROTO and nfs_read_PROTO,
# size = the file's bytes, unit MB/s (10^6 bytes/s); the sdp.ko and link
# counters each transfer moved in sdpstats.csv, under the same names.
# Proto rc is no NFS but the link itself, qperf's rc_bw with 1 MiB
# messages (row nfs_rc_bw, size 1 MiB), in the same turns: the anchor the
# NFS rows are held against, measured in the same minutes.
# Env: SDP_BENCH_OUT (required), SDP_BENCH_RUNS, SDP_BENCH_TIME (seconds a
# qperf run), SDP_BENCH_NFS_MIB (0: no NFS), SDP_BENCH_NFS_PROTOS (default
# "tcp sdp rdma rc").
# shellcheck disable=SC2317  # (the cases run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/bed/hosts.env"
. "$here/lib/sunrpc_modules.sh"
. "$here/lib/sdp_nfs.sh"
. "$here/lib/sdp_resources.sh"
. "$here/lib/sdp_qperf.sh"
. "$here/lib/sdp_bench_qperf.sh"
. "$here/lib/udev_quiet.sh"
. "$here/lib/sdp_bench_stats.sh"
OUT=${SDP_BENCH_OUT:?SDP_BENCH_OUT: the results folder}
RUNS=${SDP_BENCH_RUNS:-3}
NFS_MIB=${SDP_BENCH_NFS_MIB:-64}
read -ra PROTOS <<<"${SDP_BENCH_NFS_PROTOS:-tcp sdp rdma rc}"
# shellcheck disable=SC2034  # (sdp_bench_qperf.sh reads it)
TIME=${SDP_BENCH_TIME:-2}       # seconds a qperf run (proto rc)
PORT=19765                      # qperf's control port
CSV=$OUT/results.csv
STATS_CSV=$OUT/sdpstats.csv     # sdp.ko's counters each SDP transfer moved
LOG=$OUT/bench.log
WORK=/run/sdp-bench-nfs         # the guest's own tmpfs
MNT=$WORK/mnt SRC=$WORK/src.bin
RDMA_PORT=20049
BLOCK=1048576                   # rsize and wsize: one RPC moves 1 MiB

log() { printf '%s\n' "$*" >>"$LOG"; }

opts_for() {
    local o="vers=4.2,addr=$SDP_B4,clientaddr=$SDP_A4,soft,timeo=600,retrans=2,nconnect=1,rsize=$BLOCK,wsize=$BLOCK"
    case $1 in
    rdma) echo "$o,proto=rdma,port=$RDMA_PORT" ;;
    *) echo "$o,proto=$1" ;;
    esac
}

nfs_mount() { timeout -k 5 120 mount -i -t nfs4 -o "$(opts_for "$1")" "$SDP_B4:/" "$MNT"; }
nfs_umount() { timeout -k 5 120 umount "$MNT" || umount -f -l "$MNT"; }

# mbps BYTES NS
mbps() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.6g\n", b / (t / 1e9) / 1e6 }'; }

# nfs_case RUN: a write-then-read run of the file over each transport in
# turn (the transports take turns, run after run, as qperf's tests do)
nfs_case() {
    local run=$1 proto t0 t1 want got sdp0 rxe0 w r line=()
    local bytes=$((NFS_MIB * 1048576))
    want=$(sha256sum <"$SRC" | cut -d' ' -f1)
    for proto in "${PROTOS[@]}"; do
        if [[ $proto == rc ]]; then
            r=$(link_run nfs_rc_bw "$BLOCK" "$run" "$CSV") || { echo "$r"; return 1; }
            line+=("rc_bw $r")
            continue
        fi
        log "== nfs $proto run $run"
        sdp0=$(sdp_stat TxBytes) rxe0=$(rxe_counter "$SDP_B_RDMA" rcvd_pkts)
        nfs_mount "$proto" || { echo "mount proto=$proto failed"; return 1; }
        grep -q " $MNT .*rsize=$BLOCK,wsize=$BLOCK,.*proto=$proto," /proc/mounts ||
            { grep " $MNT " /proc/mounts; echo "not proto=$proto with 1 MiB rsize and wsize"; nfs_umount; return 1; }
        sdpstats_snap
        t0=$(date +%s%N)
        timeout -k 5 600 dd if="$SRC" of="$MNT/file.bin" bs=1M conv=fsync status=none ||
            { echo "write over $proto failed"; nfs_umount; return 1; }
        t1=$(date +%s%N)
        sdpstats_moved "$STATS_CSV" "nfs_write_$proto" "$bytes" "$run"
        w=$(mbps "$bytes" $((t1 - t0)))
        nfs_umount && nfs_mount "$proto" || { echo "remount over $proto failed"; return 1; }
        sdpstats_snap
        t0=$(date +%s%N)
        timeout -k 5 600 dd if="$MNT/file.bin" of=/dev/null bs=1M status=none ||
            { echo "read over $proto failed"; nfs_umount; return 1; }
        t1=$(date +%s%N)
        sdpstats_moved "$STATS_CSV" "nfs_read_$proto" "$bytes" "$run"
        r=$(mbps "$bytes" $((t1 - t0)))
        got=$(sha256sum <"$MNT/file.bin" | cut -d' ' -f1)    # (from the page cache)
        rm -f "$MNT/file.bin"
        nfs_umount
        [[ $got == "$want" ]] || { echo "the file read over $proto differs from the one written"; return 1; }
        case $proto in
        sdp) (($(sdp_stat TxBytes) - sdp0 >= 2 * bytes)) || { echo "the file did not cross SDP"; return 1; } ;;
        rdma) (($(rxe_counter "$SDP_B_RDMA" rcvd_pkts) - rxe0 > bytes / 4096)) ||
                  { echo "the file did not cross $SDP_B_RDMA"; return 1; } ;;
        esac
        echo "nfs_write_$proto,$bytes,$run,$w,MB/s" >>"$CSV"
        echo "nfs_read_$proto,$bytes,$run,$r,MB/s" >>"$CSV"
        log "write $w MB/s, read $r MB/s"
        line+=("$proto write $w read $r")
    done
    echo "nfs run $run, $NFS_MIB MiB, MB/s: ${line[*]}"
}

setup() {
    local l=()
    mkdir -p "$WORK" "$MNT"
    sunrpc_load_patched >>"$LOG"
    modprobe -a nfsd nfsv4
    [[ " ${PROTOS[*]} " == *" rdma "* ]] && modprobe rpcrdma
    for p in "${PROTOS[@]}"; do
        case $p in
        rc) ;;
        rdma) l+=("rdma $RDMA_PORT") ;;
        *) l+=("$p 2049") ;;
        esac
    done
    nfs_server_start "$WORK/server" $((NFS_MIB * 2 + 16)) "${l[@]}" >>"$LOG"
    head -c $((NFS_MIB * 1048576)) /dev/urandom >"$SRC"
}

# shellcheck disable=SC2329  # (the EXIT trap runs it)
cleanup() {
    ! mountpoint -q "$MNT" 2>/dev/null || nfs_umount || true
    nfs_server_stop "$WORK/server"
    qperf_server_stop
    rm -rf "$WORK"
    udev_resume
}

if ((NFS_MIB == 0)); then
    ktap_plan 1
    ktap_skip nfs "SDP_BENCH_NFS_MIB=0: no NFS runs asked for"
    ktap_finish
fi
trap cleanup EXIT
udev_pause
# (in this shell, not a case's, for cleanup to stop it)
if [[ " ${PROTOS[*]} " == *" rc "* ]]; then
    qperf_server_start "$PORT" "$OUT/qperf-server.log" || log "qperf server did not listen on $PORT"
fi
ktap_plan $((RUNS + 1))
ktap_run nfs_setup setup
for ((run = 1; run <= RUNS; run++)); do ktap_run "nfs_run_$run" nfs_case "$run"; done
ktap_finish
