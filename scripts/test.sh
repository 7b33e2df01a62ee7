#!/usr/bin/env bash
# Runs every test gshare has that needs no GPU: builds (installing build dependencies on
# Debian 12 when missing), then ctest: unit tests (doctest) and end-to-end tests of the
# daemon, the CLI and the shim against the fake libcuda of test/fake_cuda; beside ctest, niced:
# the libFuzzer targets of test/fuzz, GSHARE_FUZZ_SECONDS (3) each, clang's thread-safety
# analysis of the shim (scripts/check_thread_safety.sh), the sources' format
# (scripts/check_format.sh) and that every mutant of scripts/mutants.py still finds its text.
# Exit status 0 when all of them passed, nonzero otherwise.
# The build is build-ci/, with AddressSanitizer and UBSan in the daemon, the CLI and the unit
# tests (GSHARE_SANITIZE): a sanitizer error fails the test it happens in. build/ (scripts/
# setup.sh) stays a plain build. The fuzz targets are built with clang in build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
step() { echo "gshare: $1: $((SECONDS - started)) s" >&2; started=$SECONDS; }
started=$SECONDS
gshare_apt_install "${gshare_build_packages[@]}" "${gshare_fuzz_packages[@]}" \
  "${gshare_lint_packages[@]}" "${gshare_test_packages[@]}"
gshare_build build-ci RelWithDebInfo -DGSHARE_SANITIZE=ON -DGSHARE_UNITY=ON
step "build (sanitized)"
# halt_on_error: the first error ends the process with status 1, as does UBSan's (built with
# -fno-sanitize-recover). verify_asan_link_order=0: a gshare started by a job inherits the
# job's LD_PRELOAD of the shim, which then comes before ASan's runtime (the shim's constructor
# takes no heap). handle_sigill=1: UBSan traps (CMakeLists.txt), and ASan reports the trap with
# its stack.
export ASAN_OPTIONS=halt_on_error=1:verify_asan_link_order=0:detect_leaks=1:handle_sigill=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Every dependency is installed above: an e2e test that skips fails the run unless
# test/e2e/expected_skips.txt names it (test/e2e/run_part.py).
export GSHARE_FAIL_ON_SKIP=1
status=0
# The checks that need no sanitized build run beside ctest, niced so that the tests keep the CPU
# they ask for: most end-to-end tests wait on their jobs, so the CPU has room. Their output is
# printed once ctest has ended.
side_log=build-ci/side-checks.log
(
  side=0
  GSHARE_FUZZ_SECONDS=${GSHARE_FUZZ_SECONDS:-3} bash test/fuzz/run.sh build-fuzz || side=1
  echo "gshare: fuzzing done at $((SECONDS - started)) s"
  bash scripts/check_thread_safety.sh || side=1
  bash scripts/check_format.sh || side=1
  python3 scripts/mutants.py --check || side=1
  echo "gshare: thread safety, format and the mutants' texts done at $((SECONDS - started)) s"
  exit $side
) >"$side_log" 2>&1 &
side_pid=$!
renice -n 10 -p "$side_pid" >/dev/null 2>&1 || true
# Three tests at a time: most end-to-end tests wait on their jobs, not on the CPU (the two cores
# are ~80 % busy, each test as long as at two). The tests that judge the fake GPU's timing run
# alone (E2E_TIMING, test/e2e/CMakeLists.txt).
(cd build-ci && ctest -j3 --output-on-failure --timeout 600) || status=$?
step "ctest"
wait "$side_pid" || status=$?
cat "$side_log"
step "fuzzing, thread safety, format and the mutants' texts (beside ctest)"
exit $status
