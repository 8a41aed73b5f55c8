# lib.sh -- helpers for integration tests (sourced): PASS/FAIL lines like the C harness.
T_PASSED=0; T_FAILED=0
pass() { T_PASSED=$((T_PASSED+1)); echo "PASS: $*"; }
fail() { T_FAILED=$((T_FAILED+1)); echo "FAIL: $*"; }
# check "sentence" command...: runs command, PASS if it exits 0.
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }
summary() { echo "$T_PASSED passed, $T_FAILED failed"; [ "$T_FAILED" -eq 0 ]; }
