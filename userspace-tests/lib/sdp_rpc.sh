# shellcheck shell=bash
# sdp_rpc.sh: what user-space RPC over SDP needs in the guest (source it).
#   sdp_rpc_netconfig DIR: the netids sdp and sdp6 in /etc/netconfig: as
#       installed by `make install`, or else a copy with them (kept in DIR)
#       mounted over it, in this guest only; sdp_rpc_cleanup undoes it
#   sdp_rpc_rpcbind: rpcbind running (started here if it was not)
#   SDP_RPC_PRELOAD: the interposer, for LD_PRELOAD

SDP_RPC_PRELOAD=$SDP_BUILD/libtirpc/libtirpc-sdp.so
sdp_rpc_started_rpcbind=

sdp_rpc_netconfig() {
    grep -qE '^sdp[[:space:]]' /etc/netconfig && return 0
    cat /etc/netconfig "$(dirname "${BASH_SOURCE[0]}")/../../libtirpc-patches/netconfig.sdp" \
        >"$1/netconfig"
    mount --bind "$1/netconfig" /etc/netconfig
}

sdp_rpc_rpcbind() {
    pgrep -x rpcbind >/dev/null && return 0
    mkdir -p /run/rpcbind
    rpcbind -w
    sdp_rpc_started_rpcbind=$(pgrep -x rpcbind)
}

sdp_rpc_cleanup() {
    [[ -z $sdp_rpc_started_rpcbind ]] || kill "$sdp_rpc_started_rpcbind" 2>/dev/null || true
    ! mountpoint -q /etc/netconfig || umount /etc/netconfig
}
