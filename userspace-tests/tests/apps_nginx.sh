#!/bin/bash
# apps_nginx.sh: nginx (one process, sendfile on) serving files to curl,
# unmodified, on SDP through sdp_run (lib/sdp_apps.sh).  curl fetches a
# large file, then a small one many times, on one keep-alive connection
# (curl counts the connections it made: one); every copy is the file
# served, byte for byte.
#  - sdp at both ends: nginx listens on SDP only, the connection is in
#    /proc/net/sdp (path sdp) while it runs, one SDP open at each end, and
#    SDP carried the files.
#  - curl under a `both` rule against an nginx that speaks only TCP: the
#    connection falls back (FallbackRefused +1, path tcp in /proc/net/sdp
#    while it runs), no SDP open.
#  - nginx under a `both` rule with a plain curl (FallbackAccepts +1, path
#    tcp), and an SDP curl of the same nginx, which gets SDP.
# Env: SDP_APPS_FILE_MIB  the large file (default 64 MiB)
#      SDP_APPS_REQUESTS  the small file's requests (default 50)
# shellcheck disable=SC2317,SC2329  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_apps.sh"
PORT=8080
FILE_MIB=${SDP_APPS_FILE_MIB:-64}
REQUESTS=${SDP_APPS_REQUESTS:-50}
WWW=$APPS_WORK/www NGX=$APPS_WORK/nginx GOT=$APPS_WORK/got

# server RULE PATH: nginx on host B under RULE, listening on PATH
server() {
    app_start server "$1" nginx -c "$NGX/nginx.conf" -e "$NGX/error.log"
    app_listens "$PORT" "$2"
}

# fetch RULE: curl under RULE gets the large file and the small one
# REQUESTS times over one connection, all intact
fetch() {
    local url=http://$SDP_B4:$PORT out i
    rm -rf "$GOT"
    mkdir -p "$GOT"
    out=$(app_run "$1" curl -sS --fail -w '%{http_code} %{num_connects}\n' \
          -o "$GOT/big" "$url/big" \
          -o "$GOT/small#1" "$url/small?[1-$REQUESTS]")
    [[ $(grep -c '^200 ' <<<"$out") == $((REQUESTS + 1)) ]] ||
        { echo "$out"; echo "not every request succeeded"; return 1; }
    [[ $(awk '{ n += $2 } END { print n }' <<<"$out") == 1 ]] ||
        { echo "$out"; echo "not one keep-alive connection"; return 1; }
    same_file "$WWW/big" "$GOT/big"
    for i in $(seq "$REQUESTS"); do same_file "$WWW/small" "$GOT/small$i"; done
    echo "$((REQUESTS + 1)) requests on one connection, every copy intact"
}

setup() {
    mkdir -p "$WWW" "$NGX"
    head -c $((FILE_MIB << 20)) /dev/urandom >"$WWW/big"
    head -c 4096 /dev/urandom >"$WWW/small"
    cat >"$NGX/nginx.conf" <<EOC
daemon off;
master_process off;
worker_processes 1;
pid $NGX/nginx.pid;
error_log $NGX/error.log info;
events { worker_connections 64; }
http {
    access_log $NGX/access.log;
    sendfile on;
    keepalive_requests 1000;
    client_body_temp_path $NGX;
    proxy_temp_path $NGX;
    fastcgi_temp_path $NGX;
    uwsgi_temp_path $NGX;
    scgi_temp_path $NGX;
    server { listen $SDP_B4:$PORT; root $WWW; }
}
EOC
}

sdp_both_ends() {
    apps_stats_mark
    server "use sdp server nginx $SDP_B4:$PORT" sdp
    app_watch_start "$PORT" sdp
    fetch "use sdp client curl $SDP_B4:$PORT"
    app_watch_saw
    app_stop server
    moved_by ActiveOpens 1
    moved_by PassiveOpens 1
    moved_at_least RxBytes $((FILE_MIB << 20))
}

both_client_tcp_server() {
    apps_stats_mark
    server "" tcp
    app_watch_start "$PORT" tcp
    fetch "use both client curl *:$PORT"
    app_watch_saw
    app_stop server
    moved_by FallbackRefused 1
    moved_by ActiveOpens 0
}

both_server_tcp_client() {
    apps_stats_mark
    server "use both server nginx *:$PORT" both
    app_watch_start "$PORT" tcp
    fetch ""
    app_watch_saw
    moved_by FallbackAccepts 1
    fetch "use sdp client curl *:$PORT"
    app_stop server
    moved_by PassiveOpens 1
    moved_by FallbackAccepts 1
}

apps_cases
