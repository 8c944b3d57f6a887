# shellcheck shell=bash
# sdp_ktest.sh: what the shell tests read of the in-kernel test modules
# (kmod-read-sock/, kmod-rpc-bw/, on lib/sdp_ktest.h): their debugfs text
# files are lines of NAME=value fields, separated by spaces.
#   field NAME LINE    the value of NAME=... in LINE (nothing if none)
# (In bash alone: under TCG each program started costs the guest about a
# tenth of a second, and the tests read fields by the thousand.)

field() {
    local re="(^|[[:space:]])$1=([^[:space:]]*)"
    if [[ $2 =~ $re ]]; then printf '%s\n' "${BASH_REMATCH[2]}"; fi
}
