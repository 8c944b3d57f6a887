# ktap.sh: KTAP output for shell tests (source it).
# shellcheck shell=bash
#   ktap_plan N            header and plan
#   ktap_ok NAME / ktap_fail NAME / ktap_skip NAME REASON / ktap_diag TEXT...
#   ktap_run NAME FUNC [ARGS...]   runs FUNC in a subshell with set -e as one
#       test case: status 0 = ok, 4 (KSFT_SKIP) = skip with FUNC's last output line as
#       the reason, anything else = fail; FUNC's output becomes "# " lines,
#       then one saying how long it took (where a suite's time goes)
#   ktap_finish            exits 0 if no case failed, 1 otherwise

KTAP_NUM=0 KTAP_FAILED=0
KSFT_SKIP=4

ktap_plan() { echo "TAP version 13"; echo "1..$1"; }
ktap_diag() { echo "# $*"; }
ktap_ok() { echo "ok $((KTAP_NUM += 1)) $1"; }
ktap_fail() { echo "not ok $((KTAP_NUM += 1)) $1"; KTAP_FAILED=$((KTAP_FAILED + 1)); }
ktap_skip() { echo "ok $((KTAP_NUM += 1)) $1 # SKIP $2"; }

ktap_run() {
    local name=$1 out rc errexit=${-//[^e]/} start=$SECONDS
    shift
    set +e    # not "out=$(...) || rc=$?": that would turn off set -e inside FUNC
    out=$(set -e; "$@" 2>&1)
    rc=$?
    [[ -n $errexit ]] && set -e
    # shellcheck disable=SC2001
    [[ -n $out ]] && sed 's/^/# /' <<<"$out"
    ktap_diag "$name: $((SECONDS - start)) s"
    case $rc in
    0) ktap_ok "$name" ;;
    "$KSFT_SKIP") ktap_skip "$name" "$(tail -n1 <<<"$out")" ;;
    *) ktap_diag "$name: exit status $rc"; ktap_fail "$name" ;;
    esac
}

ktap_finish() { exit $((KTAP_FAILED > 0)); }
