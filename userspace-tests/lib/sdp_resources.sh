# shellcheck shell=bash
# sdp_resources.sh: what SDP connections hold, for the leak checks of the
# shell tests: the RDMA objects of every device (pd, cq, qp, cm_id, mr
# counts, from `rdma resource`) and the number of SDP sockets.

sdp_resources() { rdma resource show; echo "sdp sockets: $(($(wc -l </proc/net/sdp) - 1))"; }

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
