#!/usr/bin/env bash
# pkg_install.sh -- `make install` and `make uninstall` with the GNU conventions: exactly the
# listed files, in the right modes, under PREFIX or the given directories, inside DESTDIR;
# the installed programs run; uninstall leaves nothing behind.
source "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(dirname "${TINCAN_PLAIN:-$ROOT/build/tincan}")
# The build directory as the tree's own make names it (relative): given absolute, make would
# write its objects' dependency files under other target names, and a later `make` would
# no longer rebuild them when a header changes.
BUILD=$(realpath --relative-to="$ROOT" "$BUILD")
TMP=$(mktemp -d /tmp/tincan-install.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mk() { make -s -C "$ROOT" BUILD="$BUILD" "$@" >"$TMP/make.out" 2>&1; }
files() { (cd "$1" && find . ! -type d | sed 's|^\./|/|' | sort); }

expected='/usr/bin/tincan
/usr/bin/tincan-link
/usr/share/bash-completion/completions/tincan
/usr/share/bash-completion/completions/tincan-link
/usr/share/man/man1/tincan-link.1
/usr/share/man/man1/tincan.1'
check "That make install DESTDIR=D PREFIX=/usr succeeds" mk install DESTDIR="$TMP/d" PREFIX=/usr
check "That it installs exactly the programs, the two man pages and the bash completion" \
    test "$(files "$TMP/d")" = "$expected"
check "That the programs are mode 0755 and the rest 0644" bash -c "
    [ \"\$(stat -c %a '$TMP/d/usr/bin/tincan' '$TMP/d/usr/bin/tincan-link' | sort -u)\" = 755 ] &&
    [ \"\$(find '$TMP/d/usr/share' -type f -printf '%m\n' | sort -u)\" = 644 ]"
check "That the installed tincan runs and prints its protocol version" \
    bash -c "'$TMP/d/usr/bin/tincan' version --porcelain | grep -qx 'protocol [0-9]*'"
check "That the installed tincan-link runs" bash -c "'$TMP/d/usr/bin/tincan-link' --list-profiles | grep -q '^radio256'"
check "That make print-installed lists what install wrote" \
    test "$(make -s -C "$ROOT" print-installed PREFIX=/usr | sort)" = "$expected"
check "That make uninstall DESTDIR=D PREFIX=/usr succeeds" mk uninstall DESTDIR="$TMP/d" PREFIX=/usr
check "That it removes every file install wrote" test -z "$(files "$TMP/d")"

# The default prefix, and directories given one by one.
check "That the default PREFIX is /usr/local" bash -c "make -s -C '$ROOT' print-installed | grep -qx /usr/local/bin/tincan"
check "That BINDIR, MANDIR and BASHCOMPDIR are obeyed" \
    mk install DESTDIR="$TMP/e" BINDIR=/opt/tc/b MANDIR=/opt/tc/m BASHCOMPDIR=/opt/tc/c
check "That the files land in them, and only there" test "$(files "$TMP/e")" = '/opt/tc/b/tincan
/opt/tc/b/tincan-link
/opt/tc/c/tincan
/opt/tc/c/tincan-link
/opt/tc/m/man1/tincan-link.1
/opt/tc/m/man1/tincan.1'
mk uninstall DESTDIR="$TMP/e" BINDIR=/opt/tc/b MANDIR=/opt/tc/m BASHCOMPDIR=/opt/tc/c
check "That uninstall with the same directories removes them all" test -z "$(files "$TMP/e")"
summary
