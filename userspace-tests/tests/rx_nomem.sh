#!/bin/bash
# rx_nomem.sh: received data when softirq finds no memory for it.  The
# SDP module queues received data from its completion handler, in softirq,
# with GFP_ATOMIC memory; when there is none the completion waits, and a
# work item processes it with memory it may wait for (kmod/sdp_cq.c).  The
# test module kmod-read-sock/sdp_nomem_test.c (built by `make userspace`,
# insmod-ed from build/) makes sdp.ko's atomic skb allocations fail on
# demand.  With some of them failing, and then with all of them, a
# checksummed transfer between the hosts arrives intact, the waits are
# counted (RxMemoryStalls), no connection aborts, and nothing is left
# behind.
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/bed/hosts.env"
KO=${SDP_NOMEM_KO:-$SDP_BUILD/kmod-read-sock/$(uname -r)/sdp_nomem_test.ko}
SDP_PAIR=${SDP_PAIR:-$SDP_BUILD/tools/sdp_pair}
PARAMS=/sys/module/sdp_nomem_test/parameters
PORT=19420
BYTES=${SDP_NOMEM_BYTES:-4194304}   # per transfer

# transfer FAILS: arms FAILS failures, moves BYTES from host A to host B
# (sdp_pair checks them), disarms; prints what the counters did
transfer() {
    local fails=$1 stalls0 aborts0 injected0 stalls injected
    stalls0=$(sdp_stat RxMemoryStalls) aborts0=$(sdp_stat AbortOnTransportError)
    injected0=$(cat "$PARAMS/injected")
    echo "$fails" >"$PARAMS/fails"
    timeout -k 5 120 "$SDP_PAIR" -p "$PORT" -s "$BYTES"
    echo 0 >"$PARAMS/fails"
    stalls=$(($(sdp_stat RxMemoryStalls) - stalls0))
    injected=$(($(cat "$PARAMS/injected") - injected0))
    echo "allocations failed: $injected, waits for memory: $stalls"
    (($(sdp_stat AbortOnTransportError) == aborts0)) || { echo "a connection aborted"; return 1; }
    ((injected > 0)) || { echo "no allocation failed: the test did not test"; return 1; }
    ((stalls > 0)) || { echo "no received data waited for memory"; return 1; }
    ((injected <= fails)) || { echo "more failures than armed"; return 1; }
}

some_fail() { transfer 16; }
all_fail() { transfer 1000000000; }

unloads() {
    rmmod sdp_nomem_test
    ! grep -q "^sdp_nomem_test " /proc/modules || { echo "still loaded after rmmod"; return 1; }
    sdp_wait_socks "$socks0"
}

ktap_plan 3
socks0=$(sdp_socks)
insmod "$KO"
ktap_run some_allocations_fail some_fail
ktap_run every_allocation_fails all_fail
ktap_run module_unloads unloads
ktap_finish
