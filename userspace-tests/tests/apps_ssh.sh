#!/bin/bash
# apps_ssh.sh: OpenSSH's sshd, ssh and scp, unmodified, on SDP through
# sdp_run (lib/sdp_apps.sh).  sshd (its own host key, key login as root)
# runs on host B; ssh sends a file to `sha256sum` there, and scp (which runs
# ssh as its child: the library goes with it) copies the file over: both
# see the file's checksum on host B.
#  - sdp at both ends: sshd listens on SDP only, the session is in
#    /proc/net/sdp (path sdp) while it runs, one SDP open per session.
#  - ssh and scp under a `both` rule against an sshd that speaks only TCP:
#    each connection falls back (FallbackRefused +2), no SDP open.
#  - sshd under a `both` rule with a plain ssh (FallbackAccepts +1), and an
#    scp on SDP to the same sshd, which gets SDP.
# Env: SDP_APPS_SSH_BYTES  the file's size (default 4 MiB)
# shellcheck disable=SC2317,SC2329  # (the checks run through ktap_run)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/lib/ktap.sh"
. "$here/lib/sdp_resources.sh"
. "$here/bed/hosts.env"
. "$here/lib/sdp_apps.sh"
PORT=2222
BYTES=${SDP_APPS_SSH_BYTES:-4194304}
SSHD=$APPS_WORK/sshd DATA=$APPS_WORK/ssh.data COPY=$APPS_WORK/ssh.copy
SSH_OPTS=(-i "$SSHD/id" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
          -o BatchMode=yes -o LogLevel=ERROR)

# server RULE PATH: sshd on host B under RULE, listening on PATH
server() {
    app_start server "$1" /usr/sbin/sshd -D -e -f "$SSHD/sshd_config"
    app_listens "$PORT" "$2"
}

# send RULE: ssh under RULE pipes DATA into sha256sum on host B
send() {
    local out
    out=$(app_run "$1" ssh "${SSH_OPTS[@]}" -p "$PORT" "root@$SDP_B4" sha256sum <"$DATA")
    [[ ${out%% *} == "$(sha256sum <"$DATA" | cut -d' ' -f1)" ]] ||
        { echo "host B's sha256sum: $out"; return 1; }
    echo "ssh: host B got the file intact"
}

# copy RULE: scp under RULE copies DATA to COPY on host B
copy() {
    rm -f "$COPY"
    app_run "$1" scp "${SSH_OPTS[@]}" -P "$PORT" "$DATA" "root@$SDP_B4:$COPY"
    same_file "$DATA" "$COPY"
}

setup() {
    mkdir -p "$SSHD" /run/sshd    # (/run/sshd: sshd's privilege separation)
    head -c "$BYTES" /dev/urandom >"$DATA"
    ssh-keygen -q -t ed25519 -N '' -f "$SSHD/host_key"
    ssh-keygen -q -t ed25519 -N '' -f "$SSHD/id"
    cp "$SSHD/id.pub" "$SSHD/authorized_keys"
    # UsePAM: without it sshd refuses a locked account, as root's is in the bed
    cat >"$SSHD/sshd_config" <<EOC
Port $PORT
ListenAddress $SDP_B4
HostKey $SSHD/host_key
AuthorizedKeysFile $SSHD/authorized_keys
PermitRootLogin prohibit-password
StrictModes no
UsePAM yes
PidFile $SSHD/sshd.pid
Subsystem sftp internal-sftp
EOC
}

sdp_both_ends() {
    local rule="use sdp client ssh $SDP_B4:$PORT"
    apps_stats_mark
    server "use sdp server sshd $SDP_B4:$PORT" sdp
    app_watch_start "$PORT" sdp
    send "$rule"
    app_watch_saw
    copy "$rule"
    app_stop server
    moved_by ActiveOpens 2
    moved_by PassiveOpens 2
    moved_at_least RxBytes $((2 * BYTES))
}

both_client_tcp_server() {
    local rule="use both client ssh *:$PORT"
    apps_stats_mark
    server "" tcp
    send "$rule"
    copy "$rule"
    app_stop server
    moved_by FallbackRefused 2
    moved_by ActiveOpens 0
}

both_server_tcp_client() {
    apps_stats_mark
    server "use both server sshd *:$PORT" both
    send ""
    moved_by FallbackAccepts 1
    copy "use sdp client ssh *:$PORT"
    app_stop server
    moved_by PassiveOpens 1
    moved_by FallbackAccepts 1
}

apps_cases
