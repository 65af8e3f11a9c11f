#!/bin/sh
# Lists the apps the Guard still locks. A locked app's folders and files keep
# their owner and mode but carry the immutable attribute, and only the Guard
# knows which of them it set: removing FamilyControls while an app is locked
# would leave them so.
# Config/uninstall.sh (install.sh --uninstall) and the Debian package's prerm
# (as /usr/libexec/familycontrols/held-locks) ask this before they remove
# anything. A Guard started here runs its start-up reconcile over the store,
# as it would at boot.
#
#   held-locks.sh FAMILYCTL FAMILYCONTROLSD [STATE_DIR]
#
# Asks the Guard that answers on FAMILYCONTROLS_SOCKET, or on the default
# socket; when none answers and STATE_DIR (default /var/lib/familycontrols)
# holds a store, asks a Guard of its own, started for the while on a private
# socket over that store.
#
# Exit status: 0 when no app is locked (or there is no store); 1 when some
# are, and `familyctl status` is printed; 2 when it cannot tell (the reason
# is on standard error).
set -u
familyctl=$1
guard=$2
state=${3:-/var/lib/familycontrols}

# Prints the status and returns 1 when a lock is held, 0 when none, or
# familyctl's own status (5: no Guard answers) when it could not ask.
ask() {
    json=$("$familyctl" "$@" status --json 2>/dev/null) || return $?
    # Keys are written unescaped and values escaped, so only a real "lock"
    # key matches. Held: locked, and the states a restart completes (locking,
    # unlocking); not unlocked, nor unenforced (nothing was made immutable).
    held=$(printf '%s\n' "$json" | grep -Ec '"lock":"(locked|locking|unlocking)"')
    [ "$held" -eq 0 ] && return 0
    "$familyctl" "$@" status
    return 1
}

ask
answer=$?
[ "$answer" -le 1 ] && exit "$answer"
if [ "$answer" -ne 5 ]; then
    echo "held-locks: familyctl status failed ($answer)" >&2
    exit 2
fi
[ -e "$state/familycontrols.db" ] || exit 0
if [ ! -x "$guard" ]; then
    echo "held-locks: no Guard answers and $guard is missing" >&2
    exit 2
fi

private=$(mktemp -d) || exit 2
"$guard" --socket "$private/guard.socket" --state-dir "$state" 2>"$private/guard.log" &
pid=$!
stop() {
    kill "$pid" 2>/dev/null && wait "$pid"
    rm -rf "$private"
}
tries=0
while :; do
    ask --socket "$private/guard.socket"
    answer=$?
    [ "$answer" -ne 5 ] && break
    if ! kill -0 "$pid" 2>/dev/null || [ "$tries" -ge 100 ]; then
        echo "held-locks: no Guard answers, and one could not be started over $state:" >&2
        cat "$private/guard.log" >&2
        stop
        exit 2
    fi
    sleep 0.1
    tries=$((tries + 1))
done
stop
[ "$answer" -le 1 ] && exit "$answer"
echo "held-locks: familyctl status failed ($answer)" >&2
exit 2
