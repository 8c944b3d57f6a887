#!/bin/bash
# dkms_life.sh: the install life a user lives with sdp and DKMS, on a root
# of the bed (the host's Debian 12, or the Debian 13 root), in a throwaway
# overlay of it, so that the bed's own install is untouched.  Runs on the
# host (no guest: nothing is loaded), as root.
#   from_scratch            no sdp anywhere (make uninstall)
#   install_without_source  make install on a host without the kernel's
#                           source: sdp.ko alone, DKMS says "installed"
#   source_added            the kernel's source installed (apt): DKMS still
#                           sees the build it has, and `dkms remove` takes
#                           all of it away
#   install_with_source     make install again: sdp.ko, sunrpc.ko and nfs.ko
#   newer_kernel            a newer kernel installed (apt): DKMS builds sdp
#                           for it by itself (Debian 13 root only: Debian
#                           12's compiler builds no newer Debian kernel)
#   reinstall_same_tree     make install again from the same tree: the
#                           kernel's build made anew, the newer kernel's
#                           kept (the bed installs a root's kernels so)
#   upgrade                 make install of the next sdp version: only that
#                           version is left, on every kernel
#   uninstall               make uninstall: nothing of sdp is left
# Usage: dkms_life.sh ROOT
# Env: SDP_LIFE_KEEP=1  keep the overlay's folder (its path is printed)
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib/ktap.sh"

(($# == 1)) || { echo "usage: dkms_life.sh ROOT" >&2; exit 2; }
# A mount namespace of its own: the overlay goes with it.
if [[ ${SDP_LIFE_NS:-} != 1 ]]; then
    SDP_LIFE_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi
lower=$(realpath "$1")
life=$(mktemp -d /tmp/sdp-dkms-life.XXXX)
# (upper layer on a file system of its own: it must not lie in the lower one)
mount -t tmpfs -o size=8g tmpfs "$life"
mkdir "$life/upper" "$life/work" "$life/root"
mount -t overlay overlay \
    -o "lowerdir=$lower,upperdir=$life/upper,workdir=$life/work" "$life/root"
root=$life/root
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
next=${version%.*}.$((${version##*.} + 1))

# The oldest kernel of the root, and a newer one if it has one.
mapfile -t kernels < <("$top/userspace-tests/bed/kernels" | awk -v r="$lower" '$2 == r { print $1 }')
((${#kernels[@]})) || { echo "dkms_life.sh: no kernel of the bed in $lower" >&2; exit 1; }
k1=${kernels[0]} k2=${kernels[1]:-}
series() { sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<"$1"; }
src_pkg=linux-source-$(series "$k1")

in_life() { "$top/userspace-tests/bed/in-root" "$root" "$@"; }
life_make() { in_life make --no-print-directory IN_ROOT=1 BUILD=/tmp/sdp-life-build "$@"; }
# what DKMS says of sdp on kernel K (one line per version)
status_of() { in_life dkms status sdp -k "$1" 2>/dev/null || true; }
# our modules in updates/dkms of kernel K, and their versions
ours() {
    local f
    for f in "$root/lib/modules/$1"/updates/dkms/{sdp,sunrpc,nfs}.ko*; do
        [[ -e $f ]] || continue
        echo "${f##*/} $(in_life modinfo -F version "${f#"$root"}")"
    done
}
expect_installed() {    # K VERSION MODULE...
    local k=$1 v=$2 m got mods
    shift 2
    got=$(status_of "$k")
    echo "dkms status on $k: $got"
    # ("Original modules exist": sunrpc.ko and nfs.ko stand in for the
    # distribution's, as they should; any other remark is a fault)
    [[ $got == "sdp/$v, $k, "* && $got =~ :\ installed(\ \(Original\ modules\ exist\))?$ ]] ||
        { echo "not installed as $v"; return 1; }
    [[ $(wc -l <<<"$got") == 1 ]] || { echo "more than one sdp in DKMS"; return 1; }
    # (each listing read whole: grep -q would end it early, and pipefail
    # would take that for a failure)
    mods=$(ours "$k")
    echo "modules: $(tr '\n' ' ' <<<"$mods")"
    for m in "$@"; do
        grep -q "^$m\.ko" <<<"$mods" || { echo "no $m.ko in updates/dkms of $k"; return 1; }
    done
    if [[ " $* " != *" sunrpc "* ]] && grep -q '^sunrpc' <<<"$mods"; then
        echo "sunrpc.ko installed where it should not be"; return 1
    fi
    awk -v v="$v" '($1 ~ /^sdp/ && $2 != v) || ($1 !~ /^sdp/ && $2 != "sdp-" v) {
        print "stale:", $0; bad = 1 } END { exit bad }' <<<"$mods"
}
nothing_left() {
    local left
    left=$( {
        compgen -G "$root/var/lib/dkms/sdp" || true
        compgen -G "$root/usr/src/sdp-*" || true
        for k in "${kernels[@]}"; do ours "$k" | sed "s|^|$k: |"; done
        compgen -G "$root/usr/local/lib/libtirpc-sdp.so" || true
        compgen -G "$root/usr/local/lib/libsdp.so" || true
        compgen -G "$root/usr/local/bin/sdp_run" || true
        compgen -G "$root/usr/local/share/man/man[58]/*sdp*" || true
        compgen -G "$root/etc/libsdp.conf" || true
        grep -E '^sdp6?[[:space:]]' "$root/etc/netconfig" || true
    })
    [[ -z $left ]] || { echo "left behind:"; echo "$left"; return 1; }
}

from_scratch() {
    life_make uninstall KVER="$k1"
    in_life sh -c "dpkg -r $src_pkg >/dev/null 2>&1 || true"
    [[ -z $k2 ]] || in_life dpkg -r "linux-image-$k2" "linux-headers-$k2" >/dev/null
    [[ ! -e $root/usr/src/$src_pkg.tar.xz ]] || { echo "the kernel source is still there"; return 1; }
    nothing_left
}

install_without_source() {
    life_make install KVER="$k1" | tail -n 3
    expect_installed "$k1" "$version" sdp
}

source_added() {
    local want
    want=$(in_life "$top/sunrpc-patches/build" --want-source "$k1")
    [[ $want == "$src_pkg="* ]] || { echo "build --want-source $k1: '$want', want $src_pkg=..."; return 1; }
    in_life apt-get update -q >/dev/null
    in_life apt-get install -y -q --no-install-recommends "$want" >/dev/null
    expect_installed "$k1" "$version" sdp
    in_life dkms remove "sdp/$version" --all | tail -n 2
    for k in "${kernels[@]}"; do
        [[ -z $(ours "$k") ]] || { echo "dkms remove left on $k: $(ours "$k")"; return 1; }
    done
    [[ ! -e $root/var/lib/dkms/sdp/$version ]] || { echo "dkms remove left its tree"; return 1; }
}

# the tree DKMS builds is the one make install staged, whole
same_tree() {
    diff -r -q "$root/tmp/sdp-life-build/dkms-src" "$root/usr/src/sdp-$version" ||
        { echo "/usr/src/sdp-$version is not the tree make install staged"; return 1; }
}

install_with_source() {
    local f
    life_make install KVER="$k1" | tail -n 4
    expect_installed "$k1" "$version" sdp sunrpc nfs
    same_tree
    # the preload, its wrapper, man pages and sample rules
    for f in usr/local/lib/libsdp.so usr/local/bin/sdp_run usr/local/share/man/man8/sdp_run.8 \
             usr/local/share/man/man5/libsdp.conf.5 etc/libsdp.conf; do
        [[ -s $root/$f ]] || { echo "no /$f"; return 1; }
    done
}

newer_kernel() {
    local v
    if [[ -z $k2 ]]; then
        echo "this root has one kernel (Debian 12's gcc-12 builds no newer Debian kernel)"
        return "$KSFT_SKIP"
    fi
    v=$(in_life apt-cache madison "linux-image-$k2" | awk 'NR == 1 { print $3 }')
    in_life apt-get install -y -q --no-install-recommends -t trixie-backports \
        "linux-image-$k2=$v" "linux-headers-$k2=$v" >"$life/newer-kernel.log" 2>&1 ||
        { tail -n 20 "$life/newer-kernel.log"; return 1; }
    grep -iE 'dkms|sdp' "$life/newer-kernel.log" | tail -n 5
    expect_newer_installed
}

# sdp of this version on the newer kernel, with its SunRPC modules where
# the root has the kernel's source
expect_newer_installed() {
    if [[ -e $root/usr/src/linux-source-$(series "$k2").tar.xz ]]; then
        expect_installed "$k2" "$version" sdp sunrpc nfs
    else
        expect_installed "$k2" "$version" sdp
    fi
}

reinstall_same_tree() {
    local log=$root/var/lib/dkms/sdp/$version/$k1/$(uname -m)/log/make.log tree0 built0
    # (the tree left in place, not copied anew; the kernel built anew)
    tree0=$(stat -c %i "$root/usr/src/sdp-$version/dkms.conf") built0=$(stat -c %Y "$log")
    sleep 1
    life_make install KVER="$k1" | tail -n 4
    expect_installed "$k1" "$version" sdp sunrpc nfs
    same_tree
    [[ $(stat -c %i "$root/usr/src/sdp-$version/dkms.conf") == "$tree0" ]] ||
        { echo "the tree was copied anew: not the same-tree install"; return 1; }
    (($(stat -c %Y "$log") > built0)) || { echo "$k1 was not built anew"; return 1; }
    [[ -z $k2 ]] || expect_newer_installed
}

upgrade() {
    local src=$root/tmp/sdp-$next k mods
    mkdir -p "$src"
    (cd "$top" && tar -c --exclude=./build --exclude=./.git .) | tar -x -C "$src"
    sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$next\"/" "$src/dkms.conf"
    in_life make --no-print-directory -C "/tmp/sdp-$next" IN_ROOT=1 BUILD=/tmp/sdp-next-build \
        install KVER="$k1" | tail -n 3
    expect_installed "$k1" "$next" sdp sunrpc nfs
    [[ ! -e $root/usr/src/sdp-$version && ! -e $root/var/lib/dkms/sdp/$version ]] ||
        { echo "sdp $version is still there"; return 1; }
    for k in "${kernels[@]}"; do
        mods=$(ours "$k")
        ! grep -q "$version\$" <<<"$mods" || { echo "$version modules left on $k"; return 1; }
    done
}

uninstall() {
    life_make uninstall KVER="$k1"
    nothing_left
}

ktap_plan 8
ktap_diag "root $lower (overlay in $life), kernels: ${kernels[*]}, sdp $version then $next"
ktap_run from_scratch from_scratch
ktap_run install_without_source install_without_source
ktap_run source_added source_added
ktap_run install_with_source install_with_source
ktap_run newer_kernel newer_kernel
ktap_run reinstall_same_tree reinstall_same_tree
ktap_run upgrade upgrade
ktap_run uninstall uninstall
if [[ ${SDP_LIFE_KEEP:-} == 1 ]]; then
    ktap_diag "kept: $life (this mount namespace only: copy what you need first)"
else
    umount "$life/root" "$life"
    rmdir "$life"
fi
ktap_finish
