#!/usr/bin/env bash
# Removes what Config/install.sh installed, with the same PREFIX and DESTDIR.
#
#   Config/install.sh --uninstall            stop the Guard, remove the programs, units, man
#                                            pages, completion and interface, and the PAM session
#                                            module (out of common-session first); keep /etc and the store
#   Config/install.sh --uninstall --purge    also remove /etc/familycontrols, the pam.d services
#                                            and the Guard's store, /var/lib/familycontrols
#   Config/install.sh --uninstall --force    even while the Guard still locks an app
#
# A locked app's folders and files keep their owner and mode but carry the
# immutable attribute; only the Guard lifts it where it set it (familyctl
# revoke, familyctl graduate). So
# this refuses while the store records a lock, unless --force: the folders
# then stay locked, and the store (kept unless --purge) still records which
# owner and mode each entry had.
#
# Without --purge an /etc file goes only while it is the shipped text (your
# edits are kept), and a *.dist beside it always goes.
set -euo pipefail
cd "$(dirname "$0")/.."

purge=no force=no
for option in "$@"; do
    case $option in
        --uninstall) ;;
        --purge) purge=yes ;;
        --force) force=yes ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "uninstall.sh: unknown option $option (try --help)" >&2; exit 2 ;;
    esac
done
if [ "$(id -u)" -ne 0 ]; then
    echo "uninstall.sh: must be run as root (try: sudo $0)" >&2
    exit 4
fi
prefix=${PREFIX:-/usr/local}
dest=${DESTDIR:-}
familyctl=$dest$prefix/bin/familyctl
guard=$dest$prefix/sbin/familycontrolsd
state=$dest/var/lib/familycontrols
# systemd only for the machine itself, not for a staged tree.
systemd=no
[ -z "$dest" ] && [ -d /run/systemd/system ] && systemd=yes
# A staged tree's Guard answers (if at all) on the staged socket.
[ -n "$dest" ] && export FAMILYCONTROLS_SOCKET=${FAMILYCONTROLS_SOCKET:-$dest/run/familycontrols/guard.socket}

# Before anything goes, while familyctl and the Guard are still there to ask.
held=0
if [ -x "$familyctl" ]; then
    Config/held-locks.sh "$familyctl" "$guard" "$state" >&2 || held=$?
elif [ -e "$state/familycontrols.db" ]; then
    echo "uninstall.sh: $familyctl is gone: cannot ask whether the store in $state records a lock" >&2
    held=2
fi
case $held in
    0) ;;
    1) echo "uninstall.sh: the Guard still locks the apps above: their folders and files are immutable," \
           "and once the Guard is gone nothing lifts the attribute." >&2 ;;
    *) echo "uninstall.sh: cannot tell whether the Guard still locks an app (see above)." >&2 ;;
esac
if [ "$held" -ne 0 ]; then
    if [ "$force" != yes ]; then
        if [ "$held" -eq 1 ]; then
            cat >&2 <<MESSAGE
    Release each lock first, as root or as the child's guardian:
        familyctl revoke --user USER --app APP      (or, for every app of a child: familyctl graduate USER)
    or leave the folders locked and uninstall anyway: Config/install.sh --uninstall --force
MESSAGE
        else
            echo "    To uninstall anyway, leaving any locked folder locked: Config/install.sh --uninstall --force" >&2
        fi
        exit 1
    fi
    echo "    --force: uninstalling anyway; the locked folders stay as they are." >&2
    if [ "$purge" = yes ]; then
        echo "    --purge deletes the store, and with it the owner and mode each locked entry had." >&2
    else
        echo "    The store in $state keeps the owner and mode each locked entry had;" \
             "a reinstalled Guard releases them (familyctl revoke)." >&2
    fi
fi

units=$dest/etc/systemd/system
# Only units this script wrote: they start the Guard under $prefix.
ours() { [ -f "$units/$1" ] && [ ! -L "$units/$1" ] && grep -q "$2" "$units/$1"; }
if [ "$systemd" = yes ] && ours familycontrolsd.service "ExecStart=$prefix/sbin/familycontrolsd"; then
    echo "==> stopping the Guard"
    systemctl disable --now familycontrolsd.socket familycontrolsd.service familycontrols-flatpak.socket || true
fi
if ours familycontrolsd.service "ExecStart=$prefix/sbin/familycontrolsd"; then
    rm -f "$units/familycontrolsd.service"
    if ours familycontrolsd.socket "ListenStream="; then rm -f "$units/familycontrolsd.socket"; fi
fi
if ours familycontrols-flatpak@.service "ExecStart=$prefix/sbin/familycontrolsd"; then
    rm -f "$units/familycontrols-flatpak@.service"
    if ours familycontrols-flatpak.socket "ListenStream="; then rm -f "$units/familycontrols-flatpak.socket"; fi
fi
if [ "$systemd" = yes ]; then systemctl daemon-reload; fi
if [ -z "$dest" ] && pid=$(pidof "$guard"); then
    echo "uninstall.sh: $guard still runs (pid $pid), outside systemd; stop it: kill $pid" >&2
fi

# The PAM module: out of /etc/pam.d/common-account and common-session first, then its
# profile and the module (the stack never names a missing module).
# Found as install.sh finds it: beside pam_unix.so, or PAM_MODULE_DIR.
pam_module_dir() {
    if [ -n "${PAM_MODULE_DIR:-}" ]; then echo "$PAM_MODULE_DIR"; return 0; fi
    multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || true)
    for folder in ${multiarch:+/usr/lib/$multiarch/security /lib/$multiarch/security} \
        /usr/lib64/security /lib64/security /usr/lib/security /lib/security; do
        if [ -e "$folder/pam_unix.so" ]; then echo "$folder"; return 0; fi
    done
    return 1
}
package=
if [ -z "$dest" ]; then
    package=$(dpkg-query -W -f='${db:Status-Status}' familycontrols 2>/dev/null || true)
fi
if [ "$package" = installed ]; then
    echo "    kept the PAM session module and its profile: the familycontrols package owns them"
else
    if [ -z "$dest" ] && [ -e /usr/share/pam-configs/familycontrols ] && command -v pam-auth-update >/dev/null; then
        echo "==> removing pam_familycontrols.so from /etc/pam.d/common-account and common-session"
        DEBIAN_FRONTEND=noninteractive pam-auth-update --package --remove familycontrols || true
    fi
    if [ -z "$dest" ] && grep -ls pam_familycontrols.so /etc/pam.d/* >/dev/null; then
        echo "uninstall.sh: $(grep -ls pam_familycontrols.so /etc/pam.d/* | tr '\n' ' ')still names pam_familycontrols.so: remove that line" >&2
    fi
    rm -f "$dest/usr/share/pam-configs/familycontrols"
    [ -z "$dest" ] || rmdir "$dest/usr/share/pam-configs" 2>/dev/null || true
    if pam_dir=$(pam_module_dir); then
        rm -f "$dest$pam_dir/pam_familycontrols.so"
    fi
fi

# The list install.sh installs: change both.
echo "==> removing from $dest$prefix"
rm -f "$guard" "$familyctl" \
    "$dest$prefix/lib/familycontrols/demo/familycontrols-demo" \
    "$dest$prefix/lib/familycontrols/demo/org.familycontrols.Demo.desktop" \
    "$dest$prefix/share/familycontrols/org.familycontrols.guard.varlink" \
    "$dest$prefix/share/familycontrols/org.familycontrols.inspect.varlink" \
    "$dest$prefix/share/familycontrols/org.familycontrols.mover.varlink" \
    "$dest$prefix/share/familycontrols/org.familycontrols.conversation.varlink" \
    "$dest$prefix/libexec/familycontrols/familycontrols-inspect" \
    "$dest$prefix/libexec/familycontrols/familycontrols-agent" \
    "$dest$prefix/share/man/man8/familycontrolsd.8" "$dest$prefix/share/man/man8/familyctl.8" \
    "$dest$prefix/share/man/man8/familycontrols-inspect.8" "$dest$prefix/share/man/man8/pam_familycontrols.8" \
    "$dest$prefix/share/man/man5/familycontrols.conf.5" \
    "$dest$prefix/share/bash-completion/completions/familyctl"
rmdir "$dest$prefix/lib/familycontrols/demo" "$dest$prefix/lib/familycontrols" \
    "$dest$prefix/share/familycontrols" "$dest$prefix/libexec/familycontrols" 2>/dev/null || true
# Left only when empty: other programs' completions may live there.
rmdir "$dest$prefix/share/bash-completion/completions" "$dest$prefix/share/bash-completion" 2>/dev/null || true

# The Debian package owns these files while it is installed: they stay.
remove_config() { # shipped installed
    rm -f "$2.dist"
    if [ "$package" = installed ]; then
        echo "    kept $2: the familycontrols package owns it"
    elif [ ! -e "$2" ]; then
        :
    elif [ "$purge" = yes ] || cmp -s "$1" "$2"; then
        rm -f "$2"
    else
        echo "    kept your $2 (--purge removes it)"
    fi
}
echo "==> removing from $dest/etc"
remove_config pam.d/familycontrols-guardian "$dest/etc/pam.d/familycontrols-guardian"
remove_config pam.d/familycontrols-individual "$dest/etc/pam.d/familycontrols-individual"
remove_config pam.d/familycontrols-guardian-code "$dest/etc/pam.d/familycontrols-guardian-code"
# The guardians' one-time-code secrets: only with --purge (an empty folder goes).
if [ "$purge" = yes ] && [ "$package" != installed ]; then
    rm -rf "$dest/etc/familycontrols/oath"
elif [ -n "$(ls -A "$dest/etc/familycontrols/oath" 2>/dev/null)" ]; then
    echo "    kept the guardians' one-time codes, $dest/etc/familycontrols/oath (--purge removes them)"
else
    rmdir "$dest/etc/familycontrols/oath" 2>/dev/null || true
fi
remove_config Config/familycontrols.conf "$dest/etc/familycontrols/familycontrols.conf"
# Drop-ins are the site's own: an empty folder goes, one with files stays.
rmdir "$dest/etc/familycontrols/familycontrols.conf.d" "$dest/etc/familycontrols" 2>/dev/null || true
remove_config Config/autostart/familycontrols-agent.desktop "$dest/etc/xdg/autostart/familycontrols-agent.desktop"
rmdir "$dest/etc/xdg/autostart" "$dest/etc/xdg" 2>/dev/null || true
remove_config Config/flatpak/familycontrols.conf "$dest/etc/flatpak/installations.d/familycontrols.conf"
rmdir "$dest/etc/flatpak/installations.d" "$dest/etc/flatpak" 2>/dev/null || true
# Flatpak no longer opens the Guard's installation: an empty one goes (one
# holding apps moved there stays, with its repository: they were the children's).
flatpak_dir=$dest/var/lib/familycontrols-flatpak
if [ ! -e "$dest/etc/flatpak/installations.d/familycontrols.conf" ] && [ -d "$flatpak_dir" ] \
    && [ -z "$(ls -A "$flatpak_dir/app" 2>/dev/null)" ]; then
    rm -rf "$flatpak_dir"
fi

if [ ! -e "$state" ]; then
    :
elif [ "$package" = installed ]; then
    echo "    kept the Guard's store, $state: the familycontrols package uses it"
elif [ "$purge" = yes ]; then
    echo "==> removing the Guard's store, $state"
    rm -rf "$state"
    # The Guard's Flatpak installation goes too when it holds no app; apps
    # moved there stay (they were the children's), with their repository.
    flatpak_dir=$dest/var/lib/familycontrols-flatpak
    if [ -d "$flatpak_dir" ] && [ -z "$(ls -A "$flatpak_dir/app" 2>/dev/null)" ]; then
        echo "==> removing the Guard's Flatpak installation, $flatpak_dir (it holds no app)"
        rm -rf "$flatpak_dir"
    elif [ -d "$flatpak_dir" ]; then
        echo "    kept the Guard's Flatpak installation, $flatpak_dir: it holds apps moved there"
    fi
else
    echo "    kept the Guard's store, $state (approvals, audit trail, lock journal; --purge removes it)"
fi
echo "==> uninstalled"
