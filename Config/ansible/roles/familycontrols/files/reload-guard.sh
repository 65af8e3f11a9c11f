#!/bin/sh
# reload-guard.sh CONFIG: makes the Guard that reads CONFIG read it again.
# Where systemd runs, the unit's Guard (it reads the default file) is
# reloaded if it runs. Elsewhere, each running Guard of root's whose --config
# is CONFIG (none given: the default file) gets SIGHUP; its helper processes
# and --check-config runs are left alone. No Guard running is no error: a
# Guard reads its drop-ins when it starts.
set -u
config=$1
default=/etc/familycontrols/familycontrols.conf

if [ -d /run/systemd/system ] && [ "$config" = "$default" ]; then
    if systemctl --quiet is-active familycontrolsd.service; then
        systemctl reload familycontrolsd.service && echo "reloaded familycontrolsd.service"
        exit
    fi
    echo "familycontrolsd.service is not running: it reads $config when it starts"
    exit 0
fi

reloaded=0
for process in /proc/[0-9]*; do
    pid=${process#/proc/}
    [ "$(stat -c %u "$process" 2>/dev/null)" = 0 ] || continue
    # The arguments, one a line (a Guard's never hold a line break).
    arguments=$(tr '\0' '\n' <"$process/cmdline" 2>/dev/null) || continue
    program=$(printf '%s\n' "$arguments" | sed -n 1p)
    [ "${program##*/}" = familycontrolsd ] || continue
    reads=$default
    guard=yes
    next=
    first=yes
    while IFS= read -r argument; do
        if [ -n "$first" ]; then first=; continue; fi
        if [ -n "$next" ]; then reads=$argument; next=; continue; fi
        case $argument in
            --config) next=yes ;;
            --config=*) reads=${argument#--config=} ;;
            --check-config|--pam-helper|--flatpak-recover|--flatpak-move-connection) guard= ;;
        esac
    done <<ARGUMENTS
$arguments
ARGUMENTS
    if [ -n "$guard" ] && [ "$reads" = "$config" ] && kill -HUP "$pid" 2>/dev/null; then
        echo "sent SIGHUP to familycontrolsd ($pid)"
        reloaded=$((reloaded + 1))
    fi
done
[ "$reloaded" -gt 0 ] || echo "no running familycontrolsd reads $config: it reads it when it starts"
exit 0
