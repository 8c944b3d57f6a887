# shellcheck shell=bash
# sdp_nfs.sh: an NFS server on host B for the tests and the benchmark
# (source it after bed/hosts.env).  nfsd serves a tmpfs (the bed's 9p root
# cannot be exported) as the NFSv4 root to host A, with rpcbind and
# rpc.mountd beside it; the daemons' pids and logs are kept in a folder.
#   nfs_server_start DIR MIB LISTENER...   tmpfs of MIB MiB at DIR/export;
#       nfsd listening on each LISTENER ("tcp 2049", "sdp 2049",
#       "rdma 20049"); fails unless every one is in nfsd's portlist.  As
#       nfs-server.service does, rpc.nfsd opens the TCP listener, so that
#       the NFS program is registered with rpcbind (under its TCP netids:
#       the SDP twin, on the same port, registers nothing); the others are
#       added through the portlist.  Neither nfsd's nor lockd's grace
#       period holds the clients up (no one has state to reclaim).
#   nfs_server_stop DIR    stops whatever nfs_server_start started, whatever
#                          state a failed case left, and removes DIR
#   nfs_export DIR         the exported folder (host B's view of the files)
#   nfs_listen LISTENER... nfsd (running) listens on each LISTENER too
#   nfs_restart DIR LISTENER...  nfsd restarted: its threads stopped
#                          (which closes every listener and connection),
#                          then started on the LISTENERs as by
#                          nfs_server_start; NFSv4 clients get nfsd's grace
#                          period to reclaim their state
# The patched sunrpc.ko and nfs.ko are loaded before (lib/sunrpc_modules.sh).
# And what the client tests check on host A (and sdp_stat, in
# lib/sdp_resources.sh, which the users of this file source too):
#   sdp_hex ADDR           ADDR as /proc/net/sdp (and tcp, tcp6) print it
#   nfs_sdp_conns ADDR     ESTABLISHED SDP connections from host A to ADDR:2049
#   nfs_tcp_conns          ESTABLISHED TCP connections from or to port 2049
#   nfs_op_count MNT OP    how many OP calls (NFS operation) the mount at MNT made
#   file_sum FILE          FILE's SHA-256, in hex: a copy of the data, on either
#                          host, has the checksum of what was written

NFSD_FS=/proc/fs/nfsd

nfs_export() { echo "$1/export"; }

# rpcbind answering (started, its output in DIR, if none runs): nfsd and
# lockd register with it.  A socket file left by one that stopped says
# nothing, and one that a test before is stopping goes: then once more.
nfs_rpcbind_up() {
    local dir=$1 _
    for _ in 1 2; do
        # (the daemons' output away from ktap_run's, which would wait for them)
        if ! pgrep -x rpcbind >/dev/null; then
            mkdir -p /run/rpcbind
            rpcbind -w -f >"$dir/rpcbind.log" 2>&1 &
            echo $! >"$dir/rpcbind.pid"
        fi
        for _ in $(seq 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && return 0; sleep 0.1; done
    done
    echo "rpcbind does not answer"
    return 1
}

nfs_server_start() {
    local dir=$1 mib=$2 l
    shift 2
    mkdir -p "$dir/export"
    mountpoint -q "$dir/export" || mount -t tmpfs -o "size=${mib}m" tmpfs "$dir/export"
    nfs_rpcbind_up "$dir"
    mountpoint -q "$NFSD_FS" || mount -t nfsd nfsd "$NFSD_FS"
    exportfs -o rw,no_root_squash,fsid=0,insecure,no_subtree_check "$SDP_A4/32:$dir/export"
    exportfs -o rw,no_root_squash,fsid=0,insecure,no_subtree_check "[$SDP_A6]/128:$dir/export"
    rpc.mountd -F >"$dir/mountd.log" 2>&1 &
    echo $! >"$dir/mountd.pid"
    echo 10 >"$NFSD_FS/nfsv4leasetime"
    echo 10 >"$NFSD_FS/nfsv4gracetime"
    # lockd's grace (no delegation is given while it lasts): its shortest,
    # nlm_grace_period rounded up to nlm_timeout (lockd, a dependency of
    # nfs.ko, is loaded; its service starts with nfsd's threads)
    echo 3 >/proc/sys/fs/nfs/nlm_timeout
    echo 1 >/proc/sys/fs/nfs/nlm_grace_period
    nfsd_up "$dir" "$@"
    nfs_end_grace
}

# nfs_end_grace: the NFSv4 grace period over (no clients to wait for).  The
# laundromat ends it after the write; a kernel that tracks no clients (no
# nfsdcld, and Debian's 7.x has no legacy tracking) refuses the write with
# EBUSY, and ends it after nfsv4gracetime.
nfs_end_grace() {
    echo Y 2>/dev/null >"$NFSD_FS/v4_end_grace" || true
    for _ in $(seq 200); do
        [[ $(cat "$NFSD_FS/v4_end_grace") == Y ]] && return 0
        sleep 0.1
    done
    echo "the NFSv4 grace period did not end within 20 s"
    return 1
}

# nfsd_up DIR LISTENER...: nfsd's threads started, listening on LISTENERs
nfsd_up() {
    local dir=$1 l tcp='' rest=()
    shift
    # The largest rsize and wsize nfsd offers: 1 MiB, as on a server (it
    # scales with memory otherwise: 512 KiB in the bed's guest).
    echo 1048576 >"$NFSD_FS/max_block_size"
    for l in "$@"; do
        if [[ $l == "tcp "* && -z $tcp ]]; then tcp=${l#tcp }; else rest+=("$l"); fi
    done
    if [[ -n $tcp ]]; then
        rpc.nfsd -p "$tcp" -U 4 >>"$dir/nfsd.log" 2>&1 || { cat "$dir/nfsd.log"; return 1; }
        grep -qx "tcp $tcp" "$NFSD_FS/portlist" ||
            { cat "$dir/nfsd.log" "$NFSD_FS/portlist"; echo "rpc.nfsd did not listen on tcp $tcp"; return 1; }
        nfs_listen "${rest[@]}"
    else
        nfs_listen "$@"
        echo 4 >"$NFSD_FS/threads"
    fi
}

nfs_listen() {
    local l
    for l in "$@"; do echo "$l" >"$NFSD_FS/portlist"; done
    for l in "$@"; do
        grep -qx "$l" "$NFSD_FS/portlist" ||
            { cat "$NFSD_FS/portlist"; echo "nfsd does not listen on $l"; return 1; }
    done
}

nfs_restart() {
    local dir=$1
    shift
    echo 0 >"$NFSD_FS/threads"
    [[ -z $(cat "$NFSD_FS/portlist") ]] || { cat "$NFSD_FS/portlist"; echo "nfsd still listens"; return 1; }
    nfsd_up "$dir" "$@"
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

# An IPv4 address: one 32-bit word; IPv6: four; each printed in the
# (little-endian) host's byte order.
sdp_hex() {
    local a=$1 w g=() l=() r=()
    if [[ $a != *:* ]]; then
        IFS=. read -ra g <<<"$a"
        printf '%02X%02X%02X%02X\n' "${g[3]}" "${g[2]}" "${g[1]}" "${g[0]}"
        return
    fi
    if [[ $a == *::* ]]; then
        IFS=: read -ra l <<<"${a%%::*}"
        IFS=: read -ra r <<<"${a#*::}"
        g=("${l[@]}")
        for ((w = ${#l[@]} + ${#r[@]}; w < 8; w++)); do g+=(0); done
        g+=("${r[@]}")
    else
        IFS=: read -ra g <<<"$a"
    fi
    for ((w = 0; w < 8; w += 2)); do
        printf '%02X%02X%02X%02X' $((16#${g[w + 1]} & 255)) $((16#${g[w + 1]} >> 8)) \
            $((16#${g[w]} & 255)) $((16#${g[w]} >> 8))
    done
    echo
}

nfs_sdp_conns() {
    awk -v r="$(sdp_hex "$1"):0801" '$3 == r && $4 == "01"' /proc/net/sdp | wc -l
}

nfs_tcp_conns() { ss -Htn state established '( dport = :2049 or sport = :2049 )' | wc -l; }

nfs_op_count() {
    awk -v m="$1" -v op="$2:" '
        $1 == "device" { mine = ($5 == m) }
        mine && $1 == op { print $2; found = 1; exit }
        END { if (!found) print 0 }' /proc/self/mountstats
}

file_sum() { sha256sum <"$1" | cut -d' ' -f1; }
