#!/usr/bin/env bash
# pkg_docs.sh -- the man pages and the bash completion: tincan(1) and tincan-link(1) render
# with `man -l` without warnings, and each command's section lists every option that the
# command's --help lists; the completion offers the commands, the options and their values.
source "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TINCAN=${TINCAN:-$ROOT/build/san/tincan}
TINCAN_LINK=${TINCAN_LINK:-$(dirname "$TINCAN")/tincan-link}
TMP=$(mktemp -d /tmp/tincan-docs.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export LANG=C LC_ALL=C MANWIDTH=200

# render PAGE OUT: the page as man shows it, overstrikes removed; 1 if man or groff warned.
render() {
    man -l "$1" 2>"$2.err" | sed 's/.\x08//g' >"$2" && [ -s "$2" ] && [ ! -s "$2.err" ]
}
check "That tincan(1) renders with man -l, without warnings" render "$ROOT/man/tincan.1" "$TMP/tincan.txt"
check "That tincan-link(1) renders with man -l, without warnings" render "$ROOT/man/tincan-link.1" "$TMP/link.txt"

# options FILE: every long option a --help text names (but --help: each command takes it,
# and the page says so once).
options() { grep -oE -- '--[a-z][a-z0-9-]*' "$1" | grep -vx -- --help | sort -u; }
# section NAME: the rendered text of the subsection "tincan NAME ..." of tincan(1).
section() {
    awk -v h="   tincan $1" 'index($0, h) == 1 && (length($0) == length(h) || substr($0, length(h) + 1, 1) == " ") { on = 1; next }
        on && (/^   [^ ]/ || /^[A-Z]/) { on = 0 } on' "$TMP/tincan.txt"
}
# missing TEXT_FILE HELP_FILE: the options of HELP_FILE that TEXT_FILE does not name.
missing() {
    local o
    for o in $(options "$2"); do grep -qF -- "$o" "$1" || echo "$o"; done
}

for cmd in ssh run app display info version; do
    "$TINCAN" "$cmd" --help >"$TMP/$cmd.help" 2>&1
    section "$cmd" >"$TMP/$cmd.man"
    # app and display share the link options' subsection.
    case $cmd in app|display) awk '/^   Link options/ { on = 1; next } on && (/^   [^ ]/ || /^[A-Z]/) { on = 0 } on' "$TMP/tincan.txt" >>"$TMP/$cmd.man" ;; esac
    m=$(missing "$TMP/$cmd.man" "$TMP/$cmd.help" | tr '\n' ' ')
    check "That tincan(1)'s section on tincan $cmd names all $(options "$TMP/$cmd.help" | wc -l) options of its --help${m:+ (missing: $m)}" \
        test -n "$(options "$TMP/$cmd.help")" -a -s "$TMP/$cmd.man" -a -z "$m"
done
"$TINCAN" --help >"$TMP/top.help"
m=$(for c in $(sed -n 's/^  tincan \([a-z]*\).*/\1/p' "$TMP/top.help"); do
        grep -q "^   tincan $c" "$TMP/tincan.txt" || echo "$c"; done | tr '\n' ' ')
check "That tincan(1) has a section for every command tincan --help lists${m:+ (missing: $m)}" test -z "$m"
check "That tincan(1) says every command takes --help" grep -q -- 'Every command takes -h or --help' "$TMP/tincan.txt"
check "That tincan(1) documents tincan ssh's exit status 125" \
    bash -c "awk '/^EXIT STATUS/ { on = 1 } on' '$TMP/tincan.txt' | grep -q 125"
"$TINCAN_LINK" --help >"$TMP/link.help" 2>&1
m=$(missing "$TMP/link.txt" "$TMP/link.help" | tr '\n' ' ')
check "That tincan-link(1) names all $(options "$TMP/link.help" | wc -l) options of its --help${m:+ (missing: $m)}" \
    test -z "$m"
check "That both pages carry the release tincan version prints" bash -c "
    v=\$('$TINCAN' version --porcelain | sed -n 's/^version //p')
    grep -q \"^.TH TINCAN 1 .* \\\"tincan \$v\\\"\" '$ROOT/man/tincan.1' && grep -q \"^.TH TINCAN-LINK 1 .* \\\"tincan \$v\\\"\" '$ROOT/man/tincan-link.1'"

# Bash completion: sourced in a fresh bash with the built programs first in PATH.
mkdir -p "$TMP/bin"; ln -s "$TINCAN" "$TMP/bin/tincan"; ln -s "$TINCAN_LINK" "$TMP/bin/tincan-link"
# complete WORD...: what the completion offers for the last word of the command line.
complete_words() {
    PATH=$TMP/bin:$PATH bash -c 'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        case $1 in tincan) _tincan ;; tincan-link) _tincan_link ;; esac; printf "%s\n" "${COMPREPLY[@]}"' \
        "$ROOT/completion/tincan.bash" "$@" 2>&1 | sort | tr '\n' ' ' | sed 's/ $//'
}
check "That bash completion offers the commands" \
    test "$(complete_words tincan '')" = "--help app attach display help info run secret ssh version"
check "That it offers a command's options, as its --help lists them" \
    test "$(complete_words tincan ssh --r)" = "--remote-tincan"
check "That it offers every option of tincan app --help" \
    test "$(complete_words tincan app -- | wc -w)" = "$(grep -cE '^ +--' "$TMP/app.help")"
check "That it offers the link speeds after --link-speed" \
    test "$(complete_words tincan display --link-speed '')" = "adsl auto isdn lan modem"
check "That it offers the emulator's profiles after --profile" \
    test "$(complete_words tincan run --profile serial)" = "serial38400 serial9600"
check "That it offers commands after --" bash -c "[[ ' $(complete_words tincan run -- xlog) ' == *' xlogo '* ]]"
check "That it offers tincan-link's options in one direction and both" \
    test "$(complete_words tincan-link stream --delay)" = "--delay --delay-down --delay-up"
summary
