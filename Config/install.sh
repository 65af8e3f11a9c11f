#!/usr/bin/env bash
# Builds FamilyControls, installs it, and runs the Guard.
#
#   Config/install.sh                  install, then start the Guard (systemd, or the foreground)
#   Config/install.sh --no-start       install only
#   Config/install.sh --packages-only  install the Debian packages the build and the tests need, nothing else
#   Config/install.sh --no-packages    build and install without apt-get
#   Config/install.sh --uninstall [--purge] [--force]
#                                      remove what this script installed (Config/uninstall.sh)
#   PREFIX=/usr Config/install.sh      install under another prefix (default /usr/local)
#   DESTDIR=DIR Config/install.sh      install into DIR as if it were /: nothing started
#   BUILD_DIR=DIR Config/install.sh    build in DIR (default .build/static, see Config/build.sh)
#   PAM_MODULE_DIR=DIR Config/install.sh  put pam_familycontrols.so in DIR (default: beside pam_unix.so)
#
# The programs are built with the Swift runtime linked in: they run without
# the toolchain. Existing /etc files (pam.d services, familycontrols.conf) are
# never overwritten: the shipped versions are installed beside them as *.dist.
set -euo pipefail
cd "$(dirname "$0")/.."

start=yes apt=yes
for option in "$@"; do
    case $option in
        --no-start) start=no ;;
        --packages-only) start=packages ;;
        --no-packages) apt=no ;;
        --uninstall|--purge|--force) exec Config/uninstall.sh "$@" ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option $option (try --help)" >&2; exit 2 ;;
    esac
done
if [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: must be run as root (try: sudo $0)" >&2
    exit 4
fi
prefix=${PREFIX:-/usr/local}
# Everything below lands under $dest; a staged tree starts nothing.
dest=${DESTDIR:-}
[ -n "$dest" ] && start=no

# What the build, the Guard and the tests need, so that `swift build && swift
# test` passes next on a fresh machine:
#   libpam0g-dev, libsqlite3-dev: the C libraries the package links.
#   libsodium-dev: Ed25519 and BLAKE2b for signed app updates (UpdateSignature).
#   libpam-modules, libpam-runtime: pam_unix and the common-* stacks the services include.
#   e2fsprogs: chattr/lsattr; passwd, login: useradd, chpasswd, chage, usermod.
#   procps: pkill; util-linux: setpriv, runuser, unshare.
#   binutils: readelf, to check the built programs need no toolchain.
#   g++: libstdc++.a, linked into the installed programs (Config/build.sh).
#   valgrind: Config/build.sh records the code the programs run at start, to
#   link it side by side (Config/text-order.sh).
#   dpkg-dev: Config/build-deb.sh (dpkg-shlibdeps, dpkg-gencontrol).
#   For the tests: libpam-wrapper (pam_chatty), sqlite3 (the audit table),
#   strace (a traced app is refused), xfsprogs and btrfs-progs (locks on XFS
#   and btrfs loop mounts), gcc and libc6-dev (a library a child preloads),
#   perl (children racing the lock), libpam-oath and oathtool (one-time
#   codes), python3 and the varlink package (an independent client), systemd
#   (systemd-analyze scores and checks the shipped unit; nothing is started)
#   and libseccomp2 (the Guard run under the unit's system call filter), sudo
#   (a child whom sudoers makes root is refused by --check-config),
#   libcap2-bin (setcap: a copy of chattr given cap_linux_immutable, which
#   --check-config refuses), flatpak
#   and dbus (a child installs, runs and updates a real Flatpak app offline,
#   under dbus-run-session and a private system bus), polkitd (the same
#   child updates, and cannot remove, an app in the Guard's root-owned
#   Flatpak installation, through flatpak-system-helper and polkit).
#   xvfb, dunst, imagemagick, pinentry-gtk2 and x11-utils: the guardian's
#   notification and password dialog on a real X display, captured
#   (Config/screenshot-notification.sh; xwininfo waits for the dialog).
#   libqrencode-dev: the QR code familyctl code enroll draws (qrencode, its
#   command, checks the drawing in the tests; tmux shows it on a real terminal
#   and zbarimg, from zbar-tools, scans it back); libpam-oath (above) is also what
#   the shipped familycontrols-guardian-code service runs.
#   debootstrap and systemd-container: a Debian root booted with
#   systemd-nspawn, whose logind the session enforcer's tests lock and end
#   sessions of. gnupg: the signed Flatpak remotes the trust tests make.
#   rsyslog: two rsyslogd, one forwarding the audit trail to the other over TCP.
#   pamtester: what familycontrols-bench anchors measures familyctl authenticate against,
#   and account a login's account phase with. tzdata: the login-hours tests put
#   a zone other than UTC in /etc/localtime (in a mount namespace of their own).
#   ansible-core (from PyPI, beside varlink): ansible-playbook runs
#   Config/ansible's role against this machine and over SSH to a loopback sshd;
#   python3-apt: the role's apt task installs the package with it.
#   slapd, ldap-utils, sssd-ldap, sssd-tools (sss_cache), libnss-sss and
#   libpam-sss: a school's directory, a slapd and an sssd the tests start with
#   their own configuration (slapd is preseeded to make no database of its
#   own, so nothing runs until a test starts it). Installed for the tests
#   only, they leave the machine's own logins as they were: see below.
packages="libpam0g-dev libsqlite3-dev libsodium-dev libpam-modules libpam-runtime e2fsprogs passwd login procps util-linux
    binutils g++ valgrind dpkg-dev
    libpam-wrapper sqlite3 strace xfsprogs btrfs-progs gcc libc6-dev perl libpam-oath oathtool python3 python3-pip
    systemd libseccomp2 sudo libcap2-bin flatpak dbus polkitd openssh-server openssh-client libsystemd-dev pinentry-tty pinentry-curses
    python3-dbus python3-gi xvfb dunst imagemagick pinentry-gtk2 x11-utils libqrencode-dev qrencode tmux zbar-tools debootstrap systemd-container gnupg
    rsyslog pamtester python3-apt slapd ldap-utils sssd-ldap sssd-tools libnss-sss libpam-sss tzdata"
if [ "$apt" = no ]; then
    :
elif command -v apt-get >/dev/null; then
    echo "==> installing build, run and test dependencies"
    export DEBIAN_FRONTEND=noninteractive
    echo "slapd slapd/no_configuration boolean true" | debconf-set-selections
    # libpam-sss and libnss-sss configure the machine's own logins as they
    # install (pam_sss into /etc/pam.d/common-*, sss into nsswitch.conf). A
    # machine that did not use SSSD before keeps its logins as they were:
    # the tests start their own sssd and name pam_sss in their own stacks.
    sss_pam_before=$(dpkg-query -W -f='${Status}' libpam-sss 2>/dev/null || true)
    sss_nss_before=$(dpkg-query -W -f='${Status}' libnss-sss 2>/dev/null || true)
    nsswitch_copy=$(mktemp)
    cp -p /etc/nsswitch.conf "$nsswitch_copy" 2>/dev/null || true
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $packages >/dev/null
    case "$sss_pam_before" in
        *" installed") ;;
        *) pam-auth-update --disable sss ;;
    esac
    case "$sss_nss_before" in
        *" installed") ;;
        *) [ -s "$nsswitch_copy" ] && cp -p "$nsswitch_copy" /etc/nsswitch.conf ;;
    esac
    rm -f "$nsswitch_copy"
    python3 -m pip install --quiet --disable-pip-version-check varlink ansible-core 2>/dev/null \
        || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages varlink ansible-core
else
    echo "install.sh: no apt-get here; install the equivalents of: $packages" >&2
fi
[ "$start" = packages ] && exit 0

echo "==> building (release, the Swift runtime linked in)"
bin=$(Config/build.sh)

# Config/uninstall.sh removes the same list: change both.
echo "==> installing under $dest$prefix and $dest/etc"
install -d -m 0755 "$dest$prefix/sbin" "$dest$prefix/bin" "$dest$prefix/share/familycontrols" \
    "$dest$prefix/share/man/man5" "$dest$prefix/share/man/man8" "$dest$prefix/lib/familycontrols/demo" \
    "$dest$prefix/share/bash-completion/completions" "$dest$prefix/libexec/familycontrols"
install -m 0755 "$bin/familycontrolsd" "$dest$prefix/sbin/familycontrolsd"
# Where the Guard looks for its inspector: ../libexec/familycontrols from its own
# folder; it runs only root's file that no one else may write (familycontrols-inspect(8)).
install -m 0755 "$bin/familycontrols-inspect" "$dest$prefix/libexec/familycontrols/familycontrols-inspect"
install -m 0755 "$bin/familyctl" "$dest$prefix/bin/familyctl"
# `familyctl agent` becomes this program, found in ../libexec/familycontrols from familyctl's folder.
install -m 0755 "$bin/familycontrols-agent" "$dest$prefix/libexec/familycontrols/familycontrols-agent"
install -m 0755 "$bin/familycontrols-demo" "$dest$prefix/lib/familycontrols/demo/familycontrols-demo"
install -m 0644 Config/demo/org.familycontrols.Demo.desktop "$dest$prefix/lib/familycontrols/demo/"
install -m 0644 Config/org.familycontrols.guard.varlink Config/org.familycontrols.inspect.varlink Config/org.familycontrols.mover.varlink Config/org.familycontrols.conversation.varlink "$dest$prefix/share/familycontrols/"
install -m 0644 Config/man/familycontrolsd.8 Config/man/familyctl.8 Config/man/familycontrols-inspect.8 \
    Config/man/pam_familycontrols.8 "$dest$prefix/share/man/man8/"
install -m 0644 Config/man/familycontrols.conf.5 "$dest$prefix/share/man/man5/"
# bash-completion looks in every XDG data folder, /usr/local/share included.
install -m 0644 Config/completion/familyctl.bash "$dest$prefix/share/bash-completion/completions/familyctl"

install_config() { # source destination mode
    if [ -e "$2" ] && ! cmp -s "$1" "$2"; then
        install -m "$3" "$1" "$2.dist"
        echo "    kept your $2; the shipped version is $2.dist"
    else
        install -m "$3" "$1" "$2"
    fi
}
install -d -m 0755 "$dest/etc/familycontrols" "$dest/etc/pam.d"
install_config pam.d/familycontrols-guardian "$dest/etc/pam.d/familycontrols-guardian" 0644
install_config pam.d/familycontrols-individual "$dest/etc/pam.d/familycontrols-individual" 0644
install_config pam.d/familycontrols-guardian-code "$dest/etc/pam.d/familycontrols-guardian-code" 0644
# Guardians' one-time-code secrets (familyctl code enroll), root's alone; the
# unit leaves this folder, and nothing else under /etc, writable.
install -d -m 0700 "$dest/etc/familycontrols/oath"
install -d -m 0755 "$dest/etc/familycontrols/familycontrols.conf.d"
install_config Config/familycontrols.conf "$dest/etc/familycontrols/familycontrols.conf" 0644
# Guardians' graphical sessions start `familyctl agent --if-guardian` (desktop notifications).
install -d -m 0755 "$dest/etc/xdg/autostart"
install_config Config/autostart/familycontrols-agent.desktop "$dest/etc/xdg/autostart/familycontrols-agent.desktop" 0644
# The Guard's Flatpak installation, where approved per-user apps are moved.
install -d -m 0755 "$dest/etc/flatpak/installations.d"
install_config Config/flatpak/familycontrols.conf "$dest/etc/flatpak/installations.d/familycontrols.conf" 0644
# Flatpak opens every installation it is told of: without the installation's
# repository every user's `flatpak run` fails ("While opening repository
# /var/lib/familycontrols-flatpak/repo"). Made here, as Flatpak's first use
# would make it, whether or not Flatpak is installed yet.
repo=$dest/var/lib/familycontrols-flatpak/repo
if [ ! -e "$repo/config" ]; then
    install -d -m 0755 "$dest/var/lib/familycontrols-flatpak" "$repo" "$repo/objects" "$repo/tmp" "$repo/tmp/cache" \
        "$repo/refs" "$repo/refs/heads" "$repo/refs/mirrors" "$repo/refs/remotes" "$repo/state" "$repo/extensions"
    printf '[core]\nrepo_version=1\nmode=bare-user-only\n' > "$repo/config"
    chmod 0644 "$repo/config"
fi

# The PAM module: in the account phase it keeps a child's login hours and
# daily time from the file the Guard writes; in the session phase it tells the
# Guard a session opened or closed (monitors run in the child's sessions). It
# goes where libpam loads modules from, beside pam_unix.so; pam-auth-update
# adds its profile to /etc/pam.d/common-account and common-session. It never
# waits on the Guard, and only its PAM_PERM_DENIED for a child refuses a login.
# uninstall.sh finds the folder the same way.
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
elif ! pam_dir=$(pam_module_dir); then
    echo "install.sh: cannot find libpam's module folder (no pam_unix.so); set PAM_MODULE_DIR=FOLDER" >&2
    exit 1
else
    echo "==> installing the PAM session module into $dest$pam_dir"
    module=$(mktemp)
    Config/build-pam-module.sh "$module"
    install -d -m 0755 "$dest$pam_dir" "$dest/usr/share/pam-configs"
    install -m 0644 "$module" "$dest$pam_dir/pam_familycontrols.so"
    rm -f "$module"
    # pam-auth-update reads its profiles from /usr/share/pam-configs alone, whatever the prefix.
    install -m 0644 Config/pam-configs/familycontrols "$dest/usr/share/pam-configs/familycontrols"
    if [ -n "$dest" ]; then
        echo "    staged: on the target, run pam-auth-update --package to add pam_familycontrols.so to /etc/pam.d/common-account and common-session"
    elif command -v pam-auth-update >/dev/null; then
        DEBIAN_FRONTEND=noninteractive pam-auth-update --package || true
        if ! grep -q pam_familycontrols.so /etc/pam.d/common-session; then
            echo "install.sh: /etc/pam.d/common-session does not name pam_familycontrols.so (edited by hand, or the" \
                 "profile turned off): sessions are not told to the Guard; pam-auth-update --enable familycontrols adds it" >&2
        fi
        if ! grep -q pam_familycontrols.so /etc/pam.d/common-account; then
            echo "install.sh: /etc/pam.d/common-account does not name pam_familycontrols.so (edited by hand, or the" \
                 "profile turned off): login hours and daily time are not kept at login; pam-auth-update --enable familycontrols adds it" >&2
        fi
    else
        stack=/etc/pam.d/system-login
        [ -e "$stack" ] || stack=/etc/pam.d/system-auth
        [ -e "$stack" ] || stack=/etc/pam.d/login
        echo "install.sh: no pam-auth-update here: add the lines" \
             "'account [success=ok ignore=ignore perm_denied=bad default=ignore] pam_familycontrols.so' after $stack's account lines and" \
             "'session optional pam_familycontrols.so' after its session lines (pam_familycontrols(8))" >&2
    fi
fi

if [ -d /run/systemd/system ] || [ -n "$dest" ]; then
    install -d -m 0755 "$dest/etc/systemd/system"
    # rm first: a removed Debian package leaves its units masked (links to /dev/null).
    rm -f "$dest/etc/systemd/system/familycontrolsd.service" "$dest/etc/systemd/system/familycontrolsd.socket"
    sed "s|/usr/local/sbin/familycontrolsd|$prefix/sbin/familycontrolsd|g" Config/systemd/familycontrolsd.service \
        > "$dest/etc/systemd/system/familycontrolsd.service"
    install -m 0644 Config/systemd/familycontrolsd.socket "$dest/etc/systemd/system/familycontrolsd.socket"
    # The Flatpak move service, which the Guard asks through its socket.
    rm -f "$dest/etc/systemd/system/familycontrols-flatpak@.service" "$dest/etc/systemd/system/familycontrols-flatpak.socket"
    sed "s|/usr/local/sbin/familycontrolsd|$prefix/sbin/familycontrolsd|g" "Config/systemd/familycontrols-flatpak@.service" \
        > "$dest/etc/systemd/system/familycontrols-flatpak@.service"
    install -m 0644 Config/systemd/familycontrols-flatpak.socket "$dest/etc/systemd/system/familycontrols-flatpak.socket"
    if [ -z "$dest" ]; then systemctl daemon-reload; fi
fi

echo "==> installed: $dest$prefix/sbin/familycontrolsd, $dest$prefix/libexec/familycontrols/familycontrols-inspect, $dest$prefix/bin/familyctl, $dest/etc/pam.d/familycontrols-*, $dest/etc/familycontrols/familycontrols.conf${pam_dir:+, $dest$pam_dir/pam_familycontrols.so}"
[ "$start" = yes ] || exit 0

if [ -d /run/systemd/system ]; then
    systemctl enable --now familycontrolsd.socket familycontrolsd.service familycontrols-flatpak.socket
    echo "==> the Guard runs under systemd: systemctl status familycontrolsd"
else
    echo "==> no systemd here: running the Guard in the foreground (Ctrl-C stops it)"
    exec "$prefix/sbin/familycontrolsd"
fi
