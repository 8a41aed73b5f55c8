#!/bin/sh
# record.sh -- records real programs drawing large images (PDF viewers, a browser, an editor,
# GTK 3) through bench/xcodec/capture.py into build/images/captures/NAME.cap, for extract.py.
# bench/images/record.sh [NAME...] records only those. Uses its own Xvfb :63 (no GLX, no MIT-SHM: programs then draw by PutImage) and relay :64.
set -eu
ONLY="$*"
cd "$(dirname "$0")/../.."
REAL=${IMG_REAL:-63}
RELAY=${IMG_RELAY:-64}
OUT=build/images/captures
DOCS=build/images/docs
mkdir -p "$OUT" "$DOCS"
Xvfb :$REAL -screen 0 1024x768x24 -nolisten tcp -noreset -extension GLX -extension MIT-SHM >/dev/null 2>&1 &
XPID=$!
trap 'kill $XPID 2>/dev/null' EXIT
sleep 1

# Varied documents from Debian packages' docs: a manual with figures (valgrind), a short
# manual (bzip2), a paper with formulas (crc-doc), a specification (shared-mime-info).
for f in /usr/share/doc/valgrind/valgrind_manual.pdf.gz /usr/share/doc/bzip2/manual.pdf.gz \
         /usr/share/doc/zlib1g-dev/crc-doc.1.0.pdf.gz; do
    [ -f "$f" ] && gzip -dc "$f" > "$DOCS/$(basename "$f" .gz)"
done
[ -f /usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf ] &&
    cp /usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf "$DOCS/"
# A local web page with text, photographs and a form (bench/images/page.html, its images
# copied beside it from Debian packages).
cp bench/images/page.html "$DOCS/page.html"
for j in /usr/share/images/fluxbox/debian-squared.jpg /usr/share/icewm/themes/NanoBlue/eos.jpg; do
    [ -f "$j" ] && cp "$j" "$DOCS/"
done

run() { # name, command...  (only the names given as arguments, when any)
    name=$1; shift
    if [ -n "$ONLY" ] && ! echo " $ONLY " | grep -q " $name "; then return; fi
    python3 bench/xcodec/capture.py $RELAY $REAL "$OUT/$name.cap" > "$OUT/$name.log" 2>&1 &
    CP=$!
    sleep 0.5
    DISPLAY=:$RELAY; export DISPLAY
    "$@" >/dev/null 2>&1 || true
    unset DISPLAY
    sleep 0.5
    kill $CP; wait $CP 2>/dev/null || true
    echo "$name: $(stat -c %s "$OUT/$name.cap") bytes"
}
# A program: start, wait, page down N times (keys sent on the real display), then end it.
pager() { # seconds-to-start pages command...
    t=$1; n=$2; shift 2
    "$@" & p=$!
    sleep "$t"
    i=0
    while [ $i -lt "$n" ]; do
        # No window manager: the keyboard goes to the window under the pointer.
        DISPLAY=:$REAL xdotool mousemove 300 300 key Next >/dev/null 2>&1 || true
        sleep 1
        i=$((i + 1))
    done
    kill $p; wait $p 2>/dev/null || true
}
for d in "$DOCS"/*.pdf; do
    b=$(basename "$d" .pdf)
    run "mupdf-$b" pager 3 3 mupdf -r 96 "$d"
done
run xpdf-valgrind pager 3 3 xpdf -geometry 800x700+0+0 "$DOCS/valgrind_manual.pdf"
run xpdf-crc pager 3 2 xpdf -geometry 800x700+0+0 "$DOCS/crc-doc.1.0.pdf"
FFP=$(mktemp -d)
run firefox pager 15 3 env -u MOZ_HEADLESS firefox-esr --no-remote --profile "$FFP" "file://$PWD/$DOCS/page.html"
rm -rf "$FFP"
# The same browser on a page of text alone (bench/compare's firefox-text): its strips are of
# few colours, where a palette competes with WebP.
cp bench/compare/article.html "$DOCS/article.html"
FFP=$(mktemp -d)
run firefox-text pager 15 3 env -u MOZ_HEADLESS firefox-esr --no-remote --profile "$FFP" "file://$PWD/$DOCS/article.html"
rm -rf "$FFP"
run emacs pager 3 3 emacs -Q --eval '(blink-cursor-mode 0)' /usr/share/common-licenses/GPL-3
run gtk3 pager 4 0 env NO_AT_BRIDGE=1 GTK_A11Y=none GDK_BACKEND=x11 gtk3-widget-factory
# An image viewer (bench/compare's feh) on photographs and artwork, the next at each space:
# photographs are where a lossless code finds least.
viewer() { # command...
    "$@" & p=$!
    sleep 3
    for i in 1 2 3 4 5; do
        DISPLAY=:$REAL xdotool mousemove 300 300 key space >/dev/null 2>&1 || true
        sleep 1.5
    done
    kill $p; wait $p 2>/dev/null || true
}
FEH_IMAGES=
for f in /usr/share/images/fluxbox/debian-squared.jpg /usr/share/icewm/themes/NanoBlue/eos.jpg \
         /usr/share/backgrounds/gnome/wood-l.webp /usr/share/images/fluxbox/debian-dark.png \
         /usr/share/backgrounds/gnome/licorice-d.webp /usr/share/backgrounds/gnome/truchet-l.webp; do
    [ -f "$f" ] && FEH_IMAGES="$FEH_IMAGES $f"
done
if [ -n "$FEH_IMAGES" ]; then
    run feh viewer feh -g 800x600+0+0 --scale-down --zoom max -N $FEH_IMAGES
fi
