#!/bin/bash
# demo.sh: the main job, run in the guest by `make demo`: SDP connections
# between the bed's two hosts, what they look like to the system, and how
# long they take to set up; unmodified qperf (sdp_bw, sdp_lat) beside its
# RC verbs tests; then NFS over SDP: host A mounts host B's
# export with proto=sdp, copies a file there and back, and checks it; and
# ONC RPC from user space to the kernel over SDP: libtirpc's client on
# host A (with libtirpc-sdp.so) calls a kernel RPC server on host B.
# Prints as it goes; exits non-zero on failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/bed/hosts.env"
. "$here/lib/sdp_hold.sh"
. "$here/lib/sunrpc_modules.sh"
. "$here/lib/sdp_nfs.sh"
. "$here/lib/sdp_resources.sh"
. "$here/lib/sdp_rpc.sh"
. "$here/lib/sdp_qperf.sh"
COUNT=${SDP_DEMO_CONNECTIONS:-50}
NFS_MIB=${SDP_DEMO_NFS_MIB:-16}
RPC_MIB=${SDP_DEMO_RPC_MIB:-8}
WORK=/run/sdp-demo              # the guest's own tmpfs
top=$(cd "$here/.." && pwd)
KRPC=$SDP_BUILD/kmod-rpc-bw/$(uname -r) RPC_CLIENT=$SDP_BUILD/rpc/rpc_bw_client
KPORT=20050                     # the kernel RPC server's port, tcp and sdp
QPERF_PORT=19767                # qperf's control port

step() { printf '\n== %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "The bed: host A ($SDP_A4, $SDP_A6) and host B ($SDP_B4, $SDP_B6), one Soft-RoCE device each"
run rdma link show
step "sdp.ko, installed by DKMS and loaded with modprobe"
run modinfo -F filename sdp
printf 'version %s, alias %s\n' "$(modinfo -F version sdp)" "$(modinfo -F alias sdp)"

step "A listener on host B and a client on host A, connected over RDMA (IPv4)"
sdp_hold_start -p 18515
echo "sdp_pair: listener on $SDP_B4:18515, client connected from $SDP_A4, accepted"
run cat /proc/net/sdp
echo "(states: 0A listen, 01 established; one line per socket, like /proc/net/tcp)"
run rdma resource show cm_id
sdp_hold_stop

step "Connection set-up time, $COUNT connections each way (connect + accept + close)"
run "$SDP_PAIR" -n "$COUNT"
run "$SDP_PAIR" -6 -n "$COUNT"

step "Data over SDP: 8 MiB each way, checked with FNV-1a at the receiver"
run "$SDP_PAIR" -s 8388608
run "$SDP_PAIR" -6 -s 8388608
echo "(Soft-RoCE under TCG: the rate is the emulator's; make bench gives ratios)"

step "Unmodified qperf over SDP (socket(27, ...)), beside qperf over RC verbs on the same devices"
qperf_server_start "$QPERF_PORT" /dev/null || { echo "qperf's server did not listen"; exit 1; }
qperf_server=$QPERF_SERVER
for t in "-m 64K sdp_bw" "-cm1 -m 64K rc_bw" "-m 64 sdp_lat" "-cm1 -m 64 rc_lat"; do
    # shellcheck disable=SC2086  # (the test and its options, split)
    run timeout -k 5 60 qperf "$SDP_B4" --listen_port "$QPERF_PORT" -t 2 $t
done
kill "$qperf_server"
wait "$qperf_server" 2>/dev/null || true
echo "(rc_* need -cm1: qperf reaches a RoCE device only through the RDMA CM)"

step "NFS over SDP: nfsd on host B listens on TCP and SDP 2049"
mkdir -p "$WORK/mnt"
# shellcheck disable=SC2329  # (the EXIT trap runs it)
demo_stop() {
    ! grep -q '^sdp_krpc_bw_server ' /proc/modules || rmmod sdp_krpc_bw_server
    sdp_rpc_cleanup
    ! mountpoint -q "$WORK/mnt" || umount "$WORK/mnt" || umount -f -l "$WORK/mnt"
    nfs_server_stop "$WORK/server"
    rm -rf "$WORK"
}
trap demo_stop EXIT
run modprobe -a nfsd nfsv4    # the patched sunrpc.ko and nfs.ko, installed by DKMS
for m in sunrpc nfs; do
    sunrpc_patched "$m" || { echo "$m.ko is not the patched one: make install"; exit 1; }
    printf '%s %s (%s)\n' "$m" "$(cat /sys/module/$m/version)" "$(modinfo -F filename "$m")"
done
nfs_server_start "$WORK/server" $((NFS_MIB + 16)) "tcp 2049" "sdp 2049"
run cat "$NFSD_FS/portlist"

step "Host A mounts it with proto=sdp and copies $NFS_MIB MiB there and back"
head -c $((NFS_MIB * 1048576)) /dev/urandom >"$WORK/file.bin"
opts="vers=4.2,proto=sdp,addr=$SDP_B4,clientaddr=$SDP_A4"
# (-i: Debian's mount.nfs checks the netid against its netconfig, which lacks sdp)
run mount -i -t nfs4 -o "$opts" "$SDP_B4:/" "$WORK/mnt"
grep " $WORK/mnt " /proc/mounts
tx0=$(sdp_stat TxBytes)
run cp "$WORK/file.bin" "$WORK/mnt/file.bin"
run sync "$WORK/mnt/file.bin"
run umount "$WORK/mnt"    # so what is read next comes from the server
run mount -i -t nfs4 -o "$opts" "$SDP_B4:/" "$WORK/mnt"
run cp "$WORK/mnt/file.bin" "$WORK/back.bin"
echo "the NFS connection, host A to host B:2049 (0801), and nfsd's listeners:"
grep -E ':0801 ' /proc/net/sdp
sha256sum "$WORK/file.bin" "$WORK/mnt/file.bin" "$(nfs_export "$WORK/server")/file.bin" "$WORK/back.bin"
[[ $(file_sum "$WORK/file.bin") == "$(file_sum "$WORK/back.bin")" ]] ||
    { echo "the file came back different"; exit 1; }
echo "SDP carried $(($(sdp_stat TxBytes) - tx0)) payload bytes" \
     "during the copy (both hosts' sends; the file is $((NFS_MIB * 1048576)) bytes)"
run umount "$WORK/mnt"

step "ONC RPC over SDP, user space to the kernel: a kernel RPC server on host B"
sdp_rpc_netconfig "$WORK"
sdp_rpc_rpcbind
run insmod "$KRPC/sdp_krpc_bw_server.ko" port=$KPORT
echo "(the RPC bandwidth program $((0x20005344)) v1, on TCP and SDP port $KPORT;"
echo " rpcbind knows the TCP twin, and the SDP listener shares its port)"
rpcinfo -p localhost | grep -E "^ +$((0x20005344)) " || true

step "Host A calls it with libtirpc over netid sdp: $RPC_MIB MiB of WRITE and READ calls"
echo "(LD_PRELOAD=libtirpc-sdp.so: Debian's own libtirpc, with the netids sdp and sdp6)"
LD_PRELOAD=$SDP_RPC_PRELOAD run "$RPC_CLIENT" -h "$SDP_B4" -n sdp -b 65536 -c 2 \
    -t $((RPC_MIB * 1048576)) -r -s
echo "the kernel server's count: $(cat /sys/kernel/debug/sdp_krpc_bw_server/stats)"
run rmmod sdp_krpc_bw_server

step "What SDP counted (/proc/net/sdpstats, non-zero lines)"
grep -v " 0$" /proc/net/sdpstats

step "What the kernel said"
dmesg | grep -E "sdp|rdma_rxe" | tail -n 5

step "Done: SDP streams between the two hosts over IPv4 and IPv6, NFS over SDP, and user-to-kernel RPC over SDP"
