#!/usr/bin/env bash
# Two JAX jobs with JAX's default preallocation (75 % of the GPU memory each sees) under gshare:
# how the memory engines deal with it. test/bench/jax_prealloc.py, bare once (reference
# checksum, pool size), then for each ENGINE in ENGINES: a fresh daemon, two jobs at once
# under `gshare run --memory ENGINE`, their pool sizes, checksums, exit codes, wall time, and
# the daemon's mode changes and handoffs.
#
#   test/bench/jax_prealloc.sh GSHARE_DIR      (GSHARE_DIR holds gshare and libgshare.so)
#
# One line per engine (summary.txt and stdout):
#   engine=<e> seconds=<wall of both> limits_gib=<A>,<B> checksums=same|DIFFER runs=ok|FAILED
#   mode=<modes the GPU went through> handoffs=<n>
# Env: OUT (default ./out; results in $OUT/jax_prealloc/), PYTHON (with jax), ENGINES (default
# "swap"), STEPS (default 300), RUN_TIMEOUT (default 200).
# Exit: 0 when every run succeeded with the bare checksum, 1 otherwise, 2 on usage errors.
set -uo pipefail

me=jax_prealloc
# shellcheck source=mem_common.sh source-path=SCRIPTDIR
source "$(dirname "$0")/mem_common.sh"
mem_setup "$@"

steps=${STEPS:-300}
tmo=${RUN_TIMEOUT:-200}
out="${OUT:-./out}/jax_prealloc"
mkdir -p "$out"
job=("$python" "$bench/jax_prealloc.py" --steps "$steps")
field() { grep -o "$1=[^ ]*" "$2" | head -1 | cut -d= -f2; }

say "bare run"
bounded "$tmo" "${job[@]}" >"$out/bare.out" 2>"$out/bare.err" || say "bare run failed"
ref=$(field checksum "$out/bare.out")
say "bare: $(cat "$out/bare.out")"
status=0
for engine in ${ENGINES:-swap}; do
  dir="$work/$engine"
  mkdir -p "$dir" "$out/$engine"
  ENGINE=$engine write_config "$dir/config.toml" "$dir" 20s
  daemon_up "$dir/config.toml" || { status=1; continue; }
  t0=$(now)
  : >"$dir/times.txt"
  for k in A B; do
    job_start "$k" "$out/$engine/$k.out" "$tmo" "$gshare" --config "$dir/config.toml" run \
      --memory "$engine" -J "$k" -- "${job[@]}"
  done
  jobs_wait run "$dir/times.txt"
  t1=$(now)
  cp "$dir/state/daemon.log" "$out/$engine/daemon.log" 2>/dev/null
  daemon_down
  runs=ok same=same limits=""
  for k in A B; do
    rc=$(awk -v k="run_${k}_end" '$1 == k {print $3}' "$dir/times.txt")
    [[ $rc == 0 ]] || runs="FAILED"
    [[ $(field checksum "$out/$engine/$k.out") == "$ref" && -n $ref ]] || same=DIFFER
    limits+="${limits:+,}$(field limit_gib "$out/$engine/$k.out")"
  done
  modes=$(grep -o ': [a-z]* mode' "$out/$engine/daemon.log" | awk '{print $2}' | paste -sd, -)
  handoffs=$(grep -c ' handoff ' "$out/$engine/daemon.log")
  line=$(printf 'engine=%s seconds=%.1f limits_gib=%s checksums=%s runs=%s mode=%s handoffs=%s' \
    "$engine" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$limits" "$same" "$runs" "${modes:--}" "$handoffs")
  echo "$line" | tee -a "$out/summary.txt"
  [[ $runs == ok && $same == same ]] || status=1
done
exit "$status"
