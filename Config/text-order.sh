#!/bin/sh
# Prints the functions familyctl runs for status and --version, then those
# the Guard in BIN_DIR runs to serve `familyctl status`, then those it ran to
# start, then those familyctl runs to authenticate, each in the order
# valgrind's callgrind first meets them.
# Config/build.sh runs it on the programs it has just built and links them
# again with the list, which puts those functions side by side at the front
# of the program's code; nothing generated is committed.
#
# Why: the kernel maps a program's code in blocks around each page it touches
# (fault-around, 64 KB), so a few hundred kilobytes of code run at start,
# scattered over five megabytes, kept nearly all of it resident. Packed
# together, the idle Guard keeps ~2 MB less (familycontrols-bench startup and
# anchors). The Guard lets go of its start-up's pages once it serves
# (MappedFilePages); the code it serves with, at the front and side by side,
# is then what comes back.
#
# Needs root (it starts a Guard on a private socket and store, and a PAM
# service that permits everything, /etc/pam.d/familycontrols-order-PID, for
# as long as it runs) and valgrind.
#
#   Config/text-order.sh BIN_DIR > LIST
set -eu
[ $# = 1 ] || { echo "usage: Config/text-order.sh BIN_DIR > LIST" >&2; exit 2; }
bin=$1
command -v valgrind >/dev/null || { echo "text-order.sh: needs valgrind (Debian: valgrind)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "text-order.sh: run as root (it starts a Guard)" >&2; exit 1; }
work=$(mktemp -d /tmp/familycontrols-text-order.XXXXXX)
service="familycontrols-order-$$"
guard_pid=
cleanup() {
    [ -n "$guard_pid" ] && kill "$guard_pid" 2>/dev/null && wait "$guard_pid" 2>/dev/null
    rm -f "/etc/pam.d/$service"
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# valgrind reads symbols, not DWARF 5 debug information.
strip --strip-debug -o "$work/familycontrolsd" "$bin/familycontrolsd"
strip --strip-debug -o "$work/familyctl" "$bin/familyctl"
printf '[Apps]\nRoots=%s/apps/%%u\n' "$work" > "$work/guard.conf"
printf 'auth required pam_permit.so\naccount required pam_permit.so\n' > "/etc/pam.d/$service"
printf '[Authentication]\nIndividualService=%s\n' "$service" > "$work/permit.conf"

record() { # NAME PROGRAM ARGUMENTS...   (exec: run in the background, $! is valgrind)
    name=$1; shift
    exec valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$name.out" "$@"
}
record guard "$work/familycontrolsd" --config "$work/guard.conf" --socket "$work/guard.socket" \
    --state-dir "$work/state" >/dev/null 2>"$work/guard.log" &
guard_pid=$!
i=0
until "$bin/familyctl" status --socket "$work/guard.socket" >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 300 ] || { echo "text-order.sh: the Guard did not answer:" >&2; cat "$work/guard.log" >&2; exit 1; }
    sleep 0.1
done
# What the Guard ran to start, then what it runs to serve: dumped apart, so
# the serving code can be put first (below).
# callgrind_control says what went wrong on its output and exits 0: the
# dumps themselves are checked.
timeout 60 callgrind_control --dump=started "$guard_pid" >>"$work/control.log" 2>&1 || true
for _ in 1 2 3; do
    "$bin/familyctl" status --socket "$work/guard.socket" >/dev/null 2>&1 ||
        { echo "text-order.sh: the Guard under valgrind did not answer status:" >&2; cat "$work/guard.log" >&2; exit 1; }
done
timeout 60 callgrind_control --dump=serving "$guard_pid" >>"$work/control.log" 2>&1 || true
for dump in "$work/guard.out.1" "$work/guard.out.2"; do
    [ -s "$dump" ] || { echo "text-order.sh: callgrind_control made no $dump:" >&2; cat "$work/control.log" >&2; exit 1; }
done
(record status "$work/familyctl" status --socket "$work/guard.socket" >/dev/null 2>&1)
(record version "$work/familyctl" --version >/dev/null 2>&1)
(record authenticate "$work/familyctl" authenticate root --member individual --config "$work/permit.conf" \
    --stdin </dev/null >/dev/null 2>&1)
kill -TERM "$guard_pid"
wait "$guard_pid" || true
guard_pid=
[ -s "$work/guard.out" ] || { echo "text-order.sh: valgrind recorded nothing for the Guard:" >&2; cat "$work/guard.log" >&2; exit 1; }

# Each callgrind file names an object (ob=) or function (fn=) in full the
# first time and by number after; keep the functions of our two programs.
awk '
    FNR == 1 { delete object; delete function_name; current = "" }
    /^c?ob=\(/ {
        id = $1; sub(/^c?ob=/, "", id)
        if (NF > 1) object[id] = $2
        if ($0 ~ /^ob=/) current = object[id]
        next
    }
    /^c?fn=\(/ {
        id = $1; sub(/^c?fn=/, "", id)
        if (NF > 1) { name = $0; sub(/^c?fn=\([0-9]+\) /, "", name); function_name[id] = name }
        if ($0 ~ /^fn=/ && current ~ /\/(familycontrolsd|familyctl)$/) {
            name = function_name[id]; sub(/'"'"'[0-9]+$/, "", name)
            # Symbols only: not an address, nor valgrind'"'"'s "(below main)".
            if (name !~ /^0x/ && name !~ /[ (]/ && !(name in seen)) { seen[name] = 1; print name }
        }
    }
' "$work/status.out" "$work/version.out" "$work/guard.out.2" "$work/guard.out.1" "$work/guard.out" "$work/authenticate.out" > "$work/order.txt"
count=$(wc -l < "$work/order.txt")
[ "$count" -gt 500 ] || { echo "text-order.sh: only $count functions recorded" >&2; exit 1; }
cat "$work/order.txt"
