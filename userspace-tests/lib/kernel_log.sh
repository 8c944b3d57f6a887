# shellcheck shell=bash
# kernel_log.sh: what in the kernel's log is a report that fails a test
# (run-tests, after each program; vm-run, over the whole boot), and the
# kmemleak scans after each test on a kernel that has kmemleak.

# The first line of every report the kernel's checkers print: oopses and
# BUG()s, WARN()s (lockdep's reports among them: "WARNING: possible
# circular locking dependency detected", "WARNING: suspicious RCU usage"),
# the SLUB debugger's "BUG kmalloc-64 (Not tainted): ...", KASAN, UBSAN,
# DEBUG_OBJECTS, the refcount trackers, the hung-task, soft- and
# hard-lockup detectors, RCU stalls, kmemleak's objects, and a device that
# a leaked reference keeps from going (unregister_netdevice).
# shellcheck disable=SC2034  # (the scripts that source this use it)
KERNEL_REPORT_RE='(^|[^A-Za-z_])BUG[: ]|WARNING:|RIP:|Call Trace:|Oops|general protection|Kernel panic|KASAN:|UBSAN:|ODEBUG:|ref_tracker:|lockdep is turned off|unreferenced object|blocked for more than|soft lockup|hard LOCKUP|detected stall|unregister_netdevice: waiting'

# The text printed before a program starts and after it ends, in the
# kernel log, so that a report is tied to the program it came in.
kernel_log_mark() { [[ -w /dev/kmsg ]] && echo "run-tests: $1" >/dev/kmsg; }

# kernel_report_since MARK: the first report in the kernel log after the
# last line that ends in MARK (that line and up to 60 after it, to its
# "end trace" line); status 0 iff there is one, 2 if MARK is gone (the
# log's buffer overran: nothing can be said).
kernel_report_since() {
    local log
    log=$(dmesg 2>/dev/null) || return 1
    awk -v mark="$1" -v re="$KERNEL_REPORT_RE" '
        substr($0, length($0) - length(mark) + 1) == mark { seen = 1; n = 0; out = ""; found = 0; next }
        !seen { next }
        !found && $0 ~ re { found = 1 }
        found && n < 60 { out = out $0 "\n"; n++; if (/---\[ end trace/) n = 60 }
        END { if (!seen) exit 2; printf "%s", out; exit !found }' <<<"$log"
}

# kmemleak_report: on a kernel with kmemleak, two scans 5 s apart (an
# object freed by an RCU callback or a work item meanwhile is not a
# leak), then what kmemleak holds as leaked since the last call, in
# KMEMLEAK_LEAKS; the list is cleared after.  Status 0 iff something
# leaked.  When kmemleak turns itself off (its pool ran out) after it
# was on, it says so once, as a leak: the tests after it go unchecked.
# (Not in a subshell: it keeps whether kmemleak was on.)
KMEMLEAK=/sys/kernel/debug/kmemleak
KMEMLEAK_WAS_ON=''
kmemleak_report() {
    KMEMLEAK_LEAKS=''
    [[ -w $KMEMLEAK || $KMEMLEAK_WAS_ON == 1 ]] || return 1
    if ! echo scan 2>/dev/null >"$KMEMLEAK"; then
        [[ $KMEMLEAK_WAS_ON == 1 ]] || return 1
        KMEMLEAK_WAS_ON=off
        KMEMLEAK_LEAKS="kmemleak turned itself off: no test after this one is checked for leaks"
        return 0
    fi
    KMEMLEAK_WAS_ON=1
    sleep 5
    echo scan >"$KMEMLEAK"
    KMEMLEAK_LEAKS=$(<"$KMEMLEAK")
    echo clear >"$KMEMLEAK"
    [[ -n $KMEMLEAK_LEAKS ]]
}
