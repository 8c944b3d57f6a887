#!/bin/bash
# apps_ganesha.sh: NFS-Ganesha, a user-space NFS server on its own RPC
# library, unmodified, on SDP through sdp_run (lib/sdp_apps.sh), serving the
# kernel's NFS client (the patched sunrpc.ko and nfs.ko, lib/sunrpc_modules.sh)
# mounted with proto=sdp: kernel and user-space RPC over SDP.  Ganesha
# exports an ext4 file system on host B (FSAL VFS, NFSv4 only, no grace
# period; a loop device, as ganesha 6's VFS does not export a tmpfs); host A
# writes a file through the mount, and host B's copy and host A's read after
# a remount (from the server) are the file, byte for byte.
#  - sdp: ganesha listens on SDP only; the vers=4.1,proto=sdp mount is one
#    SDP connection to 2049 and no TCP connection exists.
#  - ganesha under a `both` rule: a proto=tcp mount (the kernel's plain TCP
#    client) is accepted over TCP (FallbackAccepts +1), then a proto=sdp
#    mount of the same server is SDP; the file written over the first reads
#    back intact over the second.
# Env: SDP_APPS_NFS_BYTES  the file's size (default 8 MiB)
# shellcheck disable=SC2317,SC2329  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sunrpc_modules.sh"
. "$here/lib/sdp_resources.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_apps.sh"
. "$here/lib/sdp_nfs.sh"
BYTES=${SDP_APPS_NFS_BYTES:-8388608}
GANESHA=$APPS_WORK/ganesha EXPORT=$APPS_WORK/export MNT=$APPS_WORK/mnt
DATA=$APPS_WORK/nfs.data
OPTS="vers=4.1,soft,timeo=300,retrans=2,addr=$SDP_B4"
MODULES0=$(modules_now)

# server RULE PATH: ganesha.nfsd on host B under RULE, listening on PATH
server() {
    app_start server "$1" ganesha.nfsd -F -L "$GANESHA/ganesha.log" \
        -f "$GANESHA/ganesha.conf" -p "$GANESHA/ganesha.pid"
    app_listens 2049 "$2"
}

# mount_over PROTO: host A mounts the export with proto=PROTO; the mount is
# one connection to 2049 of that kind, and none of the other
mount_over() {
    local sdp=0 tcp=0
    timeout -k 5 120 mount -i -t nfs4 -o "$OPTS,proto=$1" "$SDP_B4:/export" "$MNT" ||
        { echo "--- ganesha's log:"; tail -n 30 "$GANESHA/ganesha.log"; return 1; }
    grep " $MNT " /proc/mounts
    if [[ $1 == sdp ]]; then sdp=1; else tcp=2; fi    # (TCP: both ends in ss)
    [[ $(nfs_sdp_conns "$SDP_B4") == "$sdp" && $(nfs_tcp_conns) == "$tcp" ]] ||
        { cat /proc/net/sdp; ss -tn; echo "not one $1 connection to 2049"; return 1; }
}

unmount() {
    timeout -k 5 120 umount "$MNT"
    for _ in $(seq 50); do
        [[ $(nfs_sdp_conns "$SDP_B4") == 0 && $(nfs_tcp_conns) == 0 ]] && return 0
        sleep 0.2
    done
    cat /proc/net/sdp; ss -tn; echo "the connection to 2049 outlived the mount"; return 1
}

# read_back NAME: host A reads NAME, intact, after a remount over PROTO
read_back() {
    unmount
    mount_over "$2"
    same_file "$DATA" "$MNT/$1"
}

setup() {
    sunrpc_load_patched
    modprobe -a nfsv4
    mkdir -p "$GANESHA" "$EXPORT" "$MNT" /run/rpcbind
    if ! mountpoint -q "$EXPORT"; then
        truncate -s $((BYTES * 3 / 1048576 + 32))M "$APPS_WORK/export.img"
        mkfs.ext4 -q -F "$APPS_WORK/export.img"
        modprobe loop    # (the bed has no /dev/loop-control to load it on demand)
        mount -o loop "$APPS_WORK/export.img" "$EXPORT"
    fi
    head -c "$BYTES" /dev/urandom >"$DATA"
    # ganesha registers its programs with rpcbind (which outlives this
    # case: not an app_start)
    if ! pgrep -x rpcbind >/dev/null; then
        rpcbind -w -f >"$GANESHA/rpcbind.log" 2>&1 &
        echo $! >"$GANESHA/rpcbind.pid"
    fi
    cat >"$GANESHA/ganesha.conf" <<EOC
NFS_CORE_PARAM {
    Protocols = 4;
    Bind_addr = $SDP_B4;
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
}
NFSV4 { Graceless = true; Lease_Lifetime = 10; }
EXPORT {
    Export_Id = 1;
    Path = $EXPORT;
    Pseudo = /export;
    Protocols = 4;
    Access_Type = RW;
    Squash = No_Root_Squash;
    SecType = sys;
    FSAL { Name = VFS; }
}
LOG { Default_Log_Level = EVENT; }
EOC
}

sdp_mount() {
    apps_stats_mark
    server "use sdp server ganesha.nfsd $SDP_B4:2049" sdp
    mount_over sdp
    cp "$DATA" "$MNT/over-sdp"
    sync
    same_file "$DATA" "$EXPORT/over-sdp"
    read_back over-sdp sdp
    unmount
    app_stop server
    moved_by ActiveOpens 2
    moved_by PassiveOpens 2
    moved_at_least RxBytes $((2 * BYTES))
}

both_server() {
    apps_stats_mark
    server "use both server ganesha.nfsd *:2049" both
    mount_over tcp
    cp "$DATA" "$MNT/over-tcp"
    sync
    same_file "$DATA" "$EXPORT/over-tcp"
    moved_by FallbackAccepts 1
    read_back over-tcp sdp
    unmount
    app_stop server
    moved_by FallbackAccepts 1
    moved_by PassiveOpens 1
}

stop_all() {
    ! mountpoint -q "$MNT" 2>/dev/null || umount "$MNT" || umount -f -l "$MNT" || true
    app_stop_all
    nfs_stop_daemon "$GANESHA" rpcbind
    ! mountpoint -q "$EXPORT" 2>/dev/null || umount "$EXPORT" || true
    rm -rf "$APPS_WORK"
}
trap stop_all EXIT

stops_and_unloads() {
    stop_all
    sdp_wait_socks "$APPS_SOCKETS0"
    modules_unload_since "$MODULES0"
    ! module_loaded sunrpc || { echo "sunrpc is still loaded"; return 1; }
}

ktap_plan 4
ktap_run setup setup
ktap_run sdp_mount sdp_mount
ktap_run both_server both_server
ktap_run stops_and_unloads stops_and_unloads
ktap_finish
