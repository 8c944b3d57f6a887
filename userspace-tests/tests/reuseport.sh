#!/bin/bash
# reuseport.sh: SDP listeners that share a port with SO_REUSEPORT, through
# the test module kmod-read-sock/sdp_reuseport_test.c (built by `make
# userspace`, insmod-ed from build/): user space cannot set SO_REUSEPORT on
# an SDP socket, in-kernel users can.  Two listeners on host B's address
# and one port take host A's connections round robin; a socket without
# SO_REUSEPORT cannot bind there meanwhile; when one closes, the other
# takes them all; when both close, a connect is refused and the port is
# free.  The module unloads and no SDP socket is left behind.
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/lib/sdp_ktest.sh"
. "$here/bed/hosts.env"
KO=${SDP_REUSEPORT_KO:-$SDP_BUILD/kmod-read-sock/$(uname -r)/sdp_reuseport_test.ko}
DBG=/sys/kernel/debug/sdp_reuseport_test
PORT=19410
T=60    # seconds one connect or bind may take at most

loaded() { grep -q "^sdp_reuseport_test " /proc/modules; }

# count NAME: the value of NAME=... in the module's counts
count() { field "$1" "$(cat "$DBG/counts")"; }

# sdp_sock OP ADDR: one SDP socket of user space; OP is "connect" (from
# host A to ADDR:PORT, then close) or "bind" (to ADDR:PORT, no options).
# Prints "ok" or the errno's name.  Python parses addresses only of the
# families it knows: the SDP socket's descriptor is handed to an AF_INET
# socket object, SDP takes AF_INET addresses.
sdp_sock() {
    timeout -k 5 "$T" python3 - "$1" "$2" "$PORT" "$SDP_A4" <<'EOF'
import errno, socket, sys
op, addr, port, local = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
fd = socket.socket(27, socket.SOCK_STREAM).detach()
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 0, fileno=fd)
try:
    if op == "connect":
        s.bind((local, 0))
        s.connect((addr, port))
    else:
        s.bind((addr, port))
    print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
finally:
    s.close()
EOF
}

# connects N: N connects from host A, each one must succeed
connects() {
    local i r
    for ((i = 0; i < $1; i++)); do
        r=$(sdp_sock connect "$SDP_B4")
        [[ $r == ok ]] || { echo "connect $((i + 1)) of $1: $r"; return 1; }
    done
}

# wait_accepted TOTAL: until the listeners accepted TOTAL in all; a
# connect returns before the passive side is established
wait_accepted() {
    local n=0
    for _ in $(seq 150); do
        n=$(($(count listener1) + $(count listener2)))
        ((n >= $1)) && break
        sleep 0.2
    done
    cat "$DBG/counts"
    ((n == $1)) || { echo "accepted $n, want $1"; return 1; }
    [[ $(count error1) == 0 && $(count error2) == 0 ]] || { echo "an accept failed"; return 1; }
}

module_loads() {
    [[ -f $KO ]] || { echo "no $KO: run make read-sock-test"; return 1; }
    ! loaded || rmmod sdp_reuseport_test
    insmod "$KO"
    [[ -w $DBG/listen && -w $DBG/close1 && -w $DBG/close && -r $DBG/counts ]] ||
        { echo "no $DBG/{listen,close1,close,counts}"; return 1; }
    cat "$DBG/counts"
}

two_listeners() {
    echo "$SDP_B4 $PORT" >"$DBG/listen"
    cat "$DBG/counts"
    [[ $(count open1) == 1 && $(count open2) == 1 ]] || { echo "not both open"; return 1; }
    # a second pair on the same port is refused while these are open
    if echo "$SDP_B4 $PORT" >"$DBG/listen" 2>/dev/null; then
        echo "listen accepted while the listeners are open"; return 1
    fi
}

bind_without_reuseport_refused() {
    local r
    r=$(sdp_sock bind "$SDP_B4")
    [[ $r == EADDRINUSE ]] || { echo "bind to the listeners' port: $r, want EADDRINUSE"; return 1; }
}

# Round robin over the two: 8 connects, 4 each.
round_robin() {
    connects 8
    wait_accepted 8
    (($(count listener1) == 4 && $(count listener2) == 4)) ||
        { echo "not 4 and 4: the group's requests do not go round robin"; return 1; }
}

close_first() {
    echo 1 >"$DBG/close1"
    cat "$DBG/counts"
    [[ $(count open1) == 0 && $(count open2) == 1 ]] || { echo "listener 1 is not the one closed"; return 1; }
    connects 4
    wait_accepted 12
    (($(count listener1) == 4 && $(count listener2) == 8)) ||
        { echo "want listener1=4 listener2=8: listener 2 alone takes them"; return 1; }
    bind_without_reuseport_refused
}

close_both() {
    local r
    echo 1 >"$DBG/close"
    cat "$DBG/counts"
    [[ $(count open1) == 0 && $(count open2) == 0 ]] || { echo "not both closed"; return 1; }
    r=$(sdp_sock connect "$SDP_B4")
    [[ $r == ECONNREFUSED ]] || { echo "connect with no listener: $r, want ECONNREFUSED"; return 1; }
    r=$(sdp_sock bind "$SDP_B4")
    [[ $r == ok ]] || { echo "bind once the listeners closed: $r, want ok"; return 1; }
    (($(count listener1) + $(count listener2) == 12)) || { echo "accepted more than 12"; return 1; }
}

# SDP sockets on the test's port, from /proc/net/sdp
sdp_sockets_left() { grep -c ":$(printf '%04X' "$PORT") " /proc/net/sdp || true; }

SOCKS0=$(sdp_socks)

module_unloads_clean() { sdp_test_module_unloads sdp_reuseport_test "$DBG" "$SOCKS0"; }

ktap_plan 7
ktap_run module_loads module_loads
ktap_run two_listeners two_listeners
ktap_run bind_without_reuseport_refused bind_without_reuseport_refused
ktap_run round_robin round_robin
ktap_run close_first close_first
ktap_run close_both close_both
ktap_run module_unloads_clean module_unloads_clean
ktap_finish
