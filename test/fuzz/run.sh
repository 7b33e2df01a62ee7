#!/usr/bin/env bash
# Builds the libFuzzer targets of test/fuzz with clang (into BUILD_DIR, default build-fuzz)
# and runs each for GSHARE_FUZZ_SECONDS (default 20) from its seed corpus, with its dictionary
# (test/fuzz/<name>.dict) when it has one; the inputs of test/fuzz/regressions/<name>/ run first. Exits nonzero when
# a target finds a crash, a leak, a sanitizer error or an input that takes over 10 s; the
# input is left in BUILD_DIR/artifacts/ and the target's output is printed.
# Reproduce: BUILD_DIR/test/fuzz/fuzz_<name> BUILD_DIR/artifacts/<name>-crash-<sha1>
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-fuzz}
seconds=${GSHARE_FUZZ_SECONDS:-20}
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGSHARE_FUZZ=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
rm -rf "$build/artifacts" "$build/found"
mkdir -p "$build/artifacts"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1
failed=()
for corpus in test/fuzz/corpus/*/; do
  name=$(basename "$corpus")
  # New inputs go to a scratch directory: the checked-in seeds stay as they are.
  mkdir -p "$build/found/$name"
  log="$build/artifacts/$name.log"
  dict=()
  [ -f "test/fuzz/$name.dict" ] && dict=(-dict="test/fuzz/$name.dict")
  # Inputs that once failed (regressions/<name>/) run first, with the seeds.
  regressions=()
  [ -d "test/fuzz/regressions/$name" ] && regressions=("test/fuzz/regressions/$name")
  if "$build/test/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      "${dict[@]}" -artifact_prefix="$build/artifacts/$name-" "$build/found/$name" "$corpus" \
      "${regressions[@]}" \
      >"$log" 2>&1; then
    echo "fuzz_$name: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$') runs" \
         "in ${seconds}s, corpus $(ls "$corpus" | wc -l) seeds + $(ls "$build/found/$name" | wc -l) found, ok"
  else
    echo "fuzz_$name: FAILED" >&2
    # The report, without libFuzzer's progress lines.
    sed -n '/ERROR: \|runtime error: \|deadly signal\|ALARM: /,/Test unit written/p' "$log" | cut -c1-300 \
      | head -n 80 >&2
    failed+=("$name")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]} (inputs in $build/artifacts/)" >&2
  exit 1
fi
