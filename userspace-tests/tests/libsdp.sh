#!/bin/bash
# libsdp.sh: unmodified TCP programs on SDP through libsdp.so and sdp_run.
# tcp_xfer, a plain TCP client and server (accept4, epoll, non-blocking
# connect), moves data checked by hash between hosts A and B under rules:
# sdp at both ends, both against a TCP-only peer at either end, rules that
# match nothing, children that inherit the library, and sdp.ko absent.
# What path each took shows in /proc/net/sdpstats; the programs check
# that their descriptors kept their flags and their names' family.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_apps.sh"    # (sdp_run, and the counters' moves)
XFER=$SDP_BUILD/tools/tcp_xfer
PORT=47100
BYTES=${SDP_LIBSDP_BYTES:-1000000}

# serve N [RULE]: a tcp_xfer server on host B, port PORT, for N connections,
# under sdp_run with RULE if given; waits until it listens
serve() {
    local n=$1
    shift
    coproc SERVER { if (($#)); then "$SDP_RUN" -r "$1" "$XFER" server "$SDP_B4" "$PORT" "$n"
                    else "$XFER" server "$SDP_B4" "$PORT" "$n"; fi 2>&1; }
    # shellcheck disable=SC2153  # (coproc sets it; bash unsets it when the server ends)
    server_pid=$SERVER_PID
    wait_listening
}

# the server coprocess says it listens (within 30 s)
wait_listening() {
    local line=''
    if ! read -r -t 30 line <&"${SERVER[0]}" || [[ $line != listening ]]; then
        echo "server: $line"; return 1
    fi
}

serve_done() {
    local rc=0
    wait "$server_pid" || rc=$?
    ((rc == 0)) || echo "server exit status $rc"
    return $rc
}

sdp_both_ends() {
    apps_stats_mark
    serve 2 "use sdp server tcp_xfer $SDP_B4:$PORT"
    "$SDP_RUN" -r "use sdp client * $SDP_B4:$PORT" "$XFER" client "$SDP_B4" $PORT "$BYTES"
    "$SDP_RUN" -r "use sdp client * $SDP_B4:$PORT" "$XFER" client -n "$SDP_B4" $PORT "$BYTES"
    serve_done
    moved_by ActiveOpens 2
    moved_by PassiveOpens 2
}

both_client_tcp_server() {
    apps_stats_mark
    serve 2
    "$SDP_RUN" -r "use both client * *:$PORT" "$XFER" client "$SDP_B4" $PORT "$BYTES"
    "$SDP_RUN" -r "use both client * *:$PORT" "$XFER" client -n "$SDP_B4" $PORT "$BYTES"
    serve_done
    moved_by FallbackRefused 2
    moved_by ActiveOpens 0
}

both_server_tcp_client() {
    apps_stats_mark
    serve 2 "use both server * *:$PORT"
    "$XFER" client "$SDP_B4" $PORT "$BYTES"                 # TCP
    "$SDP_RUN" -r "use sdp client * *:$PORT" "$XFER" client "$SDP_B4" $PORT "$BYTES"
    serve_done
    moved_by FallbackAccepts 1
    moved_by PassiveOpens 1
}

no_rule_matches() {
    apps_stats_mark
    serve 1 "use sdp server * *:$((PORT + 1))"
    "$SDP_RUN" -r "use sdp client other-program *:*" -r "use sdp * * 10.1.0.0/16:*" \
        "$XFER" client "$SDP_B4" $PORT "$BYTES"
    serve_done
    moved_by ActiveOpens 0
    moved_by PassiveOpens 0
}

children_inherit() {
    apps_stats_mark
    serve 1 "use sdp server * *:$PORT"
    "$SDP_RUN" -r "use sdp client * *:$PORT" sh -c "\"$XFER\" client $SDP_B4 $PORT $BYTES"
    serve_done
    moved_by ActiveOpens 1
}

# ipv6: the same over IPv6, rules with an IPv6 prefix
ipv6_both_ends() {
    apps_stats_mark
    coproc SERVER { "$SDP_RUN" -r "use sdp server * [fd99::]/64:$PORT" "$XFER" server "$SDP_B6" "$PORT" 1 2>&1; }
    # shellcheck disable=SC2153
    server_pid=$SERVER_PID
    wait_listening
    "$SDP_RUN" -r "use both client * [$SDP_B6]:$PORT" "$XFER" client "$SDP_B6" $PORT "$BYTES"
    serve_done
    moved_by ActiveOpens 1
    moved_by PassiveOpens 1
}

# sdp.ko absent (unloaded, autoloading off): both stays TCP; sdp fails
# with ENETUNREACH and one log line; the rules file's faults, once each
without_module() {
    local modprobe out rc=0 _
    modprobe=$(cat /proc/sys/kernel/modprobe)
    # (the connections of the tests before close in the background)
    for _ in $(seq 100); do rmmod sdp 2>/dev/null && break; sleep 0.2; done
    ! grep -q "^sdp " /proc/modules || { echo "sdp.ko stays loaded"; return 1; }
    echo /bin/false >/proc/sys/kernel/modprobe
    serve 1
    "$SDP_RUN" -r "use both client * *:$PORT" "$XFER" client "$SDP_B4" $PORT "$BYTES" || rc=1
    out=$("$SDP_RUN" -r "use sdp client * *:$PORT" "$XFER" client "$SDP_B4" $PORT "$BYTES" 2>&1) && rc=1
    # (the server's one connection: the TCP one)
    serve_done || rc=1
    echo "$modprobe" >/proc/sys/kernel/modprobe
    if [[ -n ${SDP_MODULE_FILE:-} ]]; then insmod "$SDP_MODULE_FILE"; else modprobe sdp; fi
    echo "$out"
    ((rc == 0)) || return 1
    grep -q "Network is unreachable" <<<"$out"
    [[ $(grep -c "libsdp" <<<"$out") == 1 ]]
}

rules_file_faults() {
    local conf=/tmp/libsdp.test.conf out
    printf 'use sdp client * *:1\nuse nonsense here\nuse both * * 10.0.0.300:1\n' >"$conf"
    out=$("$SDP_RUN" -c "$conf" sh -c 'true; true' 2>&1)
    echo "$out"
    [[ $(grep -c "libsdp" <<<"$out") == 2 ]]
    grep -q "$conf:2: " <<<"$out"
    grep -q "$conf:3: " <<<"$out"
    out=$("$SDP_RUN" -c /nonexistent/libsdp.conf true 2>&1)
    echo "$out"
    grep -q "cannot read /nonexistent/libsdp.conf.*TCP everywhere" <<<"$out"
}

# Secure execution: libsdp.so in /etc/ld.so.preload (a private copy of
# /etc in a mount namespace), a setuid program run by root: none of its
# LIBSDP_* variables is read (no rules file of the user's choice printed,
# no log file of theirs appended to), and a log file of the system's
# rules is refused.  The same program without the setuid bit reads them:
# the control, which shows the check can fail.
secure_execution() {
    unshare --mount --propagation private bash -euc '
        lib=$1
        mount -t tmpfs none /tmp    # (a fresh one: setuid works there)
        mkdir /tmp/etc
        cp -a /etc/. /tmp/etc/ 2>/dev/null || true
        echo "$lib" >/tmp/etc/ld.so.preload
        echo "log destination file /tmp/log-of-etc" >/tmp/etc/libsdp.conf
        echo "SECRET-LINE-4711" >/tmp/secret
        cp /bin/true /tmp/plain-true
        cp /bin/true /tmp/suid-true
        chown nobody /tmp/suid-true
        chmod 4755 /tmp/suid-true
        mount --bind /tmp/etc /etc
        # (from here on every program loads libsdp.so and reads
        # /etc/libsdp.conf: the two runs alone, the rest builtins)
        run() {
            LIBSDP_CONFIG_FILE=/tmp/secret LIBSDP_DEBUG=1 \
                LIBSDP_RULES="log destination file /tmp/log-of-$1" "/tmp/$1-true" 2>&1
        }
        plain=$(run plain)
        suid=$(run suid)
        echo "plain: $plain"
        echo "setuid: $suid"
        [[ $plain == *SECRET-LINE-4711* ]] ||
            { echo "control: the plain program did not print the LIBSDP_CONFIG_FILE line"; exit 1; }
        [[ -e /tmp/log-of-plain ]] ||
            { echo "control: the plain program did not open the LIBSDP_RULES log file"; exit 1; }
        [[ ! -e /tmp/log-of-suid ]] || { echo "setuid: LIBSDP_RULES made it write /tmp/log-of-suid"; exit 1; }
        [[ $suid != *SECRET-LINE-4711* ]] || { echo "setuid: it printed the LIBSDP_CONFIG_FILE line"; exit 1; }
        [[ ! -e /tmp/log-of-etc ]] || { echo "setuid: it opened the log file of /etc/libsdp.conf"; exit 1; }
        [[ $suid != *"secure execution"* ]] ||
            { echo "setuid: it told of its secure execution (every setuid program would)"; exit 1; }
    ' secure_execution "$LIBSDP_LIBRARY"
}

# What libsdp carries onto the SDP socket, or why it leaves one TCP: a
# program's SO_BINDTODEVICE and SO_MARK are still there once its socket
# is SDP (SOL_SDP answers); one with a TCP-MD5 key stays TCP
options_kept() {
    local out
    out=$("$SDP_RUN" -r "use sdp client * *:47399" python3 -c '
import socket, struct, sys
def sdp(s):
    try:
        s.getsockopt(1025, 2)
        return "sdp"
    except OSError:
        return "tcp"
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"va")
s.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, 7)
try:
    s.connect((sys.argv[1], 47399))
except OSError:
    pass
print(sdp(s), s.getsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, 16).rstrip(b"\0").decode(),
      s.getsockopt(socket.SOL_SOCKET, socket.SO_MARK))
m = socket.socket()
key = struct.pack("=H", socket.AF_INET) + struct.pack("!H", 0) + socket.inet_aton(sys.argv[1]) + bytes(120) + struct.pack("=BBHI", 0, 0, 4, 0) + b"sdp!" + bytes(76)
m.setsockopt(socket.IPPROTO_TCP, 14, key)    # TCP_MD5SIG
m.setblocking(False)    # (no answer comes: B sends no signed reset)
try:
    m.connect((sys.argv[1], 47399))
except OSError:
    pass
print(sdp(m))
' "$SDP_B4" 2>&1)
    echo "$out"
    [[ $out == "sdp va 7
tcp" ]]
}

# The sockets libsdp makes (the SDP one, the probe of the defaults) are
# close-on-exec from their first moment: another thread's fork and exec
# meanwhile must not take a connection along.  The program, Python, makes
# its own close-on-exec too, so every socket() seen must be.
sockets_close_on_exec() {
    local out
    out=$(LD_PRELOAD="$SDP_BUILD/shims/socket_flags.so" "$SDP_RUN" -r "use sdp client * *:47399" \
        python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
try:
    s.connect((sys.argv[1], 47399))
except OSError:
    pass
print("domain", s.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN))
' "$SDP_B4" 2>&1)
    echo "$out"
    grep -q '^socket_flags: 27 ' <<<"$out" || { echo "the shim saw no SDP socket made"; return 1; }
    grep -q '^domain 27$' <<<"$out" || { echo "the socket did not become SDP"; return 1; }
    ! grep -q '^socket_flags: .* inherit$' <<<"$out"
}

ktap_plan 11
ktap_run sdp_both_ends sdp_both_ends
ktap_run both_client_tcp_server both_client_tcp_server
ktap_run both_server_tcp_client both_server_tcp_client
ktap_run no_rule_matches no_rule_matches
ktap_run children_inherit children_inherit
ktap_run ipv6_both_ends ipv6_both_ends
ktap_run rules_file_faults rules_file_faults
ktap_run secure_execution secure_execution
ktap_run options_kept options_kept
ktap_run sockets_close_on_exec sockets_close_on_exec
ktap_run without_module without_module
ktap_finish
