#!/bin/bash
# proc_net_sdp.sh: /proc/net/sdp lists the SDP sockets of the reader's
# network namespace, one line each, in the manner of /proc/net/tcp, and
# forgets them when they close.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_hold.sh"

# /proc/net/tcp's form of an IPv4 address: the __be32 printed as a u32.
hex4() { local IFS=.; set -- $1; printf '%02X%02X%02X%02X' "$4" "$3" "$2" "$1"; }

listed() {  # listed LOCAL REMOTE STATE (regular expressions): exactly one such line
    local n
    n=$(awk -v l="^$1$" -v r="^$2$" -v s="$3" '$2 ~ l && $3 ~ r && $4 == s' /proc/net/sdp | wc -l)
    [[ $n -eq 1 ]] || { cat /proc/net/sdp; echo "want one line '$1 $2 $3', have $n"; return 1; }
}

ipv4_sockets_listed() {
    local a b
    a=$(hex4 10.99.0.1) b=$(hex4 10.99.0.2):4853
    sdp_hold_start -p 18515
    listed "$b" "00000000:0000" 0A                  # the listener
    listed "$b" "$a:[0-9A-F][0-9A-F][0-9A-F][0-9A-F]" 01                 # the accepted end
    listed "$a:[0-9A-F][0-9A-F][0-9A-F][0-9A-F]" "$b" 01                 # the client
    # the user's sockets carry its uid and a socket inode
    awk -v b="$b" '$2 == b && $4 == "0A" { ok = $6 == 0 && $7 > 0 } END { exit !ok }' /proc/net/sdp ||
        { cat /proc/net/sdp; echo "the listener's uid or inode is wrong"; return 1; }
    sdp_hold_stop
    ! grep -q ":4853 " /proc/net/sdp || { cat /proc/net/sdp; echo "closed sockets still listed"; return 1; }
}

ipv6_sockets_listed() {
    sdp_hold_start -6 -p 18516
    listed "000099FD000000000000000002000000:4854" \
        "00000000000000000000000000000000:0000" 0A
    sdp_hold_stop
}

other_namespace_sees_none() {
    sdp_hold_start -p 18517
    grep -q ":4855 " /proc/net/sdp
    local lines
    lines=$(unshare -n cat /proc/self/net/sdp | wc -l)
    sdp_hold_stop
    [[ $lines -eq 1 ]] || { echo "a new namespace sees $lines lines"; return 1; }
}

ktap_plan 3
ktap_run ipv4_sockets_listed ipv4_sockets_listed
ktap_run ipv6_sockets_listed ipv6_sockets_listed
ktap_run other_namespace_sees_none other_namespace_sees_none
ktap_finish
