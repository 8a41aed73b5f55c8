#!/usr/bin/env bash
# core_wm.sh -- window managers through tincan (issue 16): for each of twm, openbox,
# fluxbox and icewm, on a twin pair of Xvfbs (one driven directly, one through a tincan
# pair), the window manager, then xterm, a GTK 3 program, a Tk program and an Athena
# program; windows moved and resized through the window manager with xdotool (requests
# it redirects, and a drag of the pointer); then the tree's named windows, the client
# windows' properties, the whole screen, and after the manager's SIGTERM its exit status
# and the tree it leaves must be the same as directly (the filters below say what is not
# compared and why).
# A probe directly on the tincan side's Xvfb (tests/clients/xprobe.c) must be answered
# within 1 s throughout. CORE_WM_TWIN=direct drives both Xvfbs directly (to check what is
# deterministic); CORE_WM_ONLY="twm icewm" runs only those.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
# Every configuration the window managers read is the test's own: no clock, no task bar,
# no background program, the same on both sides.
export HOME=$XL_TMP/home
mkdir -p "$HOME/.fluxbox" "$HOME/.icewm" "$HOME/.config"
export XDG_CONFIG_HOME=$HOME/.config NO_AT_BRIDGE=1 GDK_BACKEND=x11
# twm: placed without asking the user; it still grabs the server (no NoGrabServer).
printf 'RandomPlacement\nButton1 = : title : f.move\n' >"$HOME/.twmrc"
cat >"$HOME/.fluxbox/init" <<'FLUXINIT'
session.screen0.toolbar.visible: false
session.screen0.slit.autoHide: true
session.styleOverlay: ~/.fluxbox/overlay
session.screen0.workspaces: 1
session.screen0.focusModel: ClickToFocus
FLUXINIT
printf 'background: none\n' >"$HOME/.fluxbox/overlay"
printf 'ShowTaskBar=0\nTaskBarShowClock=0\nShowPopupsAbovePointer=0\nTooltipDelay=0\n' >"$HOME/.icewm/preferences"
export ICEWM_PRIVCFG=$HOME/.icewm
# GTK's transitions (a header bar button's colour as the focus moves) end on frames whose
# timing differs from run to run: with them, two direct runs under icewm differed in 134
# bytes of gtk3-demo's close button, one level of grey.
mkdir -p "$HOME/.config/gtk-3.0"
printf '[Settings]\ngtk-enable-animations=false\n' >"$HOME/.config/gtk-3.0/settings.ini"
cat >"$XL_TMP/tk.tcl" <<'TK'
wm title . wm-tk
wm geometry . +420+360
label .l -text "Tk under a window manager"
button .b -text "A button"
canvas .c -width 200 -height 80 -background white
.c create rectangle 10 10 90 70 -fill red
.c create oval 110 10 190 70 -fill blue
pack .l .b .c
TK

WMS=(${CORE_WM_ONLY:-twm openbox fluxbox icewm})

# Each program: a name pattern of its window and how to start it.
start_programs() { # TARGET SCREEN
    local t=$1 s=$2
    xl_bg_connected "$t" "$s" xterm -T wm-xterm -geometry 60x12+30+60 -e sh -c 'printf "tincan under a window manager\n"; exec sleep 600' &&
        xl_wait_alive "$s" 30 xl_has_window "$s" '^wm-xterm$' || return 1
    xl_bg_connected "$t" "$s" gtk3-demo --run=button_box &&
        xl_wait_alive "$s" 30 xl_has_window "$s" '^Button Boxes$' || return 1
    xl_bg_connected "$t" "$s" wish "$XL_TMP/tk.tcl" &&
        xl_wait_alive "$s" 30 xl_has_window "$s" '^wm-tk$' || return 1
    xl_bg_connected "$t" "$s" xcalc -geometry +700+400 &&
        xl_wait_alive "$s" 30 xl_has_window "$s" '^Calculator$' || return 1
}

abs_pos() { xl_on "$1" timeout 10 xwininfo -id "$2" | awk '/Absolute upper-left X/ { x = $NF } /Absolute upper-left Y/ { y = $NF } END { print x, y }'; }
wm_ready() { xl_on "$1" timeout 10 xwininfo -root -all 2>/dev/null | grep -q SubstructureRedirect; }

# Through the window manager: ConfigureWindow requests it redirects, then a drag.
move_windows() { # SCREEN WM
    local s=$1 wm=$2 w
    # Each window looked up again, for a while: a manager may keep a window unmapped for a
    # moment (once under icewm, directly, xdotool found none and moved window 0).
    w=$(xl_window_soon "$s" '^wm-xterm$') && xl_on "$s" timeout 10 xdotool windowsize "$w" 500 250 windowmove "$w" 40 80 || return 1
    w=$(xl_window_soon "$s" '^Calculator$') && xl_on "$s" timeout 10 xdotool windowmove "$w" 650 380 || return 1
    w=$(xl_window_soon "$s" '^wm-tk$') && xl_on "$s" timeout 10 xdotool windowsize "$w" 300 200 || return 1
    # A drag of the Tk window with Alt and the first button, which these managers bind to
    # moving. (Not under twm: its f.move takes the server and the pointer, and xdotool,
    # another client, then cannot end the drag, even directly.)
    [ "$wm" = twm ] && return 0
    local x0 y0 x y
    read -r x0 y0 < <(abs_pos "$s" "$w")
    x=$((x0 + 40)); y=$((y0 + 40))
    xl_on "$s" timeout 10 xdotool mousemove "$x" "$y" sleep 0.2 keydown alt mousedown 1 sleep 0.2 \
        mousemove $((x + 30)) $((y + 20)) sleep 0.2 mousemove $((x + 60)) $((y + 40)) sleep 0.2 mouseup 1 keyup alt \
        mousemove 2 766 || return 1
    moved() { read -r x y < <(abs_pos "$1" "$2"); [ "$x" != "$3" ] || [ "$y" != "$4" ]; }
    xl_wait_alive "$s" 5 moved "$s" "$w" "$x0" "$y0" || { echo "    the drag left wm-tk at $x0,$y0"; return 1; }
}

# Properties naming windows (WM_TRANSIENT_FOR, _NET_CLIENT_LIST...): ids left out. Even the
# client part differs: GTK takes fewer ids through tincan (no MIT-SHM segments, the
# extension being hidden), so its later windows get other ids than directly.
no_ids() { sed "s/$1\\b/DISPLAY/g; s/0x[0-9a-f]\\+/ID/g"; }
# The tree: the named windows (the programs', and the managers' own named ones) with their
# sizes, positions in their parents and on the screen, in stacking order. Not the managers'
# unnamed decoration windows, nor any id: how many windows a manager creates, resizes and
# restacks while it handles focus changes depends on timing, even between two direct runs.
named_windows() { grep -E '^ *0x[0-9a-f]+ "' | sed "s/$1\\b/DISPLAY/g; s/0x[0-9a-f]\\+/ID/"; }
# xprop: what differs between any two runs even directly (process ids, server times).
# Also openbox's focus stealing prevention, which compares user times in ms: whether the GTK
# dialog is given focus or DEMANDS_ATTENTION depends on timing, even directly.
no_run_props() { grep -vE '^(_NET_WM_PID|_NET_WM_USER_TIME|WM_CLIENT_MACHINE|_NET_WM_SYNC_REQUEST_COUNTER)\b' |
    sed 's/, _NET_WM_STATE_DEMANDS_ATTENTION//; s/ = _NET_WM_STATE_DEMANDS_ATTENTION$/ =/'; }

describe() { # SCREEN OUTDIR: tree, properties of the four clients and the root's _NET_ ones
    local s=$1 o=$2 d="${1}_display" w n
    mkdir -p "$o"
    xl_on "$s" timeout 10 xwininfo -root -tree | named_windows "${!d}" >"$o/tree"
    for n in '^wm-xterm$' '^Button Boxes$' '^wm-tk$' '^Calculator$'; do
        w=$(xl_window "$s" "$n")
        echo "== $n"
        # In the order of their names: when the manager's WM_STATE and a program's last
        # property come close, the server lists them in either order, even directly.
        [ -n "$w" ] && xl_on "$s" timeout 10 xprop -id "$w" | no_run_props | no_ids "${!d}" |
            perl -e 'my @p; while (<>) { if (/^\s/ && @p) { $p[-1] .= $_ } else { push @p, $_ } } print sort @p'
    done >"$o/props"
    xl_on "$s" timeout 10 xprop -root | grep -E '^_NET_(SUPPORTED|CLIENT_LIST|ACTIVE_WINDOW|NUMBER_OF_DESKTOPS|CURRENT_DESKTOP|WORKAREA|DESKTOP_GEOMETRY|SUPPORTING_WM_CHECK)' |
        no_ids "${!d}" >"$o/root"
}
same_file() { # SENTENCE A B
    if [ -e "$2" ] && diff -u "$2" "$3" >"$3.diff"; then pass "$1"; else fail "$1"; head -n 30 "$3.diff" | sed 's/^/    /'; fi
}

for wm in "${WMS[@]}"; do
    if ! command -v "$wm" >/dev/null; then echo "NOTE: $wm is not run: not installed."; continue; fi
    t0=$SECONDS
    xl_start_xvfb a && xl_start_xvfb b || { fail "That two Xvfbs start for $wm"; continue; }
    if [ "${CORE_WM_TWIN:-}" = direct ]; then
        p_display=$b_display; p_auth=$b_auth
    else
        xl_start_pair p b || { fail "That a tincan pair starts for $wm"; continue; }
        xl_on p timeout 20 xdpyinfo >/dev/null 2>&1 # the first client waits for the display side's facts
    fi
    xl_start_probe a && xl_start_probe b || fail "That the probes start for $wm"
    xl_on a xdotool mousemove 2 766; xl_on b xdotool mousemove 2 766
    ok=1
    for side in a:a p:b; do
        t=${side%:*}; s=${side#*:}; how=directly; [ "$t" = p ] && how="through tincan"
        xl_bg_connected "$t" "$s" "$wm" 2>"$XL_TMP/$wm.$t.log"; printf -v "wm_pid_$t" '%s' "$XL_LAST"
        # The manager is up once it has selected SubstructureRedirect on the root.
        xl_wait_alive "$s" 30 wm_ready "$s" || { fail "That $wm starts ($how)"; ok=0; break; }
        # fluxbox shows an xmessage of its own at its first start, when it will: the windows'
        # stacking order compared below is then a race with it, unless it is there first.
        [ "$wm" = fluxbox ] && xl_wait_for 10 xl_has_window "$s" '^xmessage$'
        if ! start_programs "$t" "$s"; then
            fail "That xterm, gtk3-demo, wish and xcalc start under $wm ($how)"; ok=0
            echo "    the named windows then (the one missing is not among them):"
            xl_on "$s" timeout 10 xwininfo -root -tree 2>/dev/null | grep -E '^ +0x[0-9a-f]+ "' | sed 's/^ */      /' | head -20
            break
        fi
        if ! move_windows "$s" "$wm"; then fail "That xdotool moves and resizes windows under $wm ($how)"; ok=0; break; fi
    done
    if [ "$ok" = 1 ]; then
        pass "That $wm, xterm, gtk3-demo, wish and xcalc run and are moved and resized through tincan"
        xl_dump_stable a "$XL_TMP/$wm.direct.xwd" 30 || fail "That the screen settles under $wm directly"
        describe a "$XL_TMP/$wm.direct"
        xl_wait_alive b 20 xl_dump_until_same b "$XL_TMP/$wm.direct.xwd" "$XL_TMP/$wm.tincan.xwd" 20
        describe b "$XL_TMP/$wm.tincan"
        same_file "That the named windows of the tree under $wm are the same through tincan" "$XL_TMP/$wm.direct/tree" "$XL_TMP/$wm.tincan/tree"
        same_file "That the client windows' properties under $wm are the same through tincan" "$XL_TMP/$wm.direct/props" "$XL_TMP/$wm.tincan/props"
        same_file "That the root's _NET_ properties under $wm are the same through tincan" "$XL_TMP/$wm.direct/root" "$XL_TMP/$wm.tincan/root"
        if cmp -s "$XL_TMP/$wm.direct.xwd" "$XL_TMP/$wm.tincan.xwd"; then
            pass "That the screen under $wm is byte for byte the same through tincan"
        else
            fail "That the screen under $wm is byte for byte the same through tincan"
            xl_describe_diff "$XL_TMP/$wm.direct.xwd" "$XL_TMP/$wm.tincan.xwd"
            mkdir -p /tmp/tincan-core-failures && cp "$XL_TMP/$wm.direct.xwd" "$XL_TMP/$wm.tincan.xwd" /tmp/tincan-core-failures/
        fi
        # The manager leaves (SIGTERM): its exit status, and the tree it leaves behind (the
        # programs given back to the root), the same as directly.
        for t in a p; do
            pv=wm_pid_$t; kill -TERM "${!pv}"
            if xl_wait_exit "${!pv}" 10; then wait "${!pv}"; printf -v "wm_rc_$t" '%s' "$?"; else printf -v "wm_rc_$t" 'running'; fi
        done
        check "That $wm exits after SIGTERM with the same status through tincan as directly ($wm_rc_a, $wm_rc_p)" \
            test "$wm_rc_a" = "$wm_rc_p" -a "$wm_rc_p" != running
        left_tree() { xl_on "$1" timeout 10 xwininfo -root -tree | named_windows "$2" >"$3"; }
        left_tree a "$a_display" "$XL_TMP/$wm.direct/tree.after"
        same_after() { left_tree b "$b_display" "$XL_TMP/$wm.tincan/tree.after"; cmp -s "$XL_TMP/$wm.direct/tree.after" "$XL_TMP/$wm.tincan/tree.after"; }
        xl_wait_alive b 10 same_after
        same_file "That the window tree after $wm left is the same through tincan" "$XL_TMP/$wm.direct/tree.after" "$XL_TMP/$wm.tincan/tree.after"
    fi
    if xl_probe_ok b; then pass "That the real X server answered every probe within 1 s under $wm through tincan"
    else fail "That the real X server answered every probe within 1 s under $wm through tincan: $XL_PROBE_WHY"; fi
    # Everything this round started, newest first, then the pair and the Xvfbs.
    round=()
    for ((i = ${#XL_PIDS[@]} - 1; i >= 0; i--)); do
        pp=${XL_PIDS[i]}
        case "$pp" in "$p_app_pid"|"$p_disp_pid"|"$a_pid"|"$b_pid") continue ;; esac
        round+=("$pp"); kill "$pp" 2>/dev/null
    done
    for pp in "${round[@]}"; do xl_wait_exit "$pp" 3 || kill -KILL "$pp" 2>/dev/null; done
    if [ "${CORE_WM_TWIN:-}" != direct ]; then
        xl_stop_pair p
        if [ "$p_app_rc" = 0 ] && [ "$p_disp_rc" = 0 ] && xl_sanitizer_clean "$p_app_log" "$p_disp_log"; then
            pass "That both halves end cleanly after $wm, with no sanitizer report"
        else
            fail "That both halves end cleanly after $wm, with no sanitizer report (app $p_app_rc, display $p_disp_rc)"
            tail -n 20 "$p_app_log" "$p_disp_log" | sed 's/^/    /'
        fi
    fi
    kill "$a_pid" "$b_pid"; xl_wait_exit "$a_pid" 5; xl_wait_exit "$b_pid" 5
    XL_PIDS=() # all ended above (xl_cleanup would wait for them again)
    echo "    ($wm: $((SECONDS - t0)) s)"
done
summary
