#!/bin/bash
# sunrpc_modules.sh: the patched sunrpc.ko and nfs.ko (sunrpc-patches/build,
# `make sunrpc-modules`) are a drop-in for the distribution's: insmod-ed
# from build/sunrpc/KVER (or $SDP_SUNRPC_MODULES), every stock module that
# depends on them loads against them with modprobe (lockd, nfsd, nfsv4,
# auth_rpcgss, rpcsec_gss_krb5, rpcrdma, ...), with no symbol version
# mismatch or unknown symbol in the kernel log.  The SDP transports are
# there: the client and backchannel classes register, nfs parses
# proto=sdp and proto=sdp6 (and still refuses mountproto=sdp), and
# `sdp 2049` in nfsd's portlist opens SDP listeners for IPv4 and IPv6,
# which go away with nfsd.  Everything it loaded unloads again.
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sunrpc_modules.sh"
kver=$(uname -r)
DIR=$SUNRPC_DIR
BUILD_SCRIPT=$here/../sunrpc-patches/build
FS_PARAM=$SDP_BUILD/tools/fs_param
NFSD=/proc/fs/nfsd
MARK="sunrpc_modules.sh: start $$"
# The stock modules the brief names; all others that depend on sunrpc or nfs load too.
REQUIRED=(lockd nfsd nfsv4 auth_rpcgss rpcsec_gss_krb5 rpcrdma)

kernel_log() { dmesg | sed -n "/$MARK/,\$p"; }

# The modules of /lib/modules/KVER that depend on sunrpc.ko or nfs.ko, by
# name (modules.dep: "path: dependency paths").
stock_dependents() {
    awk -F': ' '$2 ~ /(^|[ \/])(sunrpc|nfs)\.ko/ { n = split($1, p, "/"); print p[n] }' \
        "/lib/modules/$kver/modules.dep" | sed 's/\.ko.*$//' | tr - _ | grep -vx -e sunrpc -e nfs | sort -u
}

modules_built() {
    local m
    for m in sunrpc nfs; do
        [[ -f $DIR/$m.ko ]] || { echo "no $DIR/$m.ko: run make sunrpc-modules"; return 1; }
        [[ $(modinfo -F vermagic "$DIR/$m.ko") == "$kver "* ]] ||
            { echo "$m.ko is not built for $kver"; return 1; }
        [[ $(modinfo -F version "$DIR/$m.ko") == sdp-* ]] ||
            { echo "$m.ko has no sdp-* version: not the patched one"; return 1; }
    done
    cat "$DIR/abi.txt"
}

# The patched sunrpc.ko and nfs.ko, and nfs.ko's stock dependencies.
patched_modules_load() {
    ! module_loaded sunrpc ||
        { echo "a sunrpc is loaded already: $(cat /sys/module/sunrpc/version 2>/dev/null)"; return 1; }
    sunrpc_load_patched
}

stock_modules_load() {
    local m list failed=0
    list=$(stock_dependents)
    for m in "${REQUIRED[@]}"; do
        grep -qx "$m" <<<"$list" || { echo "modules.dep lists no $m depending on sunrpc"; return 1; }
    done
    for m in $list; do
        if modprobe "$m" && module_loaded "$m"; then
            echo "$m: loaded ($(modinfo -F filename "$m"))"
        else
            echo "$m: did not load"; failed=1
        fi
    done
    sunrpc_patched sunrpc && sunrpc_patched nfs ||
        { echo "modprobe replaced the patched sunrpc or nfs"; return 1; }
    return $failed
}

no_symbol_errors() {
    local bad
    bad=$(kernel_log | grep -E 'disagrees about version of symbol|Unknown symbol|Invalid module format|version magic' || true)
    [[ -z $bad ]] || { echo "$bad"; return 1; }
}

sdp_transports_registered() {
    kernel_log | grep -x '.*RPC: Registered sdp transport module\.' ||
        { echo "no client transport sdp"; return 1; }
    kernel_log | grep -x '.*RPC: Registered sdp NFSv4\.1 backchannel transport module\.' ||
        { echo "no backchannel transport for sdp"; return 1; }
    cat /proc/sys/sunrpc/transports
    grep -qE '^sdp [0-9]+$' /proc/sys/sunrpc/transports ||
        { echo "no server transport sdp in /proc/sys/sunrpc/transports"; return 1; }
}

# fs_param asks nfs to parse one option at a time, and mounts nothing.
nfs_parses_proto_sdp() {
    local out
    [[ -x $FS_PARAM ]] || { echo "no $FS_PARAM: run make userspace"; return 1; }
    out=$("$FS_PARAM" nfs proto=sdp proto=sdp6 proto=tcp mountproto=sdp proto=nonesuch || true)
    echo "$out"
    grep -qx 'proto=sdp ok' <<<"$out" && grep -qx 'proto=sdp6 ok' <<<"$out" &&
        grep -qx 'proto=tcp ok' <<<"$out" ||
        { echo "nfs refuses proto=sdp, sdp6 or tcp"; return 1; }
    grep -q '^mountproto=sdp error EINVAL: e NFS: Unrecognized transport protocol' <<<"$out" ||
        { echo "mountproto=sdp was not refused (MOUNT goes over TCP)"; return 1; }
    grep -q '^proto=nonesuch error EINVAL' <<<"$out" ||
        { echo "an unknown transport was not refused"; return 1; }
    out=$("$FS_PARAM" nfs4 proto=sdp) || { echo "$out"; echo "nfs4 refuses proto=sdp"; return 1; }
    echo "nfs4: $out"
}

# SDP sockets listening on port 2049 (0801), from /proc/net/sdp
sdp_listeners_2049() { awk '$2 ~ /:0801$/ && $4 == "0A"' /proc/net/sdp | wc -l; }

nfsd_sdp_listener() {
    mountpoint -q "$NFSD" || mount -t nfsd nfsd "$NFSD"
    echo "sdp 2049" >"$NFSD/portlist"
    cat "$NFSD/portlist"
    cat /proc/net/sdp
    [[ $(grep -cx 'sdp 2049' "$NFSD/portlist") == 2 ]] ||
        { echo "portlist has not one IPv4 and one IPv6 sdp listener"; return 1; }
    [[ $(sdp_listeners_2049) == 2 ]] || { echo "not two SDP sockets listening on 2049"; return 1; }
    # nfsd goes down with no threads (with no rpcbind, lockd's start fails: it goes down all the same)
    echo 0 >"$NFSD/threads" 2>/dev/null || true
    [[ -z $(cat "$NFSD/portlist") ]] || { echo "portlist not empty after nfsd stopped"; return 1; }
    [[ $(sdp_listeners_2049) == 0 ]] || { cat /proc/net/sdp; echo "SDP listeners left"; return 1; }
}

# Unloads what the test loaded.
modules_unload() {
    ! mountpoint -q "$NFSD" || umount "$NFSD"
    modules_unload_since "$MODULES0"
    ! module_loaded sunrpc || { echo "sunrpc is still loaded"; return 1; }
}

MODULES0=$(modules_now)
echo "$MARK" >/dev/kmsg
ktap_plan 8
if [[ ! -f $DIR/sunrpc.ko ]] && ! why=$("$BUILD_SCRIPT" --check "$kver"); then
    for t in modules_built patched_modules_load stock_modules_load \
             no_symbol_errors sdp_transports_registered nfs_parses_proto_sdp \
             nfsd_sdp_listener modules_unload; do
        ktap_skip "$t" "$why"
    done
    ktap_finish
fi
ktap_run modules_built modules_built
ktap_run patched_modules_load patched_modules_load
ktap_run stock_modules_load stock_modules_load
ktap_run no_symbol_errors no_symbol_errors
ktap_run sdp_transports_registered sdp_transports_registered
ktap_run nfs_parses_proto_sdp nfs_parses_proto_sdp
ktap_run nfsd_sdp_listener nfsd_sdp_listener
ktap_run modules_unload modules_unload
ktap_finish
