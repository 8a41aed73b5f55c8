#!/usr/bin/env bash
# run.sh -- runs every test program and adds up their PASS/FAIL lines.
# Usage: tests/run.sh SAN_BUILD_DIR [PLAIN_BUILD_DIR]
# Unit tests and corpus replays come from the sanitized build; integration tests
# drive the sanitized binaries too. A program that dies without its summary counts as a failure.
set -u
san=${1:?usage: run.sh SAN_BUILD_DIR [PLAIN_BUILD_DIR]}
plain=${2:-$san}
here=$(cd "$(dirname "$0")" && pwd)
export TINCAN=${TINCAN:-$(cd "$san" && pwd)/tincan}
export TINCAN_LINK=${TINCAN_LINK:-$(cd "$san" && pwd)/tincan-link}
export TINCAN_PLAIN=$(cd "$plain" && pwd)/tincan
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
passed=0; failed=0
logdir=$(mktemp -d /tmp/tincan-tests.XXXXXX)

run_one() { # name, command...
    local name=$1; shift
    local log="$logdir/$(echo "$name" | tr '/ ' '__').log"
    local t0=$SECONDS
    "$@" >"$log" 2>&1
    local rc=$?
    local p f
    p=$(grep -c '^PASS: ' "$log"); f=$(grep -c '^FAIL: ' "$log")
    grep -E '^(PASS|FAIL): ' "$log" | sed "s|^|[$name] |"
    if ! grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$log" || { [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; }; then
        echo "FAIL: [$name] exited $rc without a clean summary; its output:"; tail -n 30 "$log" | sed 's/^/    /'
        f=$((f+1))
    elif [ "$f" -gt 0 ]; then
        echo "  --- output of $name (failures above) ---"; grep -vE '^(PASS): ' "$log" | tail -n 60 | sed 's/^/    /'
    fi
    echo "  ($name: $((SECONDS-t0)) s)"
    passed=$((passed+p)); failed=$((failed+f))
}

for t in "$san"/tests/test_*; do
    [ -x "$t" ] && run_one "unit/$(basename "$t")" "$t"
done
for r in "$san"/replay/fuzz_*; do
    [ -x "$r" ] || continue
    n=$(basename "$r"); n=${n#fuzz_}
    run_one "replay/$n" "$r" "$here/fuzz/corpus/$n"
done
for s in "$here"/integration/*.sh; do
    [ -f "$s" ] && run_one "integration/$(basename "$s" .sh)" bash "$s"
done
rm -rf "$logdir"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
