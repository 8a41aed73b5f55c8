#!/usr/bin/env bash
# core_apps.sh -- real programs alone through tincan against direct runs (issue 16): an
# editor (emacs -Q, Lucid toolkit, on a text file), two PDF viewers (mupdf, xpdf, on a PDF
# the test writes), an image viewer (feh, on a photograph) and, when installed, a web browser (firefox-esr on a local page). The
# editor and the viewers draw the same every run: their whole screens must be byte for byte
# the same as directly. Firefox does not (its start is timed and threaded): its window,
# properties and exit status must be. A probe directly on the tincan side's Xvfb
# (tests/clients/xprobe.c) must be answered within 1 s throughout.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../xlib.sh"

xl_build_clients || { fail "That the test clients build"; summary; exit 1; }
export HOME=$XL_TMP/home
mkdir -p "$HOME"

# A one-page PDF with text in the base-14 fonts, lines and filled shapes.
python3 - "$XL_TMP/doc.pdf" <<'PY'
import sys
content = b"""BT /F1 24 Tf 72 720 Td (tincan: a PDF through a slow link) Tj ET
BT /F2 12 Tf 72 690 Td 14 TL (The quick brown fox jumps over the lazy dog.) Tj T* (0123456789 !?;:,.) Tj ET
1 0 0 rg 72 500 200 120 re f 0 0 1 RG 4 w 320 500 m 520 620 l S
0 0.6 0 rg 420 300 m 520 300 l 470 400 l f
"""
objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"endstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >>"]
out = bytearray(b"%PDF-1.4\n")
offs = []
for i, o in enumerate(objs, 1):
    offs.append(len(out))
    out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
x = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
for o in offs:
    out += b"%010d 00000 n \n" % o
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, x)
open(sys.argv[1], "wb").write(out)
PY
head -n 60 /usr/share/common-licenses/GPL-3 >"$XL_TMP/gpl.txt"

# Each program P: app_P TARGET SCREEN starts it as a client of TARGET and returns once its
# window is on SCREEN; APP_PID is its pid.
app_emacs() {
    xl_bg "$1" emacs -Q --no-site-file -geometry 80x30+10+10 --eval '(blink-cursor-mode 0)' "$XL_TMP/gpl.txt"
    APP_PID=$XL_LAST; xl_wait_alive "$2" 60 xl_has_window "$2" 'GNU Emacs'
}
app_mupdf() {
    xl_bg "$1" mupdf -r 72 "$XL_TMP/doc.pdf"; APP_PID=$XL_LAST
    xl_wait_alive "$2" 60 xl_has_window "$2" 'doc.pdf'
}
app_xpdf() {
    xl_bg "$1" xpdf -geometry 700x760+0+0 "$XL_TMP/doc.pdf"; APP_PID=$XL_LAST
    xl_wait_alive "$2" 60 xl_has_window "$2" '^Xpdf: '
}

# feh (imlib2) leaves its buffers' bytes in the unused fourth byte of depth-24 pixels, which
# the server keeps and xwd reads back; they differ between two direct runs, so its screens
# are compared but for them (xdraw's image of such bytes, in core_screens, is compared whole).
FEH_PHOTO=/usr/share/images/fluxbox/debian-squared.jpg # fluxbox's, installed for core_wm
app_feh() {
    xl_bg "$1" feh -g 640x480+0+0 --scale-down --zoom max -N "$FEH_PHOTO"
    APP_PID=$XL_LAST; xl_wait_alive "$2" 60 xl_has_window "$2" '^feh'
}

declare -A SAME=([feh]=xl_same_colours)
run_app() { # NAME COMMAND-NAME PACKAGE
    local app=$1 t0=$SECONDS ref=$XL_TMP/$1.direct.xwd out=$XL_TMP/$1.tincan.xwd
    if ! command -v "$2" >/dev/null; then echo "NOTE: $app is not run: install $3."; return; fi
    xl_start_xvfb a && xl_start_xvfb b && xl_start_pair p b || { fail "That the Xvfbs and a pair start for $app"; return; }
    xl_on p timeout 20 xdpyinfo >/dev/null 2>&1 # the first client waits for the display side's facts
    xl_start_probe b
    xl_on a xdotool mousemove 1000 750; xl_on b xdotool mousemove 1000 750
    if ! "app_$app" a a; then fail "That $app runs directly"
    elif ! xl_dump_stable a "$ref" 30; then fail "That $app settles directly"
    elif ! "app_$app" p b; then fail "That $app runs through tincan"
    elif XL_SAME=${SAME[$app]:-} xl_wait_alive b 30 xl_dump_until_same b "$ref" "$out" 1; then
        pass "That $app through tincan looks byte for byte as it does directly${SAME[$app]:+ (but for the unused fourth bytes)}"
    else
        fail "That $app through tincan looks byte for byte as it does directly${SAME[$app]:+ (but for the unused fourth bytes)}"
        xl_describe_diff "$ref" "$out"
        mkdir -p /tmp/tincan-core-failures && cp "$ref" "$out" /tmp/tincan-core-failures/
    fi
    if xl_probe_ok b; then pass "That the real X server answered every probe within 1 s with $app through tincan"
    else fail "That the real X server answered every probe within 1 s with $app through tincan: $XL_PROBE_WHY"; fi
    end_round "$app"
    echo "    ($app: $((SECONDS - t0)) s)"
}

# end_round NAME: ends what the round started (newest first), stops the pair, checks it.
end_round() {
    local i pp round=()
    for ((i = ${#XL_PIDS[@]} - 1; i >= 0; i--)); do
        pp=${XL_PIDS[i]}
        case "$pp" in "$p_app_pid"|"$p_disp_pid"|"$a_pid"|"$b_pid") continue ;; esac
        round+=("$pp"); kill "$pp" 2>/dev/null
    done
    for pp in "${round[@]}"; do xl_wait_exit "$pp" 3 || kill -KILL "$pp" 2>/dev/null; done
    xl_stop_pair p
    if [ "$p_app_rc" = 0 ] && [ "$p_disp_rc" = 0 ] && xl_sanitizer_clean "$p_app_log" "$p_disp_log"; then
        pass "That both halves end cleanly after $1, with no sanitizer report"
    else
        fail "That both halves end cleanly after $1, with no sanitizer report (app $p_app_rc, display $p_disp_rc)"
        tail -n 20 "$p_app_log" "$p_disp_log" | sed 's/^/    /'
    fi
    kill "$a_pid" "$b_pid"; xl_wait_exit "$a_pid" 5; xl_wait_exit "$b_pid" 5
    XL_PIDS=()
}

# Firefox: behaviour only. Its window (found by class: the title is UTF-8), the page's title
# in it, its class, size and map state, and its exit status after SIGTERM, the same both ways.
export MOZ_DISABLE_CONTENT_SANDBOX=1 MOZ_DISABLE_GMP_SANDBOX=1 MOZ_DISABLE_RDD_SANDBOX=1 \
    MOZ_DISABLE_SOCKET_PROCESS_SANDBOX=1 MOZ_DISABLE_UTILITY_SANDBOX=1 MOZ_CRASHREPORTER_DISABLE=1
printf '<html><head><title>tincan page</title></head><body><h1>tincan</h1><p>A page.</p></body></html>\n' >"$XL_TMP/page.html"
ff_window() { xl_on "$1" timeout 10 xdotool search --onlyvisible --classname '^Navigator$' 2>/dev/null | head -1; }
ff_titled() { local w; w=$(ff_window "$1"); [ -n "$w" ] && xl_on "$1" timeout 10 xprop -id "$w" _NET_WM_NAME | grep -q 'tincan page'; }
ff_describe() { # SCREEN: what must be the same both ways
    local w; w=$(ff_window "$1")
    xl_on "$1" timeout 10 xprop -id "$w" WM_CLASS WM_WINDOW_ROLE _NET_WM_WINDOW_TYPE | sed 's/0x[0-9a-f]*/ID/g'
    xl_on "$1" timeout 10 xwininfo -id "$w" | grep -E '^  (Width|Height|Depth|Map State|Class):'
    xl_on "$1" timeout 10 xprop -id "$w" _NET_WM_NAME | grep -o 'tincan page'
}
ff_run() { # TARGET SCREEN NAME
    rm -rf "$HOME/prof.$3"; mkdir -p "$HOME/prof.$3"
    xl_bg "$1" firefox-esr --no-remote --profile "$HOME/prof.$3" -width 800 -height 600 "file://$XL_TMP/page.html" \
        2>"$XL_TMP/firefox.$3.err"
    local f=$XL_LAST
    xl_wait_alive "$2" 60 ff_titled "$2" || return 1
    ff_describe "$2" >"$XL_TMP/firefox.$3.out"
    kill -TERM "$f"; FF_RC=timeout
    xl_wait_exit "$f" 20 && FF_RC=$(xl_exit_status "$f")
    echo "exit status $FF_RC" >>"$XL_TMP/firefox.$3.out"
}
run_firefox() {
    local t0=$SECONDS
    if ! command -v firefox-esr >/dev/null; then echo "NOTE: firefox is not run: install firefox-esr."; return; fi
    xl_start_xvfb a && xl_start_xvfb b && xl_start_pair p b || { fail "That the Xvfbs and a pair start for firefox"; return; }
    xl_on p timeout 20 xdpyinfo >/dev/null 2>&1
    xl_start_probe b
    if ! ff_run a a direct; then fail "That firefox-esr shows a local page directly"
    elif ! ff_run p b tincan; then fail "That firefox-esr shows a local page through tincan"
    elif diff -u "$XL_TMP/firefox.direct.out" "$XL_TMP/firefox.tincan.out" >"$XL_TMP/firefox.diff"; then
        pass "That firefox-esr's window, title, class, size and exit status are the same through tincan"
    else
        fail "That firefox-esr's window, title, class, size and exit status are the same through tincan"
        sed 's/^/    /' "$XL_TMP/firefox.diff" | head -20
    fi
    if xl_probe_ok b; then pass "That the real X server answered every probe within 1 s with firefox through tincan"
    else fail "That the real X server answered every probe within 1 s with firefox through tincan: $XL_PROBE_WHY"; fi
    end_round firefox
    echo "    (firefox: $((SECONDS - t0)) s)"
}

run_app emacs emacs emacs-lucid
run_app mupdf mupdf mupdf
run_app xpdf xpdf xpdf
if [ -f "$FEH_PHOTO" ]; then run_app feh feh feh; else echo "NOTE: feh is not run: install fluxbox."; fi
run_firefox
summary
