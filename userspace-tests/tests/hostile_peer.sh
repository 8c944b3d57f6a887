#!/bin/bash
# hostile_peer.sh: a peer that breaks the SDP protocol (tools/sdp_hostile:
# its own RDMA CM id and RC QP on host A, talking to an SDP listener on
# host B) gets its connection refused or aborted: bad Hellos are rejected
# with nothing to accept; malformed message streams (bad lengths, an
# oversize message, an unknown message id, payload on the last credit,
# data after DisConn, a DisConn with payload, a sequence gap, read
# zero-copy's messages where the peer may not send them, a SrcAvail whose
# RDMA Read fails, a malformed message before the RTU) make the accepted
# socket see ECONNRESET and the peer a CM disconnect.  For each: exactly
# one new (rate-limited) kernel log line naming the peer and why, the matching
# /proc/net/sdpstats counter up by one, and no QP or CM id left behind.
# A valid stream is the control, and so is a SrcAvail with DisConn right
# behind it (its bytes come before EOF); a healthy SDP connection moving
# checksummed data carries on while the malformed cases run again.
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/lib/sdp_healthy.sh"
. "$here/bed/hosts.env"
HOSTILE=${SDP_HOSTILE:-$SDP_BUILD/tools/sdp_hostile}
SDP_PAIR=${SDP_PAIR:-$SDP_BUILD/tools/sdp_pair}
HEALTHY_BYTES=8388608   # per healthy transfer
LOG_RE='sdp: .*(connection aborted|bad Hello)'
COUNTERS=(AbortOnProtocolError AbortOnTransportError BadHellos)

counters() { local c; for c in "${COUNTERS[@]}"; do echo -n "$c=$(sdp_stat "$c") "; done; }
sdp_log() { dmesg | grep -E "$LOG_RE" || true; }

# hostile CASE PORT COUNTER REASON [concurrent]: runs one malformed case;
# REASON (a regex, or empty) is what the log line must say.  With
# "concurrent" other connections come and go, so no leak check here.
hostile() {
    local case=$1 port=$2 counter=$3 reason=$4 concurrent=${5:-} out rdma0 logs0 c l new peer want
    local -A c0
    sleep 1    # the log lines are rate-limited: 10 per 5 s at each call site
    rdma0=$(sdp_resources)
    for c in "${COUNTERS[@]}"; do c0[$c]=$(sdp_stat "$c"); done
    logs0=$(sdp_log | wc -l)
    out=$(timeout -k 5 150 "$HOSTILE" -c "$case" -p "$port") || { echo "$out"; return 1; }
    echo "$out"

    new=$(sdp_log | tail -n +$((logs0 + 1)))
    [[ -z $new ]] || while IFS= read -r l; do echo "log: $l"; done <<<"$new"
    [[ $(grep -c . <<<"$new") -eq 1 ]] || { echo "want exactly one new log line matching '$LOG_RE'"; return 1; }
    peer=$(grep -oE 'peer [0-9.]+:[0-9]+' <<<"$out" | cut -d' ' -f2)
    grep -qF "sdp: $peer: " <<<"$new" || { echo "the log line does not name the peer $peer"; return 1; }
    if [[ -n $reason ]]; then
        grep -qE "$reason" <<<"$new" || { echo "the log line does not say '$reason'"; return 1; }
    fi
    for c in "${COUNTERS[@]}"; do
        want=${c0[$c]}
        [[ $c == "$counter" ]] && want=$((want + 1))
        [[ $(sdp_stat "$c") -eq $want ]] || { echo "$c is $(sdp_stat "$c"), want $want"; return 1; }
    done
    [[ -n $concurrent ]] || sdp_wait_resources "$rdma0"
}

# CASE PORT: valid streams (the control; a SrcAvail with DisConn right
# behind it): read in full, the close is orderly, nothing logged
good() {
    local case=$1 port=$2 out rdma0 logs0 counters0 closes0 _
    rdma0=$(sdp_resources)
    counters0=$(counters)
    closes0=$(sdp_stat OrderlyCloses)
    logs0=$(sdp_log | wc -l)
    out=$(timeout -k 5 150 "$HOSTILE" -c "$case" -p "$port") || { echo "$out"; return 1; }
    echo "$out"
    [[ $(sdp_log | wc -l) -eq $logs0 ]] || { sdp_log | tail -n +$((logs0 + 1)); echo "a log line"; return 1; }
    [[ $(counters) == "$counters0" ]] || { echo "counters: $(counters), before: $counters0"; return 1; }
    for _ in $(seq 50); do    # the module counts it as it frees the connection
        (($(sdp_stat OrderlyCloses) > closes0)) && break
        sleep 0.2
    done
    [[ $(sdp_stat OrderlyCloses) -eq $((closes0 + 1)) ]] ||
        { echo "OrderlyCloses is $(sdp_stat OrderlyCloses), want $((closes0 + 1))"; return 1; }
    sdp_wait_resources "$rdma0"
}

# CASE PORT COUNTER REASON: the malformed cases (REASON: sdp_rx.c, sdp_cm.c)
MALFORMED=(
    "hello-version 19501 BadHellos unsupported.version"
    "hello-maxadverts0 19502 BadHellos MaxAdverts.0"
    "hello-short 19503 BadHellos -"
    "short-len 19504 AbortOnProtocolError message.shorter.than.its.header"
    "long-len 19505 AbortOnProtocolError length.field.does.not.match"
    "oversize 19506 AbortOnTransportError -"
    "unknown-mid 19507 AbortOnProtocolError unsupported.message.id"
    "credit-overflow 19508 AbortOnProtocolError payload.on.the.last.credit"
    "data-after-disconn 19509 AbortOnProtocolError message.after.DisConn"
    "disconn-payload 19516 AbortOnProtocolError wrong.length.for.its.id"
    "seq-order 19510 AbortOnProtocolError sequence.number.out.of.order"
    "srcavail-not-offered 19511 AbortOnProtocolError read.zero-copy.message,.not.offered"
    "srcavail-bad-rkey 19512 AbortOnTransportError -"
    "rdcompl-unsolicited 19513 AbortOnProtocolError RdmaRdCompl.for.bytes.never.offered"
    "no-rtu 19514 AbortOnProtocolError unsupported.message.id"
)

# the malformed cases again (ports +20) while sdp_pair moves HEALTHY_BYTES
# at a time, connection after connection, each checked with FNV-1a
healthy_connection_carries_on() {
    local dir rdma0 m case port counter reason bad=0
    dir=$(mktemp -d)
    rdma0=$(sdp_resources)
    healthy_start "$dir" 19590 "$HEALTHY_BYTES"
    for _ in $(seq 100); do    # until the first one is up
        awk -v p=":$(printf %04X 19590)$" '$2 ~ p && $4 == "01"' /proc/net/sdp | grep -q . && break
        sleep 0.1
    done
    for m in "${MALFORMED[@]}"; do
        read -r case port counter reason <<<"$m"
        [[ $reason == - ]] && reason=
        echo "-- $case"
        hostile "$case" $((port + 20)) "$counter" "$reason" concurrent || bad=1
        ((bad)) && break
    done
    healthy_stop "$dir" || bad=1
    rm -rf "$dir"
    ((!bad)) && sdp_wait_resources "$rdma0"
}

# A SrcAvail whose connection breaks while the sink has read none of it:
# send() returns an error, and the sink's RDMA Read of the advertised
# memory, through another connection, fails (sdp_hostile says how).
srcavail_after_abort() {
    local out rdma0
    sleep 1    # (the rate limit of the log lines)
    rdma0=$(sdp_resources)
    out=$(timeout -k 5 150 "$HOSTILE" -c srcavail-after-abort -p 19515) || { echo "$out"; return 1; }
    echo "$out"
    sdp_wait_resources "$rdma0"
}

[[ -x $HOSTILE && -x $SDP_PAIR ]] || { echo "no $HOSTILE or $SDP_PAIR: make userspace" >&2; exit 1; }
sleep 5    # a fresh rate-limit interval: earlier tests' log lines do not count
ktap_plan $((${#MALFORMED[@]} + 4))
ktap_run good good good 19500
ktap_run srcavail_then_disconn good srcavail-then-disconn 19517
for m in "${MALFORMED[@]}"; do
    read -r case port counter reason <<<"$m"
    [[ $reason == - ]] && reason=
    ktap_run "${case//-/_}" hostile "$case" "$port" "$counter" "$reason"
done
ktap_run srcavail_after_abort srcavail_after_abort
ktap_run healthy_connection_carries_on healthy_connection_carries_on
ktap_finish
