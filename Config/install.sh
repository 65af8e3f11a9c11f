#!/usr/bin/env bash
# Builds FamilyControls, installs it, and runs the Guard.
#
#   Config/install.sh                  install, then start the Guard (systemd, or the foreground)
#   Config/install.sh --no-start       install only
#   Config/install.sh --packages-only  install the Debian packages the build and the tests need, nothing else
#   PREFIX=/usr Config/install.sh      install under another prefix (default /usr/local)
#
# Existing /etc files (pam.d services, familycontrols.conf) are never
# overwritten: the shipped versions are installed beside them as *.dist.
set -euo pipefail
cd "$(dirname "$0")/.."

start=yes
case "${1:-}" in
    --no-start) start=no ;;
    --packages-only) start=packages ;;
    "") ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
esac
if [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: must be run as root (try: sudo $0)" >&2
    exit 4
fi
prefix=${PREFIX:-/usr/local}

# What the build, the Guard and the tests need, so that `swift build && swift
# test` passes next on a fresh machine:
#   libpam0g-dev, libsqlite3-dev: the C libraries the package links.
#   libpam-modules, libpam-runtime: pam_unix and the common-* stacks the services include.
#   e2fsprogs: chattr/lsattr; passwd, login: useradd, chpasswd, chage, usermod.
#   procps: pkill; util-linux: setpriv, runuser.
#   For the tests: libpam-wrapper (pam_chatty), sqlite3 (the audit table),
#   strace (a traced app is refused), xfsprogs and btrfs-progs (locks on XFS
#   and btrfs loop mounts), gcc and libc6-dev (a library a child preloads),
#   perl (children racing the lock), libpam-oath and oathtool (one-time
#   codes), python3 and the varlink package (an independent client), systemd
#   (systemd-analyze scores and checks the shipped unit; nothing is started)
#   and libseccomp2 (the Guard run under the unit's system call filter).
packages="libpam0g-dev libsqlite3-dev libpam-modules libpam-runtime e2fsprogs passwd login procps util-linux
    libpam-wrapper sqlite3 strace xfsprogs btrfs-progs gcc libc6-dev perl libpam-oath oathtool python3 python3-pip
    systemd libseccomp2"
if command -v apt-get >/dev/null; then
    echo "==> installing build, run and test dependencies"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $packages >/dev/null
    python3 -m pip install --quiet --disable-pip-version-check varlink 2>/dev/null \
        || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages varlink
else
    echo "install.sh: no apt-get here; install the equivalents of: $packages" >&2
fi
[ "$start" = packages ] && exit 0

echo "==> building (release)"
swift build -c release --product familycontrolsd
swift build -c release --product familyctl
swift build -c release --product familycontrols-demo
bin=$(swift build -c release --show-bin-path)

echo "==> installing under $prefix and /etc"
install -d -m 0755 "$prefix/sbin" "$prefix/bin" "$prefix/share/familycontrols" \
    "$prefix/share/man/man5" "$prefix/share/man/man8" "$prefix/lib/familycontrols/demo"
install -m 0755 "$bin/familycontrolsd" "$prefix/sbin/familycontrolsd"
install -m 0755 "$bin/familyctl" "$prefix/bin/familyctl"
install -m 0755 "$bin/familycontrols-demo" "$prefix/lib/familycontrols/demo/familycontrols-demo"
install -m 0644 Config/demo/org.familycontrols.Demo.desktop "$prefix/lib/familycontrols/demo/"
install -m 0644 Config/org.familycontrols.guard.varlink "$prefix/share/familycontrols/"
install -m 0644 Config/man/familycontrolsd.8 Config/man/familyctl.8 "$prefix/share/man/man8/"
install -m 0644 Config/man/familycontrols.conf.5 "$prefix/share/man/man5/"
if [ -d /usr/share/bash-completion/completions ]; then
    install -m 0644 Config/completion/familyctl.bash /usr/share/bash-completion/completions/familyctl
fi

install_config() { # source destination mode
    if [ -e "$2" ] && ! cmp -s "$1" "$2"; then
        install -m "$3" "$1" "$2.dist"
        echo "    kept your $2; the shipped version is $2.dist"
    else
        install -m "$3" "$1" "$2"
    fi
}
install -d -m 0755 /etc/familycontrols /etc/pam.d
install_config pam.d/familycontrols-guardian /etc/pam.d/familycontrols-guardian 0644
install_config pam.d/familycontrols-individual /etc/pam.d/familycontrols-individual 0644
install_config Config/familycontrols.conf /etc/familycontrols/familycontrols.conf 0644

if [ -d /run/systemd/system ]; then
    sed "s|/usr/local/sbin/familycontrolsd|$prefix/sbin/familycontrolsd|g" Config/systemd/familycontrolsd.service \
        > /etc/systemd/system/familycontrolsd.service
    install -m 0644 Config/systemd/familycontrolsd.socket /etc/systemd/system/familycontrolsd.socket
    systemctl daemon-reload
fi

echo "==> installed: $prefix/sbin/familycontrolsd, $prefix/bin/familyctl, /etc/pam.d/familycontrols-*, /etc/familycontrols/familycontrols.conf"
[ "$start" = yes ] || exit 0

if [ -d /run/systemd/system ]; then
    systemctl enable --now familycontrolsd.socket familycontrolsd.service
    echo "==> the Guard runs under systemd: systemctl status familycontrolsd"
else
    echo "==> no systemd here: running the Guard in the foreground (Ctrl-C stops it)"
    exec "$prefix/sbin/familycontrolsd"
fi
