#!/usr/bin/env bash
# src_layout.sh -- the shape of the source tree that lets a newcomer change it (issue 12):
# the observer and the features that use its connection, and the channels, call one another
# only through their listeners and callbacks (no circle of calls among them:
# tools/proxy_calls.py); no hand-written C file is much over 800 lines.
source "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FEATURES=observer,learnt,fontset,statewatch,spare,channel,expose,ownwin,predict,hint,notice

check "That src/proxy's features and channels call one another in no circle ($FEATURES)" \
    python3 "$ROOT/tools/proxy_calls.py" "$ROOT/src/proxy" --acyclic "$FEATURES"

# Hand-written: every .c and .h under src/, emu/, tests/ and bench/ but the generated (they
# say so in their first lines).
too_long() {
    local f n
    for f in "$ROOT"/src/*/*.[ch] "$ROOT"/emu/*.[ch] "$ROOT"/tests/*/*.[ch] "$ROOT"/bench/*/*.[ch]; do
        head -3 "$f" | grep -qi 'generated' && continue
        n=$(wc -l <"$f")
        [ "$n" -gt 850 ] && echo "${f#$ROOT/} ($n)"
    done
}
long=$(too_long | tr '\n' ' ')
check "That no hand-written C file is over 850 lines${long:+ (over: $long)}" test -z "$long"
summary
