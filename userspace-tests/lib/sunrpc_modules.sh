# shellcheck shell=bash
# sunrpc_modules.sh: the patched sunrpc.ko and nfs.ko (sunrpc-patches/build,
# `make sunrpc-modules`) for the shell tests, before DKMS installs them: the
# guest's modprobe would find the distribution's, so they are insmod-ed first.
#   SUNRPC_DIR               where they are: build/sunrpc/KVER, or $SDP_SUNRPC_MODULES
#   sunrpc_patched MOD       whether the loaded MOD is the patched one
#   sunrpc_load_patched      insmods sunrpc.ko, then nfs.ko after its stock dependencies
#   modules_now              the loaded modules, sorted
#   modules_unload_since M0  rmmods every module not in M0 (modules_now's output),
#                            each once nothing uses it

SUNRPC_DIR=${SDP_SUNRPC_MODULES:-$SDP_BUILD/sunrpc/$(uname -r)}

module_loaded() { grep -q "^$1 " /proc/modules; }
modules_now() { cut -d' ' -f1 /proc/modules | sort; }
sunrpc_patched() { [[ $(cat "/sys/module/$1/version" 2>/dev/null) == sdp-* ]]; }

sunrpc_load_patched() {
    local deps
    [[ -f $SUNRPC_DIR/sunrpc.ko && -f $SUNRPC_DIR/nfs.ko ]] ||
        { echo "no $SUNRPC_DIR/{sunrpc,nfs}.ko: run make sunrpc-modules"; return 1; }
    if ! module_loaded sunrpc; then
        insmod "$SUNRPC_DIR/sunrpc.ko"
    fi
    sunrpc_patched sunrpc || { echo "the sunrpc loaded is not the patched one"; return 1; }
    echo "sunrpc $(cat /sys/module/sunrpc/version)"
    if ! module_loaded nfs; then
        deps=$(modinfo -F depends "$SUNRPC_DIR/nfs.ko" | tr ',' '\n' | grep -vx sunrpc || true)
        # shellcheck disable=SC2086  # (a list of names)
        [[ -z $deps ]] || modprobe -a $deps
        insmod "$SUNRPC_DIR/nfs.ko"
    fi
    sunrpc_patched nfs || { echo "the nfs loaded is not the patched one"; return 1; }
    echo "nfs $(cat /sys/module/nfs/version) (after $(modinfo -F depends "$SUNRPC_DIR/nfs.ko"))"
}

modules_unload_since() {
    local m left progress
    while :; do
        left=$(comm -13 <(echo "$1") <(modules_now))
        [[ -n $left ]] || return 0
        progress=0
        for m in $left; do
            [[ $(awk -v m="$m" '$1 == m { print $3 }' /proc/modules) == 0 ]] || continue
            rmmod "$m" && progress=1
        done
        ((progress)) || { echo "cannot unload:"; grep -wF "$left" /proc/modules; return 1; }
    done
}
