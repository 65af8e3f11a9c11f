#!/bin/sh
# Builds the Debian package, familycontrols_VERSION_ARCH.deb, with Debian's
# own tools: the products from Config/build.sh laid out as Debian lays them
# out, Depends from dpkg-shlibdeps, the control file from dpkg-gencontrol
# (version from Config/debian/changelog), and the archive from dpkg-deb.
# Needs dpkg-dev (and the build's own packages, see install.sh); not root.
#
#   Config/build-deb.sh [OUTPUT_DIR]     (default .build/debian); prints the .deb's path
#   BUILD_DIR=DIR Config/build-deb.sh    build the products in DIR (see build.sh)
#   DPKG_DEB_COMPRESSOR_TYPE=gzip …      dpkg-deb's own variables choose the compression
#                                        (default xz, which takes a minute or two here)
set -eu
cd "$(dirname "$0")/.."
out=${1:-.build/debian}
umask 022

bin=$(Config/build.sh)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
doc=$root/usr/share/doc/familycontrols

install -d "$root/DEBIAN" "$root/usr/sbin" "$root/usr/bin" "$root/usr/lib/familycontrols/demo" \
    "$root/usr/libexec/familycontrols" "$root/usr/share/familycontrols" "$root/usr/share/man/man5" \
    "$root/usr/share/man/man8" "$root/usr/share/bash-completion/completions" "$root/lib/systemd/system" \
    "$root/etc/familycontrols" "$root/etc/pam.d" "$root/etc/flatpak/installations.d" "$root/etc/xdg/autostart" "$doc"
# Stripped as dh_strip strips: the Swift metadata lives in allocated sections and stays.
install -m 0755 "$bin/familycontrolsd" "$root/usr/sbin/familycontrolsd"
install -m 0755 "$bin/familyctl" "$root/usr/bin/familyctl"
install -m 0755 "$bin/familycontrols-demo" "$root/usr/lib/familycontrols/demo/familycontrols-demo"
# Where /usr/sbin/familycontrolsd looks for its inspector (familycontrols-inspect(8)).
install -m 0755 "$bin/familycontrols-inspect" "$root/usr/libexec/familycontrols/familycontrols-inspect"
# What /usr/bin/familyctl becomes to run `familyctl agent`.
install -m 0755 "$bin/familycontrols-agent" "$root/usr/libexec/familycontrols/familycontrols-agent"
for binary in "$root/usr/sbin/familycontrolsd" "$root/usr/bin/familyctl" "$root/usr/libexec/familycontrols/familycontrols-inspect" \
    "$root/usr/libexec/familycontrols/familycontrols-agent" "$root/usr/lib/familycontrols/demo/familycontrols-demo"; do
    strip --remove-section=.comment --remove-section=.note "$binary"
done
install -m 0644 Config/demo/org.familycontrols.Demo.desktop "$root/usr/lib/familycontrols/demo/"
install -m 0755 Config/held-locks.sh "$root/usr/libexec/familycontrols/held-locks"
install -m 0644 Config/org.familycontrols.guard.varlink Config/org.familycontrols.inspect.varlink Config/org.familycontrols.mover.varlink Config/org.familycontrols.conversation.varlink "$root/usr/share/familycontrols/"
install -m 0644 Config/completion/familyctl.bash "$root/usr/share/bash-completion/completions/familyctl"
for page in familycontrolsd.8 familyctl.8 familycontrols-inspect.8 pam_familycontrols.8 familycontrols.conf.5; do
    section=${page##*.}
    gzip -9n < "Config/man/$page" > "$root/usr/share/man/man$section/$page.gz"
done
sed 's|/usr/local/sbin/familycontrolsd|/usr/sbin/familycontrolsd|g' Config/systemd/familycontrolsd.service \
    > "$root/lib/systemd/system/familycontrolsd.service"
install -m 0644 Config/systemd/familycontrolsd.socket "$root/lib/systemd/system/"
# The Flatpak move service, which the Guard asks through its socket.
sed 's|/usr/local/sbin/familycontrolsd|/usr/sbin/familycontrolsd|g' "Config/systemd/familycontrols-flatpak@.service" \
    > "$root/lib/systemd/system/familycontrols-flatpak@.service"
install -m 0644 Config/systemd/familycontrols-flatpak.socket "$root/lib/systemd/system/"
if grep -q /usr/local "$root/lib/systemd/system/familycontrolsd.service" "$root/lib/systemd/system/familycontrols-flatpak@.service"; then
    echo "build-deb.sh: a unit still names /usr/local" >&2
    exit 1
fi
# The PAM module, where libpam-modules puts its own, and its pam-auth-update
# profile (postinst adds it to /etc/pam.d/common-account and common-session).
pam_dir=/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/security
install -d "$root$pam_dir" "$root/usr/share/pam-configs"
Config/build-pam-module.sh "$root$pam_dir/pam_familycontrols.so"
chmod 0644 "$root$pam_dir/pam_familycontrols.so"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root$pam_dir/pam_familycontrols.so"
install -m 0644 Config/pam-configs/familycontrols "$root/usr/share/pam-configs/familycontrols"
install -m 0644 Config/familycontrols.conf "$root/etc/familycontrols/familycontrols.conf"
install -m 0644 pam.d/familycontrols-guardian pam.d/familycontrols-individual pam.d/familycontrols-guardian-code "$root/etc/pam.d/"
# Guardians' one-time-code secrets (familyctl code enroll), root's alone.
install -d -m 0700 "$root/etc/familycontrols/oath"
install -d -m 0755 "$root/etc/familycontrols/familycontrols.conf.d"
# Guardians' graphical sessions start the notification agent.
install -m 0644 Config/autostart/familycontrols-agent.desktop "$root/etc/xdg/autostart/"
# The Guard's Flatpak installation, where approved per-user apps are moved.
install -m 0644 Config/flatpak/familycontrols.conf "$root/etc/flatpak/installations.d/familycontrols.conf"
install -m 0644 Config/debian/copyright "$doc/copyright"
install -d "$root/usr/share/lintian/overrides"
install -m 0644 Config/debian/lintian-overrides "$root/usr/share/lintian/overrides/familycontrols"
gzip -9n < Config/debian/changelog > "$doc/changelog.Debian.gz"
install -m 0644 Config/debian/conffiles "$root/DEBIAN/conffiles"
install -m 0755 Config/debian/preinst Config/debian/postinst Config/debian/prerm Config/debian/postrm "$root/DEBIAN/"

# libstdc++ and libgcc are linked in (Config/build.sh): name their source
# package and version, so a rebuild can follow a fix to them.
archive=$(readlink -f "$(Config/static-libstdcxx.sh)")
owner=$(dpkg-query -S "$archive" 2>/dev/null | sed -n '1s/: .*//p') || true
if [ -z "$owner" ]; then
    echo "build-deb.sh: $archive belongs to no Debian package; cannot say which source it was built from" >&2
    exit 1
fi
static_built_using=$(dpkg-query -W -f='${source:Package} (= ${source:Version})' "$owner")

# dpkg-shlibdeps and dpkg-gencontrol read debian/control from where they run.
mkdir "$stage/debian"
cp Config/debian/control Config/debian/changelog "$stage/debian/"
(
    cd "$stage"
    dpkg-shlibdeps -Tdebian/substvars root/usr/sbin/familycontrolsd root/usr/bin/familyctl \
        root/usr/libexec/familycontrols/familycontrols-inspect root/usr/libexec/familycontrols/familycontrols-agent \
        root/usr/lib/familycontrols/demo/familycontrols-demo \
        "root$pam_dir/pam_familycontrols.so"
    echo "misc:Static-Built-Using=$static_built_using" >> debian/substvars
    dpkg-gencontrol -pfamilycontrols -Proot -Tdebian/substvars -fdebian/files
)
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
    > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/conffiles" "$root/DEBIAN/control"

# Every file dated from the changelog's entry: the same sources make the same package.
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l Config/debian/changelog -S Timestamp)
export SOURCE_DATE_EPOCH
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$out"
version=$(dpkg-parsechangelog -l Config/debian/changelog -S Version)
deb="$out/familycontrols_${version}_$(dpkg --print-architecture).deb"
dpkg-deb --root-owner-group --build "$root" "$deb" >&2
echo "$deb"
