#!/usr/bin/env bash
# core_programs.sh -- programs that inspect the server see the same thing through tincan
# as directly: xdpyinfo, xprop, xwininfo, xlsfonts, xlsatoms. Their output, run on a twin
# Xvfb directly and through a tincan pair, must be equal apart from what tincan changes on
# purpose: the display name, and the extensions it hides (MIT-SHM, DRI2, DRI3,
# XFree86-DRI, XVideo-MotionCompensation). The filters below remove exactly that.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

HIDDEN='MIT-SHM|DRI2|DRI3|XFree86-DRI|XVideo-MotionCompensation'

xl_start_xvfb a && xl_start_xvfb b && xl_start_pair p b || { fail "That two Xvfbs and a tincan pair start"; summary; exit 1; }

# same_output SENTENCE FILTER CMD...: runs CMD directly on a and through tincan (p), passes
# both outputs (stdout and stderr) through FILTER (a function: FILTER SIDE < in), diffs.
same_output() {
    local sentence=$1 filter=$2; shift 2
    local d=$XL_TMP/out.direct t=$XL_TMP/out.tincan
    xl_on a "$@" >"$d.raw" 2>&1; local rc_d=$?
    xl_on p "$@" >"$t.raw" 2>&1; local rc_t=$?
    "$filter" a <"$d.raw" >"$d"
    "$filter" p <"$t.raw" >"$t"
    if [ "$rc_d" = "$rc_t" ] && [ -s "$d" ] && diff -u "$d" "$t" >"$XL_TMP/out.diff"; then
        pass "$sentence"
    else
        fail "$sentence (exit status $rc_d directly, $rc_t through tincan; $(wc -l <"$d") lines)"
        head -n 40 "$XL_TMP/out.diff" | sed 's/^/    /'
    fi
}

# The name of the display is the one thing every program may print differently.
display_name() {
    local d="${1}_display"
    sed "s/${!d}\\b/DISPLAY/g"
}
# Window ids without their client part (bits 21 and up): the display side's own watching
# connection (src/proxy/observer.c) is one more X client, so later clients get another base.
resource_ids() {
    display_name "$1" | perl -pe 's/\b0x([0-9a-f]{6,8})\b/sprintf("0x%x", hex($1) & 0x1fffff)/ge'
}
# xwininfo -all: the events "someone" selects include the display side's own watch
# (VisibilityChange, StructureNotify, SubstructureNotify, PropertyChange on the windows clients create),
# a documented difference (docs/DESIGN.md); drop those from that list only.
no_watch_masks() {
    display_name "$1" | awk '/Someone wants these events:/ { some = 1; print; next }
        /^  [A-Z]/ { some = 0 }
        !(some && /^      (VisibilityChange|StructureNotify|SubstructureNotify|PropertyChange)$/)'
}
# xdpyinfo: also drop the hidden extensions from the direct output (their line in the list,
# their section in -ext all, and the "not supported" and "missing" notes tincan's side gets
# for them instead) and count them out of "number of extensions".
xdpyinfo_filter() {
    if [ "$1" = a ]; then
        local tmp hidden
        tmp=$(display_name a)
        hidden=$(grep -cE "^    ($HIDDEN)( |\$)" <<<"$tmp")
        grep -vE "^    ($HIDDEN)( |\$)|^($HIDDEN) version |^  shared pixmaps: " <<<"$tmp" |
            awk -v h="$hidden" '/^number of extensions:/ { $0 = sprintf("number of extensions:    %d", $NF - h) } { print }'
    else
        # The display side's own connection watches the root's properties (PropertyChangeMask,
        # src/proxy/observer.c): drop that from the root's event mask.
        display_name p | grep -vE "^($HIDDEN) extension not supported by server|extension \"($HIDDEN)\" missing on display" |
            perl -pe 'if (/^  current input event mask:\s+0x([0-9a-f]+)/) { my $m = hex($1) & ~0x400000; s/0x[0-9a-f]+/sprintf("0x%x", $m)/e }
                      $_ = "" if /^    PropertyChangeMask\s*$/'
    fi
}

# Setup the same state on both: properties on the root window, set by a client.
for t in a p; do
    xl_on "$t" xprop -root -f TINCAN_TEST_STRING 8s -set TINCAN_TEST_STRING "carried by a string"
    xl_on "$t" xprop -root -f TINCAN_TEST_CARDINALS 32c -set TINCAN_TEST_CARDINALS "1,2,3,4294967295"
    xl_on "$t" xprop -root -f TINCAN_TEST_ATOM 32a -set TINCAN_TEST_ATOM WM_NAME
done

same_output "That xdpyinfo -queryExtensions says the same through tincan, hidden extensions apart" \
    xdpyinfo_filter xdpyinfo -queryExtensions
same_output "That xdpyinfo -ext all describes every extension the same way through tincan" \
    xdpyinfo_filter xdpyinfo -ext all
xl_on p xdpyinfo -ext MIT-SHM >"$XL_TMP/shm.out" 2>&1
check "That MIT-SHM is hidden from clients of tincan (QueryExtension says absent)" \
    grep -q 'MIT-SHM extension not supported by server' "$XL_TMP/shm.out"
xl_on p xdpyinfo -queryExtensions >"$XL_TMP/list.out" 2>&1
check "That no hidden extension is listed to clients of tincan" bash -c "! grep -qE '^    ($HIDDEN)( |\$)' '$XL_TMP/list.out'"
same_output "That xprop -root shows the same properties through tincan" display_name xprop -root
same_output "That xlsfonts lists the same fonts through tincan" display_name xlsfonts
same_output "That xlsatoms names the same atoms through tincan" display_name xlsatoms

# Two client windows on each, started in the same order (and each connected before the
# next program connects), so their resource ids are the same.
clients=()
for t in a p; do
    s=$([ "$t" = a ] && echo a || echo b)
    xl_bg_connected "$t" "$s" xlogo -geometry 120x100+10+10 && xl_wait_window "$s" '^xlogo$'; clients+=("$XL_LAST")
    xl_bg_connected "$t" "$s" xeyes -geometry 150x100+200+10 && xl_wait_window "$s" '^xeyes$'; clients+=("$XL_LAST")
done
same_output "That xwininfo -root -tree shows the same window tree through tincan (client id bases apart)" resource_ids xwininfo -root -tree
wa=$(xl_window a '^xlogo$'); wp=$(xl_window p '^xlogo$')
check "That xlogo's window has the same id through tincan as directly" test -n "$wa" -a "$wa" = "$wp"
same_output "That xwininfo -all of xlogo's window is the same through tincan (the observer's event masks apart)" no_watch_masks xwininfo -all -id "$wa"
same_output "That xprop of xlogo's window is the same through tincan" display_name xprop -id "$wa"
same_output "That a BadWindow error reaches the client through tincan as it does directly" \
    display_name xprop -id 0x7fffff
# Unicode fonts (after the window ids, which count the connections before them): QueryFont replies of 65536 glyphs, the bold coded against the medium, the
# same font again against itself (docs/PROTOCOL.md 5.2, font tables).
U='-misc-fixed-%s-r-semicondensed--13-120-75-75-c-60-iso10646-1'
same_output "That xlsfonts -lll describes Unicode fonts, a bold after its medium and again, the same through tincan" \
    display_name xlsfonts -lll -fn "$(printf "$U" medium)" -fn "$(printf "$U" bold)" -fn "$(printf "$U" medium)" \
    -fn '-misc-fixed-medium-r-normal--13-120-75-75-c-120-iso10646-1'
# 1-byte fonts, whose every glyph's metrics it prints: "fixed", its bold, "fixed" again.
same_output "That xlsfonts -lll prints every glyph's metrics of fonts, a bold after its medium, the same through tincan" \
    display_name xlsfonts -lll -fn fixed -fn 6x13bold -fn fixed -fn 7x13

kill "${clients[@]}"
xl_stop_pair p
check "That the app side exits 0 after SIGTERM" test "$p_app_rc" = 0
check "That the display side exits 0 when the app side says goodbye" test "$p_disp_rc" = 0
check "That neither half reported a sanitizer error" xl_sanitizer_clean "$p_app_log" "$p_disp_log"; grep -hE "please report|runtime error|Sanitizer" "$p_app_log" "$p_disp_log" | head -5 | sed "s/^/    log: /"
summary
