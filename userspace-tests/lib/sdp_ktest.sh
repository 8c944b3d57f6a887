# shellcheck shell=bash
# sdp_ktest.sh: what the shell tests read of the in-kernel test modules
# (kmod-read-sock/, kmod-rpc-bw/, on lib/sdp_ktest.h): their debugfs text
# files are lines of NAME=value fields, separated by spaces.
#   field NAME LINE    the value of NAME=... in LINE (nothing if none)

field() { sed -nE "s/.*(^| )$1=([^ ]*).*/\\2/p" <<<"$2"; }
