#!/bin/bash
# nfs_faults.sh: NFS over SDP when things go wrong, with the patched
# sunrpc.ko and nfs.ko (lib/sunrpc_modules.sh) and nfsd on host B
# (lib/sdp_nfs.sh).  Every wait is bounded; vm-run fails the run on any
# kernel warning or oops.
#  - mount proto=sdp while nfsd listens on TCP only: the mount fails, within
#    a bound, with ECONNREFUSED (the RDMA CM's reject);
#  - mount proto=sdp to an address that no RDMA device reaches (on a dummy
#    interface made for the test): the mount fails, within a bound, with
#    ENETUNREACH;
#  - host B's rxe device deleted (`rdma link delete`) under a write on a
#    soft mount: the write fails with EIO once the soft timeouts run out;
#    the bed restored (bed/net-setup), a new mount works;
#  - the same on a hard mount: the write waits (the client retries) until
#    the bed is restored, then completes, the file intact;
#  - nfsd restarted (threads 0, then the listeners again) on a hard mount,
#    between writes and during one: each time the client connects again
#    over SDP (and never over TCP) and establishes its client ID anew
#    (EXCHANGE_ID), and the writes complete; the files read back (O_DIRECT,
#    so from the server) and held by host B have the checksums of the data
#    written.
# Then everything stops and unloads, leaving no SDP socket.
# Env: SDP_NFS_FAULT_MIB  the file written under the faults (default 32)
#      SDP_NFS_BYTES      the files of the checks after (default 4 MiB)
# shellcheck disable=SC2317,SC2329  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sunrpc_modules.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_nfs.sh"
. "$here/lib/sdp_resources.sh"
FAULT_MIB=${SDP_NFS_FAULT_MIB:-32}
BYTES=${SDP_NFS_BYTES:-4194304}
WORK=/run/sdp-nfs-faults        # /run is the guest's own tmpfs
SERVER=$WORK/server MNT=$WORK/mnt
EXPORT=$(nfs_export "$SERVER")
BOUND=60                        # what a failing mount may take
DUMMY=sdpnodev0 NODEV_NET=10.99.9 # an interface and a network no RDMA device serves
MODULES0=$(modules_now)
SOCKETS0=$(sdp_socks)

# nfs_mount ADDR OPTS: mounts host B's root at MNT over SDP
nfs_mount() {
    timeout -k 5 120 mount -i -t nfs4 -o "$2,addr=$1" "$1:/" "$MNT"
    [[ $(nfs_sdp_conns "$1") == 1 && $(nfs_tcp_conns) == 0 ]] ||
        { cat /proc/net/sdp; echo "not one SDP connection to $1:2049 (and no TCP)"; return 1; }
}

# direct_sum FILE: FILE's SHA-256 read with O_DIRECT, so from the server,
# not from the client's page cache
direct_sum() { timeout -k 5 120 dd if="$1" bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1; }
nfs_umount() { timeout -k 5 120 umount "$MNT" || timeout -k 5 60 umount -f "$MNT" || umount -l "$MNT"; }

# mount_fails ADDR ERRNO: mount(2) of nfs4 proto=sdp to ADDR fails within
# BOUND seconds with ERRNO (a name: ECONNREFUSED).  The system call, not
# mount(8): util-linux 2.39+ mounts with fsconfig() and prints the
# kernel's message ("NFS4: Couldn't follow remote path") instead of errno.
mount_fails() {
    local out rc=0 t0=$SECONDS
    out=$(timeout -k 5 "$BOUND" python3 - "$1" "$MNT" 2>&1 <<'PY'
import ctypes, errno, sys
addr, mnt = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
ret = libc.mount(f"{addr}:/".encode(), mnt.encode(), b"nfs4", 0,
                 f"vers=4.2,proto=sdp,addr={addr}".encode())
print("mounted" if ret == 0 else errno.errorcode[ctypes.get_errno()])
PY
) || rc=$?
    echo "mount(2) proto=sdp to $1: $out after $((SECONDS - t0)) s (exit status $rc)"
    if [[ $out == mounted ]]; then umount "$MNT"; echo "the mount succeeded"; return 1; fi
    ((rc != 124 && rc != 137)) || { echo "the mount did not fail within $BOUND s"; return 1; }
    ((rc == 0)) || { echo "python3: exit status $rc"; return 1; }
    [[ $out == "$2" ]] || { echo "want $2"; return 1; }
    ! mountpoint -q "$MNT" || { echo "mounted all the same"; return 1; }
}

# round_trip ADDR OPTS NAME: a file written on a new mount, read back after
# a remount and held by host B with its checksum
round_trip() {
    local want
    head -c "$BYTES" /dev/urandom >"$WORK/src"
    want=$(file_sum "$WORK/src")
    nfs_mount "$1" "$2"
    dd if="$WORK/src" of="$MNT/$3" bs=1M conv=fsync status=none
    nfs_umount
    nfs_mount "$1" "$2"
    [[ $(file_sum "$MNT/$3") == "$want" && $(file_sum "$EXPORT/$3") == "$want" ]] ||
        { echo "the file read back differs"; return 1; }
    rm "$MNT/$3"
    nfs_umount
    echo "a new mount works: $BYTES bytes written, read back after a remount"
}

# grows_on_b FILE BYTES: waits (bounded) until host B holds BYTES of FILE
grows_on_b() {
    for _ in $(seq 300); do
        (($(stat -c %s "$EXPORT/$1" 2>/dev/null || echo 0) >= $2)) && return 0
        sleep 0.1
    done
    echo "host B did not get $2 bytes of $1"; return 1
}

modules_load() {
    sunrpc_load_patched
    modprobe -a nfsd nfsv4 dummy
}

server_starts() {
    mkdir -p "$WORK" "$MNT"
    nfs_server_start "$SERVER" $((2 * FAULT_MIB + 2 * BYTES / 1048576 + 16)) "tcp 2049"
    cat "$NFSD_FS/portlist"
}

# nfsd listens on TCP 2049 only: SDP's connect is refused
no_sdp_listener() {
    ! grep -q '^sdp ' "$NFSD_FS/portlist" || { echo "nfsd listens on sdp"; return 1; }
    mount_fails "$SDP_B4" ECONNREFUSED
}

# an address routed through an interface without an RDMA device
no_rdma_device() {
    ip link add "$DUMMY" type dummy
    ip addr add "$NODEV_NET.1/24" dev "$DUMMY"
    ip link set "$DUMMY" up
    rdma link show | grep -qw "$DUMMY" && { echo "$DUMMY has an RDMA device"; return 1; }
    mount_fails "$NODEV_NET.2" ENETUNREACH
    ip link del "$DUMMY"
}

# write_then_delete_device FILE OPTS: $WORK/src written to FILE on a new
# mount with OPTS, in the background (dd's pid in the caller's pid, its
# errors in $WORK/dd.err); once host B holds 1 MiB of it, host B's rxe
# device is deleted, before the write is over
write_then_delete_device() {
    local n
    nfs_mount "$SDP_B4" "$2"
    # O_DIRECT: every write goes out as it is made, so one is in flight
    timeout -k 5 300 dd if="$WORK/src" of="$MNT/$1" bs=1M oflag=direct status=none 2>"$WORK/dd.err" &
    pid=$!
    grows_on_b "$1" 1048576 || { kill "$pid"; return 1; }
    timeout -k 5 60 rdma link delete "$SDP_B_RDMA"
    n=$(stat -c %s "$EXPORT/$1")
    echo "$SDP_B_RDMA deleted with $n bytes on host B"
    ((n < FAULT_MIB * 1048576)) || { echo "the write was over before"; return 1; }
}

# host B's rxe device deleted during a write on a soft mount
device_removed() {
    local pid rc=0 err
    nfs_listen "sdp 2049"
    head -c $((FAULT_MIB * 1048576)) /dev/urandom >"$WORK/src"
    write_then_delete_device f "vers=4.2,proto=sdp,soft,timeo=50,retrans=1"
    wait "$pid" || rc=$?
    err=$(cat "$WORK/dd.err")
    echo "dd: exit status $rc: $err"
    ((rc != 0)) || { echo "the write did not fail"; return 1; }
    ((rc != 124 && rc != 137)) || { echo "the write did not end within its time limit"; return 1; }
    grep -q "Input/output error" <<<"$err" || { echo "want EIO (a soft mount's timeout)"; return 1; }
    "$here/bed/net-setup" >"$WORK/net-setup.log" 2>&1 || { cat "$WORK/net-setup.log"; echo "net-setup failed"; return 1; }
    rdma link show
    nfs_umount
    grep -qx 'sdp 2049' "$NFSD_FS/portlist" || { cat "$NFSD_FS/portlist"; echo "nfsd lost its SDP listener"; return 1; }
    round_trip "$SDP_B4" "vers=4.2,proto=sdp,soft,timeo=100,retrans=2" after-removal.bin
    rm "$EXPORT/f"
}

# recovered OPENS0 EXID0: since SDP's ActiveOpens were OPENS0 and the
# mount's EXCHANGE_ID calls EXID0, the client connected again over SDP,
# only over SDP, and established its client ID anew
recovered() {
    local opens=$(($(sdp_stat ActiveOpens) - $1)) exid=$(($(nfs_op_count "$MNT" EXCHANGE_ID) - $2))
    echo "since the restart: $opens SDP connections, $exid EXCHANGE_ID calls"
    ((opens >= 1 && exid >= 1)) || { echo "the client did not recover over SDP"; return 1; }
    [[ $(nfs_sdp_conns "$SDP_B4") == 1 && $(nfs_tcp_conns) == 0 ]] ||
        { cat /proc/net/sdp; echo "not one SDP connection (and no TCP)"; return 1; }
}

# host B's rxe device deleted during a write on a hard mount: the client
# retries until the device is back, then the write completes
device_removed_hard() {
    local pid rc=0 want
    head -c $((FAULT_MIB * 1048576)) /dev/urandom >"$WORK/src"
    want=$(file_sum "$WORK/src")
    write_then_delete_device g "vers=4.2,proto=sdp,hard,timeo=50,retrans=1"
    sleep 10    # past a soft mount's timeouts (timeo=50,retrans=1)
    kill -0 "$pid" 2>/dev/null ||
        { wait "$pid" || rc=$?; cat "$WORK/dd.err"; echo "the write ended (exit status $rc) without the device"; return 1; }
    echo "the write still waits after 10 s, with $(stat -c %s "$EXPORT/g") bytes on host B"
    "$here/bed/net-setup" >"$WORK/net-setup.log" 2>&1 || { cat "$WORK/net-setup.log"; echo "net-setup failed"; return 1; }
    wait "$pid" || rc=$?
    ((rc == 0)) || { cat "$WORK/dd.err"; echo "the write failed: exit status $rc"; return 1; }
    [[ $(direct_sum "$MNT/g") == "$want" &&
        $(file_sum "$EXPORT/g") == "$want" ]] || { echo "the file differs"; return 1; }
    echo "the write completed once the device was back; the file is intact on host A (O_DIRECT) and host B"
    [[ $(nfs_sdp_conns "$SDP_B4") == 1 && $(nfs_tcp_conns) == 0 ]] ||
        { cat /proc/net/sdp; echo "not one SDP connection (and no TCP)"; return 1; }
    rm "$MNT/g"
    nfs_umount
}

# nfsd restarted under a hard mount, between writes and during one
nfsd_restarted() {
    local o="vers=4.2,proto=sdp,hard,timeo=100,retrans=2" a b pid rc=0 n opens0 exid0
    head -c "$BYTES" /dev/urandom >"$WORK/a"
    head -c $((FAULT_MIB * 1048576)) /dev/urandom >"$WORK/b"
    a=$(file_sum "$WORK/a") b=$(file_sum "$WORK/b")
    nfs_mount "$SDP_B4" "$o"
    dd if="$WORK/a" of="$MNT/a" bs=1M conv=fsync status=none
    opens0=$(sdp_stat ActiveOpens) exid0=$(nfs_op_count "$MNT" EXCHANGE_ID)
    nfs_restart "$SERVER" "tcp 2049" "sdp 2049"
    echo "nfsd restarted between writes"
    [[ $(direct_sum "$MNT/a") == "$a" ]] ||
        { echo "the file written before the restart differs"; return 1; }
    recovered "$opens0" "$exid0"

    timeout -k 5 300 dd if="$WORK/b" of="$MNT/b" bs=1M oflag=direct status=none &
    pid=$!
    grows_on_b b 1048576 || { kill "$pid"; return 1; }
    opens0=$(sdp_stat ActiveOpens) exid0=$(nfs_op_count "$MNT" EXCHANGE_ID)
    nfs_restart "$SERVER" "tcp 2049" "sdp 2049"
    n=$(stat -c %s "$EXPORT/b")
    echo "nfsd restarted with $n bytes of the write on host B"
    ((n < FAULT_MIB * 1048576)) || { echo "the write was over before"; return 1; }
    wait "$pid" || rc=$?
    ((rc == 0)) || { echo "the write across the restart failed: exit status $rc"; return 1; }
    recovered "$opens0" "$exid0"
    [[ $(direct_sum "$MNT/b") == "$b" ]] ||
        { echo "the file written across the restart differs"; return 1; }
    [[ $(file_sum "$EXPORT/a") == "$a" && $(file_sum "$EXPORT/b") == "$b" ]] || { echo "host B holds other data"; return 1; }
    echo "both files intact, on host A (O_DIRECT) and host B"
    rm "$MNT/a" "$MNT/b"
    nfs_umount
}

stop_all() {
    ! mountpoint -q "$MNT" 2>/dev/null || nfs_umount || true
    ! ip link show "$DUMMY" >/dev/null 2>&1 || ip link del "$DUMMY"
    # a case that failed half-way may have left the bed without rxeB
    rdma link show "$SDP_B_RDMA/1" >/dev/null 2>&1 || "$here/bed/net-setup" >/dev/null 2>&1 || true
    nfs_server_stop "$SERVER"
    rm -rf "$WORK"
}
trap stop_all EXIT

stops_and_unloads() {
    stop_all
    sdp_wait_socks "$SOCKETS0"
    modules_unload_since "$MODULES0"
    ! module_loaded sunrpc || { echo "sunrpc is still loaded"; return 1; }
}

ktap_plan 8
ktap_run modules_load modules_load
ktap_run server_starts server_starts
ktap_run no_sdp_listener no_sdp_listener
ktap_run no_rdma_device no_rdma_device
ktap_run device_removed device_removed
ktap_run device_removed_hard device_removed_hard
ktap_run nfsd_restarted nfsd_restarted
ktap_run stops_and_unloads stops_and_unloads
ktap_finish
