#!/bin/bash
# policy.sh: the host's policy holds over SDP's TCP fallback.  The TCP
# socket a fallback carries is the program's own, as its socket() would
# make it: owned by its user (what SO_REUSEPORT's owner check, nftables'
# meta skuid and ss see) and in its cgroup (nftables' socket cgroupv2,
# cgroup BPF), though the RDMA CM's worker, root and in no cgroup of the
# program's, is where the fallback happens.  And an unprivileged user
# cannot use a fallback's socket to make a root-owned SO_REUSEPORT group
# that a root service then joins.  A user's connections are bounded per
# namespace (max_user_conns): past it, ENOBUFS, and the others' go on.
# Ports below ip_unprivileged_port_start and network namespaces hold as
# for TCP.
# shellcheck disable=SC2317  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/bed/hosts.env"
USER_UID=65534    # nobody
CGROUP=/sys/fs/cgroup/sdp-policy-test

# py [USER] CODE ARGS...: Python as USER (root if none), with the SDP
# constants of kmod/include/uapi/linux/sdp.h
py() {
    local user=root
    [[ $1 == nobody ]] && { user=nobody; shift; }
    local code="import ctypes, errno, os, socket, struct, sys, time
AF_INET_SDP, SOL_SDP, SDP_FALLBACK = 27, 1025, 1
libc = ctypes.CDLL(None, use_errno=True)

def sdp_call(name, s, ip, port):
    # (Python's socket knows no family 27's addresses: libc's own call)
    sa = struct.pack('=H', socket.AF_INET) + struct.pack('!H', port) + socket.inet_aton(ip) + bytes(8)
    if getattr(libc, name)(s.fileno(), sa, len(sa)):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
$1"
    shift
    [[ -z ${CGROUP_JOIN:-} ]] || echo $BASHPID >"$CGROUP_JOIN"
    if [[ $user == nobody ]]; then
        exec setpriv --reuid=$USER_UID --regid=$USER_UID --clear-groups python3 -c "$code" "$@"
    else
        exec python3 -c "$code" "$@"
    fi
}

# tcp_listener PORT: a root TCP listener on host B that accepts and holds
# its connections (SO_REUSEPORT when REUSEPORT=1); prints its pid
tcp_listener() {
    py "
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, int(sys.argv[3]))
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(16)
print('listening', flush=True)
held = []
while True:
    held.append(s.accept()[0])
" "$SDP_B4" "$1" "${REUSEPORT:-0}" >/tmp/policy-listener.$1 2>&1 &
    echo $!
    for _ in $(seq 100); do grep -q listening "/tmp/policy-listener.$1" && return 0; sleep 0.1; done
    cat "/tmp/policy-listener.$1" >&2
    return 1
}

# the TCP connections to host B's PORT, as ss shows them with their owner
# and cgroup (ss -e: uid; --cgroup: cgroup)
conns_to() { ss -Htne --cgroup state established "dst $SDP_B4:$1"; }

# A program of user nobody, in a cgroup of its own, whose SDP connect()
# falls back (a TCP listener alone on the port): its connection is
# nobody's and in that cgroup.
fallback_is_the_programs() {
    local port=47301 lpid ppid line rc=0
    lpid=$(tcp_listener $port)
    mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
    mkdir -p "$CGROUP"
    # (the shell joins the cgroup, then becomes the program)
    CGROUP_JOIN=$CGROUP/cgroup.procs py nobody "
s = socket.socket(AF_INET_SDP, socket.SOCK_STREAM)
s.setsockopt(SOL_SDP, SDP_FALLBACK, 1)
sdp_call('connect', s, sys.argv[1], int(sys.argv[2]))
print('connected', flush=True)
time.sleep(30)
" "$SDP_B4" $port >/tmp/policy-client 2>&1 &
    ppid=$!
    for _ in $(seq 200); do grep -q connected /tmp/policy-client && break; sleep 0.1; done
    line=$(conns_to $port) || true
    echo "client: $(cat /tmp/policy-client)"
    echo "ss: $line"
    kill "$ppid" "$lpid" 2>/dev/null || true
    wait "$ppid" "$lpid" 2>/dev/null || true
    rmdir "$CGROUP" 2>/dev/null || true
    grep -q connected /tmp/policy-client || { echo "the fallback did not connect"; return 1; }
    [[ $line == *" uid:$USER_UID "* ]] || { echo "the fallback's TCP socket is not owned by uid $USER_UID"; rc=1; }
    [[ $line == *"cgroup:/sdp-policy-test"* ]] || { echo "the fallback's TCP socket is not in the program's cgroup"; rc=1; }
    return $rc
}

# User nobody binds an SDP socket with fallback to port P (SDP's ports
# are not TCP's: nothing holds P) and connects where nothing listens; the
# fallback's TCP socket, bound to P, is left to it, which sets
# SO_REUSEPORT and listens.  Then a root service that listens on P with
# SO_REUSEPORT must be refused (EADDRINUSE), as beside a TCP listener of
# nobody's: were the fallback's socket root's, the service would join
# nobody's group, and nobody would take a share of its connections.
reuseport_owner_is_the_programs() {
    local port=47302 upid out rc=0
    py nobody "
s = socket.socket(AF_INET_SDP, socket.SOCK_STREAM)
s.setsockopt(SOL_SDP, SDP_FALLBACK, 1)
sdp_call('bind', s, sys.argv[1], int(sys.argv[2]))
try:
    sdp_call('connect', s, sys.argv[1], int(sys.argv[3]))
    print('connect: ok', flush=True)
except OSError as e:
    print('connect:', errno.errorcode[e.errno], flush=True)
s = socket.socket(fileno=s.detach())    # (a TCP socket now: the fallback's)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.listen(16)
print('listening', flush=True)
time.sleep(30)
" "$SDP_B4" $port 47399 >/tmp/policy-user 2>&1 &
    upid=$!
    for _ in $(seq 200); do grep -qE '^listening|Error' /tmp/policy-user && break; sleep 0.1; done
    out=$(py "
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
try:
    s.bind((sys.argv[1], int(sys.argv[2])))
    s.listen(16)
    print('root: listening')
except OSError as e:
    print('root:', errno.errorcode[e.errno])
" "$SDP_B4" $port 2>&1) || true
    cat /tmp/policy-user
    echo "$out"
    ss -Htlne "sport = :$port"
    kill "$upid" 2>/dev/null || true
    wait "$upid" 2>/dev/null || true
    grep -q '^listening' /tmp/policy-user || { echo "nobody's program did not get to listen on the fallback's socket"; return 1; }
    [[ $out == 'root: EADDRINUSE' ]] || { echo "root's SO_REUSEPORT listener joined nobody's group"; rc=1; }
    return $rc
}

# max_user_conns 4: user nobody's sdp_many holds 2 connections open and
# idle (4 ends, each counted); then root's connect() of one more gets
# ENOBUFS at once, counted once in ConnLimitDrops (root's user sockets
# count too: only the kernel's, as NFS's, do not); once nobody's are
# gone, root's connections carry data again
user_connections_bounded() {
    local param=/sys/module/sdp/parameters/max_user_conns max0 drops0 res0 out line='' rc=0
    local many=$SDP_BUILD/tools/sdp_many
    max0=$(<$param)
    drops0=$(sdp_stat ConnLimitDrops)
    res0=$(sdp_resources)
    echo 4 >$param
    coproc HOLDER { setpriv --reuid=$USER_UID --regid=$USER_UID --clear-groups \
                        timeout 120 "$many" -n 2 -s 0 -w -q 2>&1; }
    read -r -t 60 line <&"${HOLDER[0]}" || true
    [[ $line == ready ]] || { echo "nobody's 2 connections at the bound: $line"; rc=1; }
    out=$(timeout 60 "$many" -n 1 -s 0 2>&1) && { echo "a connection past the bound went through"; rc=1; }
    echo "$out"
    eval "exec ${HOLDER[1]}>&-"    # (its stdin closes: it ends)
    wait "$HOLDER_PID" 2>/dev/null || true
    echo "$max0" >$param
    [[ $out == *"connect 0: No buffer space available"* ]] || { echo "want connect() to fail with ENOBUFS"; rc=1; }
    [[ $(sdp_stat ConnLimitDrops) == $((drops0 + 1)) ]] ||
        { echo "ConnLimitDrops went from $drops0 to $(sdp_stat ConnLimitDrops), want +1"; rc=1; }
    sdp_wait_resources "$res0" || rc=1
    out=$(timeout 120 "$many" -n 4 -s 65536 2>&1) || { echo "$out"; echo "root's connections after it failed"; rc=1; }
    return $rc
}

# As TCP: user nobody's bind() below ip_unprivileged_port_start gets
# EACCES, on SDP as on TCP (the control); at the start, both bind
unprivileged_low_port() {
    local out start
    start=$(</proc/sys/net/ipv4/ip_unprivileged_port_start)
    out=$(py nobody "
for fam in (socket.AF_INET, AF_INET_SDP):
    for port in (int(sys.argv[2]) - 1, int(sys.argv[2])):
        s = socket.socket(fam, socket.SOCK_STREAM)
        try:
            sdp_call('bind', s, sys.argv[1], port)
            print(fam, port, 'ok')
        except OSError as e:
            print(fam, port, errno.errorcode[e.errno])
        s.close()
" "$SDP_B4" "$start" 2>&1)
    echo "$out"
    [[ $out == "2 $((start - 1)) EACCES
2 $start ok
27 $((start - 1)) EACCES
27 $start ok" ]]
}

# A network namespace sees its own devices and sockets only: in a new
# one, no SDP socket of the host's in /proc/net/sdp, and no RDMA device
# routes to host B (ENETUNREACH, as TCP there)
namespace_sees_its_own() {
    local out holder line='' rc=0
    coproc HOLD { timeout 60 "$SDP_BUILD/tools/sdp_many" -n 1 -s 0 -w -q 2>&1; }
    read -r -t 60 line <&"${HOLD[0]}" || true
    [[ $line == ready ]] || { echo "no connection to hold: $line"; rc=1; }
    holder=$(($(wc -l </proc/net/sdp) - 1))
    out=$(unshare --net bash -c 'ip link set lo up
        echo "sockets: $(($(wc -l </proc/net/sdp) - 1))"
        python3 -c "
import ctypes, errno, os, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
for fam in (socket.AF_INET, 27):
    s = socket.socket(fam, socket.SOCK_STREAM)
    sa = struct.pack(\"=H\", socket.AF_INET) + struct.pack(\"!H\", 5001) + socket.inet_aton(sys.argv[1]) + bytes(8)
    r = libc.connect(s.fileno(), sa, len(sa))
    print(fam, errno.errorcode.get(ctypes.get_errno(), \"?\") if r else \"connected\")
" '"$SDP_B4" 2>&1)
    eval "exec ${HOLD[1]}>&-"
    wait "$HOLD_PID" 2>/dev/null || true
    echo "host: $holder SDP sockets; in a new namespace: $out"
    ((holder >= 3)) || { echo "want the held connection's 3 sockets in the host's /proc/net/sdp"; rc=1; }
    [[ $out == "sockets: 0
2 ENETUNREACH
27 ENETUNREACH" ]] || rc=1
    return $rc
}

# SO_BINDTODEVICE on a listener, as TCP: bound to va (host A's veth),
# host B's listener takes no connection, which comes in on vb; bound to
# vb, it does.  TCP first, the reference, then SDP.
listener_bound_to_device() {
    local out
    out=$(py "
def attempt(fam, dev, port):
    l = socket.socket(fam, socket.SOCK_STREAM)
    l.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
    sdp_call('bind', l, sys.argv[1], port)
    l.listen(4)
    c = socket.socket(fam, socket.SOCK_STREAM)
    try:
        sdp_call('connect', c, sys.argv[1], port)
        r = 'connected'
    except OSError as e:
        r = errno.errorcode[e.errno]
    c.close()
    l.close()
    return r
for fam in (socket.AF_INET, AF_INET_SDP):
    print(fam, attempt(fam, 'va', 47311 + fam), attempt(fam, 'vb', 47351 + fam))
" "$SDP_B4" 2>&1)
    echo "$out"
    [[ $out == "2 ECONNREFUSED connected
27 ECONNREFUSED connected" ]]
}

ktap_plan 6
ktap_run fallback_is_the_programs fallback_is_the_programs
ktap_run reuseport_owner_is_the_programs reuseport_owner_is_the_programs
ktap_run user_connections_bounded user_connections_bounded
ktap_run unprivileged_low_port unprivileged_low_port
ktap_run namespace_sees_its_own namespace_sees_its_own
ktap_run listener_bound_to_device listener_bound_to_device
ktap_finish
