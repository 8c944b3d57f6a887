#!/bin/bash
# demo.sh: the main job, run in the guest by `make demo`: SDP connections
# between the bed's two hosts, what they look like to the system, and how
# long they take to set up.  Prints as it goes; exits non-zero on failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/bed/hosts.env"
. "$here/lib/sdp_hold.sh"
COUNT=${SDP_DEMO_CONNECTIONS:-50}

step() { printf '\n== %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "The bed: host A ($SDP_A4, $SDP_A6) and host B ($SDP_B4, $SDP_B6), one Soft-RoCE device each"
run rdma link show
step "sdp.ko, installed by DKMS and loaded with modprobe"
run modinfo -F filename sdp
printf 'version %s, alias %s\n' "$(modinfo -F version sdp)" "$(modinfo -F alias sdp)"

step "A listener on host B and a client on host A, connected over RDMA (IPv4)"
sdp_hold_start -p 18515
echo "sdp_pair: listener on $SDP_B4:18515, client connected from $SDP_A4, accepted"
run cat /proc/net/sdp
echo "(states: 0A listen, 01 established; one line per socket, like /proc/net/tcp)"
run rdma resource show cm_id
sdp_hold_stop

step "Connection set-up time, $COUNT connections each way (connect + accept + close)"
run "$SDP_PAIR" -n "$COUNT"
run "$SDP_PAIR" -6 -n "$COUNT"

step "Data over SDP: 8 MiB each way, checked with FNV-1a at the receiver"
run "$SDP_PAIR" -s 8388608
run "$SDP_PAIR" -6 -s 8388608
echo "(Soft-RoCE under TCG: the rate is the emulator's; make bench gives ratios)"

step "What SDP counted (/proc/net/sdpstats, non-zero lines)"
grep -v " 0$" /proc/net/sdpstats

step "What the kernel said"
dmesg | grep -E "sdp|rdma_rxe" | tail -n 5

step "Done: SDP streams between the two hosts over IPv4 and IPv6"
echo "(RPC over SDP comes with the next issues)"
