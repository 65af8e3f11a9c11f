#!/bin/sh
# Makes Config/images/guardian-notification.png: `familyctl agent` on a real
# X desktop (Xvfb) with a real notification daemon (dunst), on a session bus
# of its own (dbus-run-session), captured with ImageMagick's import.
#
# Run it as a guardian while a request of one of their children waits
# (DesktopAgentTests.theScreenshotShowsTheRequest runs it against the test
# Guard: FAMILYCONTROLS_SCREENSHOT=Config/images/guardian-notification.png
# swift test --filter DesktopAgentTests/theScreenshot).
#
#   Config/screenshot-notification.sh OUTPUT.png [familyctl agent options, e.g. --socket PATH]
#
# With SCREENSHOT_CLICK=approve it then clicks Approve the way a person
# does (dunst's context menu, its dmenu a script that picks Approve), and
# captures the pinentry dialog the agent opens for the guardian's password
# (pinentry-gtk-2 on the same display) instead; nothing is typed, and the
# dialog is closed unanswered, so the request stays undecided.
#
# With SCREENSHOT_BUS_FILE=PATH it starts no agent: it writes its session
# bus's address to PATH and captures the first notification something else
# posts there (the child's time warning, which the Guard's own program posts
# as the child: DesktopWarningTests.theChildsWarningIsCapturedOnADesktop,
# FAMILYCONTROLS_WARNING_SCREENSHOT=Config/images/child-time-warning.png).
#
# Needs: xvfb, x11-utils, dunst, imagemagick, dbus, and for the click pinentry-gtk2
# (Config/install.sh installs them).
set -eu
PATH=/usr/bin:/bin:$PATH
out=$1
shift
familyctl=${FAMILYCTL:-familyctl}
# X servers put their sockets in /tmp/.X11-unix, which a booted system makes
# (systemd-tmpfiles' x11.conf); an X server not run as root will not.
if [ ! -d /tmp/.X11-unix ]; then
    if [ "$(id -u)" = 0 ]; then
        install -d -m 1777 /tmp/.X11-unix
    else
        echo "screenshot-notification.sh: /tmp/.X11-unix is missing; as root: install -d -m 1777 /tmp/.X11-unix" >&2
        exit 1
    fi
fi
# The first display number no X server holds, and whose keymap file (which
# Xvfb's xkbcomp writes as /tmp/server-N.xkm and cannot replace if another
# user's server left it) is free.
free_display() {
    while [ -e "/tmp/.X$number-lock" ] || [ -e "/tmp/.X11-unix/X$number" ] \
        || { [ -e "/tmp/server-$number.xkm" ] && [ ! -O "/tmp/server-$number.xkm" ]; }; do
        number=$((number + 1))
    done
}
# Whether the display's lock names our server: another program may have taken
# the same free number a moment before ours, and its server answers there too.
ours() { [ "$(tr -d ' ' 2>/dev/null <"/tmp/.X$number-lock")" = "$xvfb" ]; }
number=${SCREENSHOT_DISPLAY:-97}
work=$(mktemp -d)
# SIGKILL: a test runner's children may inherit SIGTERM blocked.
# Killed outright, Xvfb leaves its lock, socket and keymap behind: removed
# here, and only when they are our server's.
trap 'kill -KILL ${xvfb:-0} 2>/dev/null || true
      if [ -n "${xvfb:-}" ] && ours; then rm -f "/tmp/.X$number-lock" "/tmp/.X11-unix/X$number"; fi
      [ -O "/tmp/server-$number.xkm" ] && rm -f "/tmp/server-$number.xkm"; rm -rf "$work"' EXIT

click=${SCREENSHOT_CLICK:-}
height=200
[ -n "$click" ] && height=440
# Ready when our server answers, not when its socket appears: the server
# binds before it compiles its keymap, and may still fail after. A server
# that could not take the number (another took it first) is tried again on
# the next one.
attempt=0
while :; do
    free_display
    Xvfb ":$number" -screen 0 "900x${height}x24" -nolisten tcp >"$work/xvfb.log" 2>&1 &
    xvfb=$!
    i=0 ready=no
    while kill -0 $xvfb 2>/dev/null && [ $i -le 300 ]; do
        if ours && xwininfo -display ":$number" -root >/dev/null 2>&1; then ready=yes; break; fi
        i=$((i + 1))
        sleep 0.1
    done
    [ $ready = yes ] && break
    kill -KILL $xvfb 2>/dev/null || true
    attempt=$((attempt + 1))
    if [ $attempt -ge 5 ]; then
        echo "screenshot-notification.sh: Xvfb did not start on :$number" >&2
        cat "$work/xvfb.log" >&2
        exit 1
    fi
    number=$((number + 1))
done

# A desktop's look: a grey background, one large, readable notification.
cat >"$work/dunstrc" <<'RC'
[global]
    font = DejaVu Sans 13
    width = 860
    height = 180
    origin = top-center
    offset = 0x20
    padding = 14
    horizontal_padding = 16
    frame_width = 2
    frame_color = "#4c7899"
    markup = full
    format = "<b>%s</b>\n%b"
    show_indicators = yes
    word_wrap = yes
    icon_position = off
[urgency_normal]
    background = "#f6f6f6"
    foreground = "#202020"
    timeout = 0
RC
# The context menu's chooser: the entry of the action named, as a person picks it.
printf '#!/bin/sh\ngrep -m1 -i "%s"\n' "${click:-approve}" >"$work/choose"
chmod 0755 "$work/choose"
printf '[global]\n    dmenu = %s\n' "$work/choose" >>"$work/dunstrc"

export DISPLAY=":$number" HOME="$work" XDG_CONFIG_HOME="$work" FAMILYCTL_SCREENSHOT_OUT="$out" \
    SCREENSHOT_CLICK="$click" SCREENSHOT_HEIGHT="$height" SCREENSHOT_BUS_FILE="${SCREENSHOT_BUS_FILE:-}"
dbus-run-session -- sh -c '
    convert -size "900x$SCREENSHOT_HEIGHT" xc:"#3b4252" "$HOME/background.png" && display -window root "$HOME/background.png" 2>/dev/null &
    dunst -config "$HOME/dunstrc" >"$HOME/dunst.log" 2>&1 &
    dunst=$!
    # Ready once dunst owns the notifications name (asked without starting
    # one through D-Bus activation): seconds on a loaded machine.
    i=0
    until dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
            org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications 2>/dev/null | grep -q "boolean true" \
          || [ $i -gt 150 ]; do i=$((i + 1)); sleep 0.2; done
    agent=
    if [ -n "$SCREENSHOT_BUS_FILE" ]; then
        printf "%s" "$DBUS_SESSION_BUS_ADDRESS" >"$SCREENSHOT_BUS_FILE.new" && mv "$SCREENSHOT_BUS_FILE.new" "$SCREENSHOT_BUS_FILE"
    else
        PINENTRY=/usr/bin/pinentry-gtk-2 "$0" agent "$@" >"$HOME/agent.log" 2>&1 &
        agent=$!
    fi
    # Captured once dunst shows the notification (up to 30 s on a loaded machine).
    i=0
    until [ "$(dunstctl count displayed 2>/dev/null || echo 0)" -ge 1 ] || [ $i -gt 150 ]; do i=$((i + 1)); sleep 0.2; done
    sleep 0.5
    if [ -n "$SCREENSHOT_CLICK" ]; then
        dunstctl context
        # The dialog: pinentry-gtk-2 has mapped its window once xwininfo names it.
        i=0
        until xwininfo -root -tree 2>/dev/null | grep -qi pinentry || [ $i -gt 50 ]; do i=$((i + 1)); sleep 0.2; done
        sleep 1
    fi
    import -display "$DISPLAY" -window root "$FAMILYCTL_SCREENSHOT_OUT"
    made=$?
    [ $made = 0 ] || cat "$HOME/dunst.log" "$HOME/agent.log" >&2 2>/dev/null
    kill -KILL $agent $dunst 2>/dev/null || true
    pkill -KILL -u "$(id -u)" -x pinentry-gtk-2 2>/dev/null || true
    exit $made
' "$familyctl" "$@" || { made=$?; echo "screenshot-notification.sh: no picture; the X server said:" >&2; cat "$work/xvfb.log" >&2; exit $made; }
echo "screenshot-notification.sh: wrote $out"
