# shellcheck shell=bash
# sdp_resources.sh: what SDP connections hold, for the leak checks of the
# shell tests: the RDMA objects of every device (cq, qp, cm_id, mr
# counts, from `rdma resource`) and the number of SDP sockets; and SDP's
# counters.

# (The PD and the SRQ of a device's receive pool are the device's, made by
# its first connection and freed 5 s after its last: not counted.)
sdp_resources() {
    rdma resource show | sed -E 's/ (pd|srq) [0-9]+//g'
    echo "sdp sockets: $(($(wc -l </proc/net/sdp) - 1))"
}

# sdp_wait_resources BEFORE: waits (bounded: teardown is asynchronous, and
# waits up to 8 s for a peer's DREP) until sdp_resources says BEFORE again;
# prints both and fails if it does not.
sdp_wait_resources() {
    local now _
    for _ in $(seq 150); do
        now=$(sdp_resources)
        [[ $now == "$1" ]] && return 0
        sleep 0.2
    done
    echo "before:"; echo "$1"; echo "now:"; echo "$now"; cat /proc/net/sdp; return 1
}

# SDP sockets alive in this namespace: /proc/net/sdp lists each from its
# allocation to its destructor.  (The slab's active count is no measure:
# SLUB counts the free objects of a CPU's own slab as active.)
sdp_socks() {
    local lines=()
    mapfile -t lines </proc/net/sdp
    echo $((${#lines[@]} - 1))
}

# sdp_wait_socks SOCKS_BEFORE [SECONDS]: waits (bounded, 10 s unless told:
# closed connections are torn down from a work item) until no more SDP
# sockets are alive than SOCKS_BEFORE; prints /proc/net/sdp and fails if
# more stay.
sdp_wait_socks() {
    local socks0=$1 s _
    for _ in $(seq $((${2:-10} * 5))); do
        s=$(sdp_socks)
        ((s <= socks0)) && break
        sleep 0.2
    done
    echo "SDP sockets alive: $socks0 before the test, $s after"
    ((s <= socks0)) || { cat /proc/net/sdp; echo "$((s - socks0)) SDP sockets leaked"; return 1; }
}

# sdp_stat NAME [FILE]: SDP's counter NAME (/proc/net/sdpstats, or FILE:
# a copy of it taken before).  In bash alone, as field (lib/sdp_ktest.sh);
# the file read whole at once: `read` seeks back after each line, and each
# seek makes the kernel print the counters anew, so that a line could
# start in the middle of a name.
sdp_stat() {
    local lines=() line re='^([^[:space:]]+)[[:space:]]+([^[:space:]]*)'
    mapfile -t lines <"${2:-/proc/net/sdpstats}"
    for line in "${lines[@]}"; do
        if [[ $line =~ $re && ${BASH_REMATCH[1]} == "$1" ]]; then
            printf '%s\n' "${BASH_REMATCH[2]}"
            return 0
        fi
    done
}

# sdp_test_module_unloads MODULE DEBUGFS_DIR SOCKS_BEFORE: rmmods a test
# module and waits (bounded: closed connections are torn down from a work
# item) until the caller's sdp_sockets_left says 0 and no more SDP sockets
# are alive than SOCKS_BEFORE.
sdp_test_module_unloads() {
    local mod=$1 dbg=$2 socks0=$3 n s _
    rmmod "$mod"
    ! grep -q "^$mod " /proc/modules || { echo "still loaded after rmmod"; return 1; }
    [[ ! -e $dbg ]] || { echo "$dbg is still there"; return 1; }
    for _ in $(seq 50); do
        n=$(sdp_sockets_left) s=$(sdp_socks)
        ((n == 0 && s <= socks0)) && break
        sleep 0.2
    done
    echo "SDP sockets alive: $socks0 before the test, $s after"
    ((n == 0)) || { cat /proc/net/sdp; echo "$n SDP sockets left on the test's ports"; return 1; }
    ((s <= socks0)) || { echo "$((s - socks0)) SDP sockets leaked"; return 1; }
}
