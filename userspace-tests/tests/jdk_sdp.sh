#!/bin/bash
# jdk_sdp.sh: the JDK's own SDP support (-Dcom.sun.sdp.conf), with the
# Debian OpenJDK of the root the kernel boots in (17 on Debian 12, 21 on
# Debian 13).  A plain java.net server and client (java/SdpEcho.java) move
# a checksummed stream from host A to host B:
#  - without rules: over TCP, and sdp's connection counters do not move;
#  - with a bind rule at the server and a connect rule at the client: the
#    JDK converts both sockets (its debug output says so), sdp counts one
#    active and one passive open, the traffic crosses rxeA <-> rxeB, and
#    the server's checksum is that of the bytes sent;
#  - a connect rule against a server without one: the converted client's
#    connect fails with "Connection refused", as TCP's to a closed port.
# The JDK converts only with the IPv4 stack (its Linux SDP refuses IPv6).
# Env: SDP_JDK_BYTES  bytes per stream (default 4 MiB)
# shellcheck disable=SC2317,SC2329  # (the checks run through ktap_run)
# shellcheck disable=SC2001  # (sed prefixes every line of a program's output)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_resources.sh"
. "$here/lib/sdp_qperf.sh"
BYTES=${SDP_JDK_BYTES:-4194304}
CLASSES=${SDP_BUILD:-$here/../build}/java
JDK=$(find /usr/lib/jvm -maxdepth 1 -name 'java-*-openjdk-amd64' | sort | tail -n1)
JAVA=$JDK/bin/java
PORT=19811
WORK=$(mktemp -d /tmp/sdp-jdk.XXXX)
SERVER=''
T=120                            # what a JVM may take, start to end, under TCG

cat >"$WORK/sdp.conf" <<CONF
# the JDK's rules: sockets bound to, or connecting to, host B go SDP
bind $SDP_B4 *
connect $SDP_B4 *
CONF

cleanup() {
    [[ -z $SERVER ]] || { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }
    rm -rf "$WORK"
}
trap cleanup EXIT

# jvm RULES ARGS...: SdpEcho under RULES (sdp: the rules file; tcp: none)
jvm() {
    local rules=$1
    shift
    local opts=(-XX:TieredStopAtLevel=1 -Xmx128m -Djava.net.preferIPv4Stack=true)
    [[ $rules == tcp ]] || opts+=(-Dcom.sun.sdp.conf="$WORK/sdp.conf" -Dcom.sun.sdp.debug)
    timeout -k 5 "$T" "$JAVA" "${opts[@]}" -cp "$CLASSES" SdpEcho "$@"
}

# server_start RULES: SdpEcho's server on host B, its output in $WORK/server
server_start() {
    jvm "$1" server "$SDP_B4" "$PORT" >"$WORK/server" 2>&1 &
    SERVER=$!
    for _ in $(seq "$T"); do
        grep -qx listening "$WORK/server" && return 0
        kill -0 "$SERVER" 2>/dev/null || break
        sleep 1
    done
    cat "$WORK/server"
    kill "$SERVER" 2>/dev/null || true
    echo "the server did not listen"
    return 1
}

# server_end: waits for the server (bounded by its timeout), shows its output
server_end() {
    local rc=0
    wait "$SERVER" || rc=$?
    SERVER=''
    sed 's/^/server: /' "$WORK/server"
    return "$rc"
}

# stream RULES_SERVER RULES_CLIENT: one stream; checks what the counters say
stream() {
    local act0 pas0 out rc=0
    act0=$(sdp_stat ActiveOpens) pas0=$(sdp_stat PassiveOpens)
    server_start "$1"
    out=$(jvm "$2" client "$SDP_B4" "$PORT" "$BYTES" 2>&1) || rc=$?
    sed 's/^/client: /' <<<"$out"
    server_end || { echo "the server failed"; return 1; }
    if ((rc != 0)) || ! grep -q ' match$' <<<"$out"; then
        echo "the client's stream failed (exit status $rc)"
        return 1
    fi
    ACTIVE=$(($(sdp_stat ActiveOpens) - act0)) PASSIVE=$(($(sdp_stat PassiveOpens) - pas0))
    echo "sdp opens during the stream: $ACTIVE active, $PASSIVE passive"
    CLIENT_OUT=$out
}

jdk_found() {
    [[ -x $JAVA ]] || { echo "no Debian OpenJDK under /usr/lib/jvm (bed/install-deps installs it)"; return 1; }
    [[ -f $CLASSES/SdpEcho.class ]] || { echo "no $CLASSES/SdpEcho.class (make userspace)"; return 1; }
    "$JAVA" -version 2>&1
}

tcp_without_rules() {
    stream tcp tcp
    ((ACTIVE == 0 && PASSIVE == 0)) || { echo "sdp opened connections without rules"; return 1; }
}

sdp_by_rules() {
    local a0 b0 c0 d0 a1 b1 c1 d1
    read -r a0 b0 c0 d0 <<<"$(rxe_pkt_counts)"
    stream sdp sdp
    read -r a1 b1 c1 d1 <<<"$(rxe_pkt_counts)"
    grep -q "converted to SDP" "$WORK/server" || { echo "the JDK did not convert the server's socket"; return 1; }
    grep -q "converted to SDP" <<<"$CLIENT_OUT" || { echo "the JDK did not convert the client's socket"; return 1; }
    ((ACTIVE == 1 && PASSIVE == 1)) || { echo "want 1 active and 1 passive open"; return 1; }
    echo "packets $SDP_A_RDMA->$SDP_B_RDMA $((a1 - a0))/$((b1 - b0))," \
         "$SDP_B_RDMA->$SDP_A_RDMA $((c1 - c0))/$((d1 - d0)) (sent/received)"
    ((b1 - b0 > BYTES / 4096)) || { echo "fewer packets reached $SDP_B_RDMA than the stream needs"; return 1; }
}

connect_rule_without_sdp_server() {
    local out rc=0
    server_start tcp
    out=$(jvm sdp client "$SDP_B4" "$PORT" "$BYTES" 2>&1) || rc=$?
    sed 's/^/client: /' <<<"$out"
    kill "$SERVER" 2>/dev/null || true
    server_end || true
    ((rc != 0)) || { echo "the converted client reached a TCP-only server"; return 1; }
    grep -q "Connection refused" <<<"$out" || { echo "want Connection refused"; return 1; }
}

ktap_plan 4
ktap_run jdk_found jdk_found
ktap_run tcp_without_rules tcp_without_rules
ktap_run sdp_by_rules sdp_by_rules
ktap_run connect_rule_without_sdp_server connect_rule_without_sdp_server
ktap_finish
