#!/bin/bash
# race_fuzz.sh: the fuzzer of races between calls (tools/sdp_racefuzz):
# from a seed, threads and a forked child hit a few shared SDP sockets
# (a listener, connected pairs, sockets being made) with random calls at
# once; no call may hang or fail with EFAULT or EIO, no socket may be
# left 120 s after the last case, and the kernel must log nothing
# (run-tests checks that).
# Afterwards: no QP, CQ, MR or CM id left.
#
#   SDP_FUZZ_SEED (1), SDP_RACE_COUNT (100; 40 on the debug kernel, whose
#   long runs are make fuzz's), SDP_RACE_CASE_MS (1000): the cases; a
#   failed one prints the command that replays it.
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
FUZZ=${SDP_RACEFUZZ:-$SDP_BUILD/tools/sdp_racefuzz}
SEED=${SDP_FUZZ_SEED:-1}
default_count=100
[[ $(uname -r) == *sdpdebug* ]] && default_count=40
COUNT=${SDP_RACE_COUNT:-${SDP_FUZZ_COUNT:-$default_count}}
CASE_MS=${SDP_RACE_CASE_MS:-1000}

fuzz() {
    local rdma0 out rc=0
    rdma0=$(sdp_resources)
    out=$("$FUZZ" -s "$SEED" -n "$COUNT" -t "$CASE_MS") || rc=$?
    echo "$out"
    ((rc == 0)) || return 1
    sdp_wait_resources "$rdma0"
}

[[ -x $FUZZ ]] || { echo "no $FUZZ: make userspace" >&2; exit 1; }
ktap_plan 1
ktap_run "race_fuzz_seed_${SEED}_count_${COUNT}" fuzz
ktap_finish
