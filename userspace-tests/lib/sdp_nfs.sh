# shellcheck shell=bash
# sdp_nfs.sh: an NFS server on host B for the tests and the benchmark
# (source it after bed/hosts.env).  nfsd serves a tmpfs (the bed's 9p root
# cannot be exported) as the NFSv4 root to host A, with rpcbind and
# rpc.mountd beside it; the daemons' pids and logs are kept in a folder.
#   nfs_server_start DIR MIB LISTENER...   tmpfs of MIB MiB at DIR/export;
#       nfsd listening on each LISTENER ("tcp 2049", "sdp 2049",
#       "rdma 20049"); fails unless every one is in nfsd's portlist
#   nfs_server_stop DIR    stops whatever nfs_server_start started, whatever
#                          state a failed case left, and removes DIR
#   nfs_export DIR         the exported folder (host B's view of the files)
# The patched sunrpc.ko and nfs.ko are loaded before (lib/sunrpc_modules.sh).

NFSD_FS=/proc/fs/nfsd

nfs_export() { echo "$1/export"; }

nfs_server_start() {
    local dir=$1 mib=$2 l
    shift 2
    mkdir -p "$dir/export"
    mountpoint -q "$dir/export" || mount -t tmpfs -o "size=${mib}m" tmpfs "$dir/export"
    # (the daemons' output away from ktap_run's, which would wait for them)
    if ! pgrep -x rpcbind >/dev/null; then
        mkdir -p /run/rpcbind
        rpcbind -w -f >"$dir/rpcbind.log" 2>&1 &
        echo $! >"$dir/rpcbind.pid"
    fi
    for _ in $(seq 50); do [[ -S /run/rpcbind.sock ]] && break; sleep 0.1; done
    mountpoint -q "$NFSD_FS" || mount -t nfsd nfsd "$NFSD_FS"
    exportfs -o rw,no_root_squash,fsid=0,insecure,no_subtree_check "$SDP_A4/32:$dir/export"
    exportfs -o rw,no_root_squash,fsid=0,insecure,no_subtree_check "[$SDP_A6]/128:$dir/export"
    rpc.mountd -F >"$dir/mountd.log" 2>&1 &
    echo $! >"$dir/mountd.pid"
    echo 10 >"$NFSD_FS/nfsv4leasetime"
    echo 10 >"$NFSD_FS/nfsv4gracetime"
    for l in "$@"; do echo "$l" >"$NFSD_FS/portlist"; done
    echo 4 >"$NFSD_FS/threads"
    echo Y >"$NFSD_FS/v4_end_grace"    # no clients to wait for
    for l in "$@"; do
        grep -qx "$l" "$NFSD_FS/portlist" ||
            { cat "$NFSD_FS/portlist"; echo "nfsd does not listen on $l"; return 1; }
    done
}

# nfs_stop_daemon DIR NAME: kills the daemon whose pid nfs_server_start kept
nfs_stop_daemon() {
    local pid
    pid=$(cat "$1/$2.pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$1/$2.pid"
}

nfs_server_stop() {
    local dir=$1
    if mountpoint -q "$NFSD_FS"; then
        echo 0 >"$NFSD_FS/threads" 2>/dev/null || true
        umount "$NFSD_FS" || true
    fi
    nfs_stop_daemon "$dir" mountd
    exportfs -ua 2>/dev/null || true
    nfs_stop_daemon "$dir" rpcbind
    ! mountpoint -q "$dir/export" 2>/dev/null || umount "$dir/export" || true
    rm -rf "$dir"
}
