#!/bin/bash
# nfs_sdp.sh: NFS over SDP, with the patched sunrpc.ko and nfs.ko of
# sunrpc-patches (lib/sunrpc_modules.sh).  Host B (lib/sdp_nfs.sh) runs
# nfsd listening on TCP and SDP port 2049 (IPv4 and IPv6), rpcbind and
# rpc.mountd beside it, and exports a tmpfs as the NFSv4 root.
#  - A user-space NULL call to nfsd's NFS program (100003 v4) over netid
#    sdp, with Debian's rpcinfo and the interposer: once through rpcbind's
#    look-up, once to nfsd's universal address.
#  - Host A mounts it with vers=4.2,proto=sdp, vers=4.1,proto=sdp and
#    vers=4.2,proto=sdp6 to fd99::2 in turn (mount -i: Debian's mount.nfs
#    refuses the netids, which its netconfig lacks), and on each one
#    creates, writes, fsyncs (host B holds the data while the file is still
#    open), reads back after a remount (so from the server), renames and
#    deletes; every copy has the checksum of the data written.
#  - On the 4.2 mount, a large file's round trip and many small files
#    (each one's checksum checked, on host A after a remount and on B).
#  - On the 4.1 mount, the session's backchannel runs over the SDP
#    connection: nfsd's callback state is UP, a read delegation is given,
#    and a write on host B recalls it (CB_RECALL to the client,
#    DELEGRETURN back) before the write goes on.
# The traffic went over SDP each time: the mount is one ESTABLISHED SDP
# connection to port 2049 in /proc/net/sdp, no TCP connection to 2049
# exists, and SDP's byte counters grew by at least the data moved.  Then
# everything stops and unloads, leaving no SDP socket.
# Env: SDP_NFS_BYTES        the file of every mount (default 4 MiB)
#      SDP_NFS_BIG_MIB      the large file (default 16 MiB: sixteen WRITEs
#                           of the mount's 1 MiB wsize)
#      SDP_NFS_SMALL_FILES  how many small files (default 250; with 64 MiB
#                           and 1000, this test took 30 s more on each
#                           kernel of make check)
#      SDP_NFS_SMALL_BYTES  the size of each (default 1024)
# shellcheck disable=SC2317,SC2329  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sunrpc_modules.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_nfs.sh"
. "$here/lib/sdp_resources.sh"
. "$here/lib/sdp_rpc.sh"
BYTES=${SDP_NFS_BYTES:-4194304}
BIG_MIB=${SDP_NFS_BIG_MIB:-16}
SMALL_FILES=${SDP_NFS_SMALL_FILES:-250}
SMALL_BYTES=${SDP_NFS_SMALL_BYTES:-1024}
WORK=/run/sdp-nfs               # /run is the guest's own tmpfs
SERVER=$WORK/server MNT=$WORK/mnt SRC=$WORK/src
EXPORT=$(nfs_export "$SERVER")
# soft, with a bound: a broken transport fails the case instead of hanging it
COMMON="soft,timeo=300,retrans=2"
T=120                           # the time limit of one mount or umount
MODULES0=$(modules_now)
SOCKETS0=$(sdp_socks)

# nfs_mount ADDR OPTS: mounts host B's root at MNT and checks the mount is
# one SDP connection to ADDR:2049 and that no TCP connection to 2049 exists
nfs_mount() {
    local spec=$1:/
    [[ $1 != *:* ]] || spec="[$1]:/"
    timeout -k 5 "$T" mount -i -t nfs4 -o "$2,addr=$1" "$spec" "$MNT"
    grep " $MNT " /proc/mounts
    grep " $MNT " /proc/mounts | grep -qE ",proto=sdp6?," || { echo "the mount is not over sdp"; return 1; }
    [[ $(nfs_sdp_conns "$1") == 1 ]] || { cat /proc/net/sdp; echo "not one SDP connection to $1:2049"; return 1; }
    [[ $(nfs_tcp_conns) == 0 ]] || { ss -tn; echo "a TCP connection to 2049"; return 1; }
}

# nfs_umount ADDR: unmounts, and waits for the mount's SDP connection to go
nfs_umount() {
    timeout -k 5 "$T" umount "$MNT"
    for _ in $(seq 50); do
        [[ $(nfs_sdp_conns "$1") == 0 ]] && return 0
        sleep 0.2
    done
    cat /proc/net/sdp; echo "the SDP connection to $1:2049 outlived the mount"; return 1
}

# sdp_moved TX0 RX0 BYTES: SDP sent and received at least BYTES since the
# counters were TX0 and RX0 (both ends count here), and no TCP went to 2049
sdp_moved() {
    local tx=$(($(sdp_stat TxBytes) - $1)) rx=$(($(sdp_stat RxBytes) - $2))
    echo "SDP payload bytes: sent $tx, received $rx (data: $3)"
    ((tx >= $3 && rx >= $3)) || { echo "the data did not cross SDP"; return 1; }
    [[ $(nfs_tcp_conns) == 0 ]] || { ss -tn; echo "a TCP connection to 2049"; return 1; }
}

modules_load() {
    sunrpc_load_patched
    modprobe -a nfsd nfsv4
}

server_starts() {
    mkdir -p "$WORK" "$MNT"
    nfs_server_start "$SERVER" $((BIG_MIB + BYTES / 1048576 + SMALL_FILES * SMALL_BYTES / 1048576 + 32)) \
        "tcp 2049" "sdp 2049"
    cat "$NFSD_FS/portlist"
    # one listener each for IPv4 and IPv6
    [[ $(grep -cx 'sdp 2049' "$NFSD_FS/portlist") == 2 && $(grep -cx 'tcp 2049' "$NFSD_FS/portlist") == 2 ]] ||
        { echo "nfsd does not listen on TCP and SDP 2049, IPv4 and IPv6"; return 1; }
}

# A NULL call to nfsd (100003 v4) with rpcinfo over netid sdp, through
# rpcbind (which knows only the TCP twin: the interposer takes its port)
# and to the universal address.  Each is one SDP connection to 2049 (the
# counters of both ends grew by one open, bytes went over it); the second
# needs no rpcbind, and no TCP connection is opened at all.
rpc_null_user() {
    local a0 p0 t0 tcp0 out uaddr
    sdp_rpc_netconfig "$WORK"
    rpcinfo -p "$SDP_B4" | grep -E '^ +100003 +4 +tcp +2049' ||
        { rpcinfo -p "$SDP_B4"; echo "nfsd's v4 is not registered with rpcbind"; return 1; }
    a0=$(sdp_stat ActiveOpens) p0=$(sdp_stat PassiveOpens) t0=$(sdp_stat TxBytes)
    out=$(LD_PRELOAD=$SDP_RPC_PRELOAD timeout -k 5 60 rpcinfo -T sdp "$SDP_B4" 100003 4)
    echo "rpcinfo -T sdp $SDP_B4 100003 4: $out"
    [[ $out == "program 100003 version 4 ready and waiting" ]] || { echo "the NULL call failed"; return 1; }
    echo "SDP: +$(($(sdp_stat ActiveOpens) - a0)) active, +$(($(sdp_stat PassiveOpens) - p0)) passive opens, +$(($(sdp_stat TxBytes) - t0)) bytes sent"
    (($(sdp_stat ActiveOpens) == a0 + 1 && $(sdp_stat PassiveOpens) == p0 + 1)) ||
        { echo "the call was not one SDP connection"; return 1; }
    (($(sdp_stat TxBytes) > t0)) || { echo "no bytes went over SDP"; return 1; }

    uaddr=$SDP_B4.8.1   # port 2049
    a0=$(sdp_stat ActiveOpens) p0=$(sdp_stat PassiveOpens) t0=$(sdp_stat TxBytes)
    tcp0=$(awk '$1 == "Tcp:" && $6 ~ /^[0-9]+$/ { print $6 }' /proc/net/snmp)
    out=$(LD_PRELOAD=$SDP_RPC_PRELOAD timeout -k 5 60 rpcinfo -T sdp -a "$uaddr" 100003 4)
    echo "rpcinfo -T sdp -a $uaddr 100003 4: $out"
    [[ $out == "program 100003 version 4 ready and waiting" ]] || { echo "the NULL call failed"; return 1; }
    (($(sdp_stat ActiveOpens) == a0 + 1 && $(sdp_stat PassiveOpens) == p0 + 1)) ||
        { echo "the call was not one SDP connection"; return 1; }
    (($(sdp_stat TxBytes) > t0)) || { echo "no bytes went over SDP"; return 1; }
    (($(awk '$1 == "Tcp:" && $6 ~ /^[0-9]+$/ { print $6 }' /proc/net/snmp) == tcp0)) ||
        { echo "a TCP connection was opened"; return 1; }
    sdp_rpc_cleanup
}

# file_ops ADDR OPTS DIR: on a mount of OPTS to ADDR, in its folder DIR:
# create, write and fsync, read back after a remount, rename, delete.
file_ops() {
    local addr=$1 opts=$2 d=$MNT/$3 e=$EXPORT/$3 want tx0 rx0 fd
    head -c "$BYTES" /dev/urandom >"$SRC"
    want=$(file_sum "$SRC")
    nfs_mount "$addr" "$opts"
    tx0=$(sdp_stat TxBytes) rx0=$(sdp_stat RxBytes)
    mkdir "$d"
    : >"$d/new"
    [[ -f $e/new && ! -s $e/new ]] || { echo "host B has no empty file 'new'"; return 1; }
    # written and fsynced while still open: host B holds it before the close
    exec {fd}>"$d/file.bin"
    cat "$SRC" >&"$fd"
    sync "$d/file.bin"
    [[ $(file_sum "$e/file.bin") == "$want" ]] || { exec {fd}>&-; echo "host B lacks the data after fsync"; return 1; }
    exec {fd}>&-
    echo "written and fsynced: $want"
    nfs_umount "$addr"                 # what is read next comes from the server
    nfs_mount "$addr" "$opts"
    [[ $(file_sum "$d/file.bin") == "$want" ]] || { echo "the file read back differs"; return 1; }
    echo "read back after a remount: the same"
    mv "$d/file.bin" "$d/renamed.bin"
    [[ ! -e $d/file.bin && ! -e $e/file.bin && $(file_sum "$e/renamed.bin") == "$want" ]] ||
        { ls -l "$d" "$e"; echo "the rename did not happen on host B"; return 1; }
    [[ $(file_sum "$d/renamed.bin") == "$want" ]] || { echo "the renamed file differs"; return 1; }
    rm "$d/renamed.bin" "$d/new"
    [[ -z $(ls -A "$e") && -z $(ls -A "$d") ]] || { ls -l "$d" "$e"; echo "the files were not deleted"; return 1; }
    echo "renamed, deleted"
    rmdir "$d"
    sdp_moved "$tx0" "$rx0" $((2 * BYTES))
}

# big_file ADDR OPTS: a round trip of BIG_MIB MiB
big_file() {
    local addr=$1 opts=$2 bytes=$((BIG_MIB * 1048576)) want tx0 rx0
    head -c "$bytes" /dev/urandom >"$SRC"
    want=$(file_sum "$SRC")
    tx0=$(sdp_stat TxBytes) rx0=$(sdp_stat RxBytes)
    timeout -k 5 600 dd if="$SRC" of="$MNT/big.bin" bs=1M conv=fsync status=none
    nfs_umount "$addr"
    nfs_mount "$addr" "$opts"
    [[ $(file_sum "$MNT/big.bin") == "$want" ]] || { echo "the file read back differs"; return 1; }
    [[ $(file_sum "$EXPORT/big.bin") == "$want" ]] || { echo "host B holds another file"; return 1; }
    echo "$BIG_MIB MiB written, read back after a remount, held by host B: $want"
    rm "$MNT/big.bin" "$SRC"
    sdp_moved "$tx0" "$rx0" $((2 * bytes))
}

# small_files ADDR OPTS: SMALL_FILES files of SMALL_BYTES, each different,
# each one's checksum the same on host A after a remount and on host B
small_files() {
    local addr=$1 opts=$2 tx0 rx0 here_ there
    rm -rf "$WORK/small" && mkdir "$WORK/small"
    head -c $((SMALL_FILES * SMALL_BYTES)) /dev/urandom |
        split -b "$SMALL_BYTES" -a 5 -d - "$WORK/small/f"
    [[ $(find "$WORK/small" -type f | wc -l) == "$SMALL_FILES" ]] || { echo "split made no $SMALL_FILES files"; return 1; }
    here_=$(cd "$WORK/small" && sha256sum f*)
    tx0=$(sdp_stat TxBytes) rx0=$(sdp_stat RxBytes)
    timeout -k 5 600 cp -r "$WORK/small" "$MNT/small"
    nfs_umount "$addr"
    nfs_mount "$addr" "$opts"
    there=$(cd "$MNT/small" && timeout -k 5 600 sha256sum f*)
    [[ $there == "$here_" ]] || { diff <(echo "$here_") <(echo "$there") | head; echo "files read back differ"; return 1; }
    there=$(cd "$EXPORT/small" && sha256sum f*)
    [[ $there == "$here_" ]] || { diff <(echo "$here_") <(echo "$there") | head; echo "host B holds other files"; return 1; }
    echo "$SMALL_FILES files of $SMALL_BYTES bytes: each read back after a remount and held by host B"
    timeout -k 5 600 rm -r "$MNT/small"
    [[ ! -e $EXPORT/small ]] || { echo "the files were not deleted on host B"; return 1; }
    rm -r "$WORK/small"
    sdp_moved "$tx0" "$rx0" $((2 * SMALL_FILES * SMALL_BYTES))
}

# the nfsd client of host A's 4.1 session (its folder in /proc/fs/nfsd/clients)
nfsd_client41() {
    grep -l '^minor version: 1$' "$NFSD_FS"/clients/*/info 2>/dev/null | head -n1 | xargs -r dirname
}

# The 4.1 session's backchannel, on the SDP connection: its CB_NULL probe
# succeeded (callback state UP), and a delegation is given and recalled.
backchannel() {
    local c fd n0 n1 states
    for _ in $(seq 50); do
        c=$(nfsd_client41)
        [[ -n $c ]] && grep -q '^callback state: UP$' "$c/info" && break
        sleep 0.2
    done
    [[ -n $c ]] || { echo "nfsd has no 4.1 client"; return 1; }
    cat "$c/info"
    grep -q '^callback state: UP$' "$c/info" || { echo "the backchannel is not up"; return 1; }
    grep -q "^address: \"$SDP_A4:" "$c/info" || { echo "not host A's client"; return 1; }
    [[ $(nfs_sdp_conns "$SDP_B4") == 1 && $(nfs_tcp_conns) == 0 ]] ||
        { echo "not one SDP connection (and no TCP)"; return 1; }

    echo "before" >"$EXPORT/deleg.txt"          # made on host B: no write open from A
    n0=$(nfs_op_count "$MNT" DELEGRETURN)
    exec {fd}<"$MNT/deleg.txt"
    read -r -u "$fd" _
    states=$(cat "$c/states")
    echo "$states"
    grep -q 'type: deleg' <<<"$states" || { exec {fd}<&-; echo "no delegation given"; return 1; }
    # host B writes: the lease breaks, nfsd recalls the delegation over the
    # backchannel and the write waits for host A to return it
    timeout -k 5 90 sh -c "echo after >>'$EXPORT/deleg.txt'" || { exec {fd}<&-; echo "host B's write did not finish"; return 1; }
    exec {fd}<&-
    n1=$(nfs_op_count "$MNT" DELEGRETURN)
    echo "DELEGRETURN calls: $n0 -> $n1"
    ((n1 > n0)) || { echo "the delegation was not returned"; return 1; }
    ! grep -q 'type: deleg' "$c/states" || { cat "$c/states"; echo "the delegation is still held"; return 1; }
    [[ $(tail -n1 "$MNT/deleg.txt") == after ]] || { echo "host A does not see host B's write"; return 1; }
    rm "$MNT/deleg.txt"
    [[ $(nfs_sdp_conns "$SDP_B4") == 1 && $(nfs_tcp_conns) == 0 ]] ||
        { echo "not one SDP connection (and no TCP)"; return 1; }
}

v42_sdp() {
    local o="vers=4.2,proto=sdp,$COMMON"
    file_ops "$SDP_B4" "$o" v42
    big_file "$SDP_B4" "$o"
    small_files "$SDP_B4" "$o"
    nfs_umount "$SDP_B4"
}

v41_sdp() {
    local o="vers=4.1,proto=sdp,$COMMON"
    file_ops "$SDP_B4" "$o" v41
    backchannel
    nfs_umount "$SDP_B4"
}

v42_sdp6() {
    file_ops "$SDP_B6" "vers=4.2,proto=sdp6,$COMMON" v42-6
    nfs_umount "$SDP_B6"
}

# Stops whatever runs, whatever state a failed case left (also on exit).
stop_all() {
    ! mountpoint -q "$MNT" 2>/dev/null || umount "$MNT" || umount -f -l "$MNT" || true
    nfs_server_stop "$SERVER"
    sdp_rpc_cleanup
    rm -rf "$WORK"
}
trap stop_all EXIT

stops_and_unloads() {
    stop_all
    sdp_wait_socks "$SOCKETS0"
    modules_unload_since "$MODULES0"
    ! module_loaded sunrpc || { echo "sunrpc is still loaded"; return 1; }
}

ktap_plan 7
ktap_run modules_load modules_load
ktap_run server_starts server_starts
ktap_run rpc_null_user rpc_null_user
ktap_run v4.2_sdp v42_sdp
ktap_run v4.1_sdp v41_sdp
ktap_run v4.2_sdp6 v42_sdp6
ktap_run stops_and_unloads stops_and_unloads
ktap_finish
