#!/bin/bash
# wire_fuzz.sh: the wire fuzzer (tools/sdp_wirefuzz): from a seed, a peer
# of our own sends random Hellos and message sequences, valid and not,
# while the SDP side reads, writes and shuts down; each case must end
# with what was sent validly intact, or with the connection aborted and
# counted (sdp_wirefuzz says how it judges).  Meanwhile a healthy SDP
# connection moves checksummed data, connection after connection, and
# must not notice.  Afterwards: no QP, CQ, MR or CM id left, and no
# kernel log line of the module's but the aborts' own.
#
#   SDP_FUZZ_ARGS: more options of the fuzzer (-b: blocking reads).
#   SDP_FUZZ_SEED (1), SDP_FUZZ_COUNT (200; 100 on the debug kernel, whose
#   long runs are make fuzz's): the cases; a failed one prints the command
#   that replays it (make fuzz SEED=S COUNT=1).
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/lib/sdp_healthy.sh"
FUZZ=${SDP_WIREFUZZ:-$SDP_BUILD/tools/sdp_wirefuzz}
SDP_PAIR=${SDP_PAIR:-$SDP_BUILD/tools/sdp_pair}
SEED=${SDP_FUZZ_SEED:-1}
default_count=200
[[ $(uname -r) == *sdpdebug* ]] && default_count=100
COUNT=${SDP_FUZZ_COUNT:-$default_count}
CASE_MS=${SDP_FUZZ_CASE_MS:-30000}
# more of sdp_wirefuzz's options (-b: blocking reads)
read -r -a ARGS <<<"${SDP_FUZZ_ARGS:-}"
HEALTHY_BYTES=4194304   # per healthy transfer
PARAMS=/sys/module/sdp/parameters
# what the module logs (rate-limited) when it aborts a connection
ABORT_RE='sdp: .*(connection aborted|bad Hello)'

fuzz() {
    local dir rdma0 logs0 out rc new
    dir=$(mktemp -d)
    rdma0=$(sdp_resources)
    logs0=$(dmesg | wc -l)
    healthy_start "$dir" 19690 "$HEALTHY_BYTES"
    rc=0
    out=$("$FUZZ" -s "$SEED" -n "$COUNT" -t "$CASE_MS" "${ARGS[@]}") || rc=$?
    echo "$out" | grep -v ': ok: ' || true
    healthy_stop "$dir" || rc=1
    rm -rf "$dir"
    # the module's lines: each names a connection it aborted, and why
    new=$(dmesg | tail -n +$((logs0 + 1)) | grep -E '^\[[ 0-9.]+\] sdp: ' || true)
    echo "module log lines: $(grep -c . <<<"$new"), of them aborts: $(grep -cE "$ABORT_RE" <<<"$new"); the reasons (rate-limited):"
    grep -E "$ABORT_RE" <<<"$new" | sed -E 's/^.*sdp: [^ ]+: //' | sort | uniq -c | sort -rn || true
    if grep -vE "$ABORT_RE" <<<"$new" | grep -q .; then
        grep -vE "$ABORT_RE" <<<"$new" | head -20; echo "log lines that are not an abort's"; rc=1
    fi
    ((rc == 0)) || return 1
    sdp_wait_resources "$rdma0"
}

[[ -x $FUZZ && -x $SDP_PAIR ]] || { echo "no $FUZZ or $SDP_PAIR: make userspace" >&2; exit 1; }
# SrcAvails both ways: sends from the program's pages whatever they cost
saved_task_cq=$(cat "$PARAMS/zcopy_task_cq")
saved_adapt=$(cat "$PARAMS/zcopy_adapt")
trap 'echo "$saved_task_cq" >"$PARAMS/zcopy_task_cq"; echo "$saved_adapt" >"$PARAMS/zcopy_adapt"' EXIT
echo 1 >"$PARAMS/zcopy_task_cq"
echo 0 >"$PARAMS/zcopy_adapt"
ktap_plan 1
ktap_run "wire_fuzz_seed_${SEED}_count_${COUNT}" fuzz
ktap_finish
