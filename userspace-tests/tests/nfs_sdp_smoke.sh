#!/bin/bash
# nfs_sdp_smoke.sh: a first NFS round trip over SDP, with the patched
# sunrpc.ko and nfs.ko of sunrpc-patches (lib/sunrpc_modules.sh).  Host B
# (10.99.0.2) runs nfsd with TCP and SDP listeners on 2049, rpcbind and
# rpc.mountd beside it, and exports a tmpfs as the NFSv4 root (fsid=0: the
# bed's 9p root cannot be exported).  Host A mounts it with
# vers=4.2,proto=sdp (with mount -i: Debian's mount.nfs refuses the netid
# sdp, which its netconfig lacks), writes a file of random data, unmounts,
# mounts again and reads it back: what it wrote, what it read and what the
# server holds have one checksum.  The traffic went over SDP: the mount is
# an ESTABLISHED SDP connection to port 2049 in /proc/net/sdp, no TCP
# connection to 2049 exists, and SDP's byte counters grew by at least the
# file each way.  Then everything stops and unloads, leaving no SDP socket.
# Env: SDP_NFS_BYTES  size of the file (default 4 MiB)
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sunrpc_modules.sh"
. "$here/bed/hosts.env"
BYTES=${SDP_NFS_BYTES:-4194304}
WORK=/run/sdp-nfs-smoke         # /run is the guest's own tmpfs
EXPORT=$WORK/export MNT=$WORK/mnt SRC=$WORK/src.bin
NFSD=/proc/fs/nfsd
OPTS="vers=4.2,proto=sdp,addr=$SDP_B4,soft,timeo=300,retrans=2"
MODULES0=$(modules_now)

# SDP's counter NAME (/proc/net/sdpstats) in this namespace
sdp_stat() { awk -v n="$1" '$1 == n { print $2 }' /proc/net/sdpstats; }
# /proc/net/tcp's form of an IPv4 address and port
# shellcheck disable=SC2086  # (split at the dots)
hex4() { local IFS=.; set -- $1; printf '%02X%02X%02X%02X' "$4" "$3" "$2" "$1"; }

modules_load() {
    sunrpc_load_patched
    modprobe -a nfsd nfsv4
}

server_starts() {
    mkdir -p "$EXPORT" "$MNT"
    mountpoint -q "$EXPORT" || mount -t tmpfs -o size=64m tmpfs "$EXPORT"
    # (the daemons' output away from ktap_run's, which would wait for them)
    if ! pgrep -x rpcbind >/dev/null; then
        mkdir -p /run/rpcbind
        rpcbind -w -f >"$WORK/rpcbind.log" 2>&1 &
        echo $! >"$WORK/rpcbind.pid"
    fi
    for _ in $(seq 50); do [[ -S /run/rpcbind.sock ]] && break; sleep 0.1; done
    mountpoint -q "$NFSD" || mount -t nfsd nfsd "$NFSD"
    exportfs -o rw,no_root_squash,fsid=0,insecure,no_subtree_check "$SDP_A4/32:$EXPORT"
    rpc.mountd -F >"$WORK/mountd.log" 2>&1 &
    echo $! >"$WORK/mountd.pid"
    echo 10 >"$NFSD/nfsv4leasetime"
    echo 10 >"$NFSD/nfsv4gracetime"
    echo "tcp 2049" >"$NFSD/portlist"
    echo "sdp 2049" >"$NFSD/portlist"
    echo 4 >"$NFSD/threads"
    echo Y >"$NFSD/v4_end_grace"    # no clients to wait for
    cat "$NFSD/portlist"
    [[ $(grep -cx 'sdp 2049' "$NFSD/portlist") == 2 && $(grep -cx 'tcp 2049' "$NFSD/portlist") == 2 ]] ||
        { echo "nfsd does not listen on TCP and SDP 2049"; return 1; }
}

# the NFS connection: host A to host B's 2049, ESTABLISHED, in /proc/net/sdp
sdp_nfs_connections() { awk -v r="$(hex4 "$SDP_B4"):0801" '$3 == r && $4 == "01"' /proc/net/sdp | wc -l; }
tcp_nfs_connections() { ss -Htn state established '( dport = :2049 or sport = :2049 )' | wc -l; }

mount_nfs() {
    mount -i -t nfs4 -o "$OPTS" "$SDP_B4:/" "$MNT"
    grep " $MNT " /proc/mounts
    grep " $MNT " /proc/mounts | grep -q ',proto=sdp,' || { echo "the mount is not proto=sdp"; return 1; }
    cat /proc/net/sdp
    [[ $(sdp_nfs_connections) == 1 ]] || { echo "no SDP connection to $SDP_B4:2049"; return 1; }
    [[ $(tcp_nfs_connections) == 0 ]] || { ss -tn; echo "a TCP connection to 2049"; return 1; }
}

file_round_trip() {
    local tx0 rx0 tx rx want got server
    head -c "$BYTES" /dev/urandom >"$SRC"
    want=$(sha256sum <"$SRC" | cut -d' ' -f1)
    tx0=$(sdp_stat TxBytes) rx0=$(sdp_stat RxBytes)
    dd if="$SRC" of="$MNT/file.bin" bs=1M conv=fsync status=none
    umount "$MNT"                       # what it reads next comes from the server
    mount -i -t nfs4 -o "$OPTS" "$SDP_B4:/" "$MNT"
    got=$(sha256sum <"$MNT/file.bin" | cut -d' ' -f1)
    server=$(sha256sum <"$EXPORT/file.bin" | cut -d' ' -f1)
    tx=$(($(sdp_stat TxBytes) - tx0)) rx=$(($(sdp_stat RxBytes) - rx0))
    echo "wrote $want"; echo "read  $got"; echo "host B holds $server"
    echo "SDP payload bytes during the round trip: sent $tx, received $rx (file: $BYTES)"
    [[ $got == "$want" && $server == "$want" ]] || { echo "checksums differ"; return 1; }
    # both ends count here: the write's and the read's bytes, each sent and received once
    ((tx >= 2 * BYTES && rx >= 2 * BYTES)) || { echo "the file did not cross SDP both ways"; return 1; }
    [[ $(tcp_nfs_connections) == 0 ]] || { ss -tn; echo "a TCP connection to 2049"; return 1; }
}

# stop_daemon NAME: kills the daemon whose pid server_starts kept
stop_daemon() {
    local pid
    pid=$(cat "$WORK/$1.pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$WORK/$1.pid"
}

# Stops whatever runs, whatever state a failed case left (also on exit).
stop_all() {
    ! mountpoint -q "$MNT" 2>/dev/null || umount "$MNT" || umount -f "$MNT" || true
    if mountpoint -q "$NFSD"; then
        echo 0 >"$NFSD/threads" 2>/dev/null || true
        umount "$NFSD" || true
    fi
    stop_daemon mountd
    exportfs -ua 2>/dev/null || true
    stop_daemon rpcbind
    ! mountpoint -q "$EXPORT" 2>/dev/null || umount "$EXPORT" || true
    rm -rf "$WORK"
}
trap stop_all EXIT

stops_and_unloads() {
    stop_all
    for _ in $(seq 50); do    # closed connections are torn down from a work item
        grep -q ':0801 ' /proc/net/sdp || break
        sleep 0.2
    done
    ! grep -q ':0801 ' /proc/net/sdp || { cat /proc/net/sdp; echo "SDP sockets on 2049 left"; return 1; }
    modules_unload_since "$MODULES0"
    ! module_loaded sunrpc || { echo "sunrpc is still loaded"; return 1; }
}

ktap_plan 5
ktap_run modules_load modules_load
ktap_run server_starts server_starts
ktap_run mount_nfs mount_nfs
ktap_run file_round_trip file_round_trip
ktap_run stops_and_unloads stops_and_unloads
ktap_finish
