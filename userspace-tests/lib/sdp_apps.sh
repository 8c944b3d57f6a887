# shellcheck shell=bash
# sdp_apps.sh: real, unmodified programs on SDP through libsdp.so and
# sdp_run, for the apps_*.sh tests and the benchmark (source it after
# bed/hosts.env and lib/sdp_resources.sh).  Servers run on host B, clients
# on host A; every program is started under sdp_run with one rule, or
# without the library when the rule is empty (plain TCP).
#   app_start NAME RULE CMD...  CMD in the background, its output in
#                          APPS_WORK/NAME.log
#   app_wait NAME [SECONDS]  waits (60 s unless told) for NAME to exit on
#                          its own; fails, with its log, unless it exits 0
#   app_stop NAME          SIGTERM, then waits up to 20 s for it (SIGKILL
#                          after that); its log when it did not end well
#   app_run RULE CMD...    CMD in the foreground (bounded: 300 s)
#   app_listens PORT PATH  waits (30 s) until host B listens on PORT: on
#                          SDP only (PATH sdp), TCP only (tcp) or both; fails
#                          if the other kind listens too
#   app_watch_start PORT PATH  samples /proc/net/sdp in the background for
#                          a connection (any state but LISTEN) to or from
#                          PORT whose path is PATH (sdp, or tcp for a fallen
#                          socket)
#   app_watch_saw          stops the sampler; fails unless it saw one
#   apps_stats_mark        copies /proc/net/sdpstats, for:
#   moved_by NAME N        counter NAME moved by exactly N since the mark
#   moved_at_least NAME N  ... by N or more
#   same_file A B          B is a copy of A, byte for byte
#   iperf3_received        from iperf3 -J's output (stdin): the bytes the
#                          server received, and its bits per second
#   apps_cases             the plan and the cases of a client and server
#                          test: setup (if it has one), sdp_both_ends,
#                          both_client_tcp_server, both_server_tcp_client,
#                          then no SDP socket left behind

APPS_WORK=${APPS_WORK:-/run/sdp-apps}    # /run: the guest's own tmpfs
SDP_RUN=$SDP_TESTS_DIR/../libsdp/sdp_run
export LIBSDP_LIBRARY=$SDP_BUILD/libsdp/libsdp.so
declare -A APP_PID=()
APPS_SOCKETS0=$(sdp_socks)

# app_cmd RULE CMD...: becomes CMD (exec) under sdp_run with RULE, or
# plain if RULE is empty; in a subshell, so that a background one's pid is
# the program's
app_cmd() {
    local rule=$1
    shift
    if [[ -n $rule ]]; then exec "$SDP_RUN" -r "$rule" "$@"; else exec "$@"; fi
}

app_start() {
    local name=$1 rule=$2
    shift 2
    mkdir -p "$APPS_WORK"
    # (output away from ktap_run's, which would wait for the daemon)
    app_cmd "$rule" "$@" >"$APPS_WORK/$name.log" 2>&1 </dev/null &
    APP_PID[$name]=$!
    # (a case runs in a subshell of ktap_run: what it started ends with it)
    trap app_stop_all EXIT
}

# app_gone PID SECONDS: waits up to SECONDS for PID to end; fails if it lives
app_gone() {
    local _
    for _ in $(seq $(($2 * 10))); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    ! kill -0 "$1" 2>/dev/null
}

app_log() { echo "--- $1's output:"; tail -n 40 "$APPS_WORK/$1.log"; }

app_wait() {
    local name=$1 pid=${APP_PID[$1]} rc=0
    if ! app_gone "$pid" "${2:-60}"; then
        app_stop "$name"
        echo "$name did not end within ${2:-60} s"
        return 1
    fi
    wait "$pid" || rc=$?
    unset "APP_PID[$name]"
    ((rc == 0)) || { app_log "$name"; echo "$name: exit status $rc"; return 1; }
}

app_stop() {
    local name=$1 pid=${APP_PID[$1]:-} rc=0
    [[ -n $pid ]] || return 0
    kill "$pid" 2>/dev/null || true
    if ! app_gone "$pid" 20; then
        kill -KILL "$pid" 2>/dev/null || true
        echo "$name ignored SIGTERM for 20 s"
        rc=1
    fi
    wait "$pid" 2>/dev/null || true
    unset "APP_PID[$name]"
    ((rc == 0)) || app_log "$name"
    return $rc
}

# every program and sampler a case left running (on its exit)
app_stop_all() {
    local name
    for name in "${!APP_PID[@]}"; do app_stop "$name" >/dev/null || true; done
    [[ -z ${APP_WATCH:-} ]] || kill "$APP_WATCH" 2>/dev/null || true
}

app_run() {
    local rule=$1
    shift
    (app_cmd "$rule" timeout -k 5 300 "$@")
}

apps_port_hex() { printf '%04X' "$1"; }

# SDP listeners on PORT (any address)
apps_sdp_listeners() {
    awk -v p=":$(apps_port_hex "$1")" '$4 == "0A" && substr($2, length($2) - 4) == p' \
        /proc/net/sdp | wc -l
}

apps_tcp_listeners() { ss -Hltn "sport = :$1" | wc -l; }

app_listens() {
    local port=$1 path=$2 s t _
    for _ in $(seq 300); do
        s=$(apps_sdp_listeners "$port") t=$(apps_tcp_listeners "$port")
        case $path in
        sdp) ((s > 0 && t == 0)) && return 0 ;;
        tcp) ((t > 0 && s == 0)) && return 0 ;;
        both) ((s > 0 && t > 0)) && return 0 ;;
        esac
        sleep 0.1
    done
    cat /proc/net/sdp; ss -ltn
    echo "port $port: $s SDP and $t TCP listeners, want $path"
    return 1
}

app_watch_start() {
    local p
    p=":$(apps_port_hex "$1")"
    rm -f "$APPS_WORK/watch"
    mkdir -p "$APPS_WORK"
    # Any state but LISTEN counts: a short run may be past ESTABLISHED when
    # a poll comes round.
    while :; do
        if awk -v p="$p" -v path="$2" '
                $4 != "0A" && $NF == path &&
                (substr($2, length($2) - 4) == p || substr($3, length($3) - 4) == p) { f = 1 }
                END { exit !f }' /proc/net/sdp; then
            grep -v "^ *sl" /proc/net/sdp >"$APPS_WORK/watch"
            break
        fi
        sleep 0.05
    done >/dev/null 2>&1 &
    APP_WATCH=$!
    # the programs under test keep both CPUs busy: do not let them starve it
    renice -n -10 -p "$APP_WATCH" >/dev/null
    trap app_stop_all EXIT
}

app_watch_saw() {
    kill "$APP_WATCH" 2>/dev/null || true
    wait "$APP_WATCH" 2>/dev/null || true
    APP_WATCH=
    [[ -s $APPS_WORK/watch ]] || { echo "no connection seen in /proc/net/sdp"; return 1; }
    echo "seen in /proc/net/sdp while it ran:"
    cat "$APPS_WORK/watch"
}

apps_stats_mark() { mkdir -p "$APPS_WORK"; cp /proc/net/sdpstats "$APPS_WORK/sdpstats.mark"; }

apps_moved() { echo $(($(sdp_stat "$1") - $(sdp_stat "$1" "$APPS_WORK/sdpstats.mark"))); }

moved_by() {
    local m
    m=$(apps_moved "$1")
    ((m == $2)) || { echo "$1 moved by $m, want $2"; return 1; }
}

moved_at_least() {
    local m
    m=$(apps_moved "$1")
    ((m >= $2)) || { echo "$1 moved by $m, want $2 or more"; return 1; }
}

same_file() {
    cmp "$1" "$2" || { echo "$2 is not a copy of $1"; return 1; }
}

iperf3_received() {
    python3 -c 'import json, sys
e = json.load(sys.stdin)["end"]["sum_received"]
print(e["bytes"], int(e["bits_per_second"]))'
}

apps_no_socket_left() { rm -rf "$APPS_WORK"; sdp_wait_socks "$APPS_SOCKETS0"; }

apps_cases() {
    local cases=(sdp_both_ends both_client_tcp_server both_server_tcp_client) c
    ! declare -F setup >/dev/null || cases=(setup "${cases[@]}")
    ktap_plan $((${#cases[@]} + 1))
    for c in "${cases[@]}"; do ktap_run "$c" "$c"; done
    ktap_run no_socket_left apps_no_socket_left
    ktap_finish
}
