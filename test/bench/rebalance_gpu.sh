#!/usr/bin/env bash
# The scheduler moves a waiting checkpointed job to the GPU another job freed ([scheduler]
# rebalance, docs/design.md "Moving a job"), on a machine of two GPUs of one kind.
#
#   OUT=DIR bash test/bench/rebalance_gpu.sh GSHARE_DIR     (GSHARE_DIR: gshare, libgshare.so)
#
# A and B: test/bench/mem_train.py --gib $GIB (seeds 11 and 12), first bare, one at a time on
# GPU 0 (--target-seconds $TARGET; their step counts are then fixed for the gshare run). Under
# a fresh daemon ([memory] engine checkpoint, gpu_limit $LIMIT so that A and B do not fit
# together on one GPU whatever its size, quantum $QUANTUM): C (mem_train.py --gib 4, about
# $C_SECONDS s) is submitted to GPU 1, then A and B with `--gpus 2 --memory checkpoint` (each
# sees both GPUs and works on its first, GPU 0): they take turns on GPU 0 by checkpoints until
# C ends, then the daemon moves the one that waits to GPU 1. `status --json` once a second.
# Prints: the daemon's move lines, each job's end, the losses against bare (identical|DIFFER),
# makespan against A and B's bare sum, and which GPU each of A's and B's processes was last
# seen on (nvidia-smi). Files in $OUT: bare_*.out, gshare_*.out, status.jsonl, daemon.log.
# Exit 0 when both losses are identical and a move was logged.
set -uo pipefail
gdir=$(cd "${1:?usage: rebalance_gpu.sh GSHARE_DIR}" && pwd)
gshare=$gdir/gshare
bench=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench_jobs.sh
source "$bench/bench_jobs.sh"
out=${OUT:?set OUT}
python=${PYTHON:-python3}
gib=${GIB:-24} target=${TARGET:-25} limit=${LIMIT:-40GiB} quantum=${QUANTUM:-15s}
c_seconds=${C_SECONDS:-40}
mkdir -p "$out"
work=$(mktemp -d /tmp/gshare-rebalance.XXXXXX)
say() { echo "rebalance: $*" | tee -a "$out/summary.txt"; }
cfg=$work/config.toml
cat >"$cfg" <<EOF
[daemon]
socket = "$work/gshare.sock"
state_dir = "$work/state"
[scheduler]
quantum = "$quantum"
rebalance = true
[queue]
max_running = 4
[memory]
engine = "checkpoint"
gpu_limit = "$limit"
EOF
g() { timeout 60 "$gshare" --config "$cfg" "$@"; }
cleanup() { g daemon stop >/dev/null 2>&1; cp "$work/state/daemon.log" "$out/" 2>/dev/null; }
trap cleanup EXIT
export NCCL_NVLS_ENABLE=0

declare -A steps
for k in a b; do
  seed=$([[ $k == a ]] && echo 11 || echo 12)
  t0=$(date +%s.%N)
  CUDA_VISIBLE_DEVICES=0 timeout 300 "$python" "$bench/mem_train.py" --gib "$gib" \
    --target-seconds "$target" --log-every 1 --seed "$seed" >"$out/bare_$k.out" 2>&1
  t1=$(date +%s.%N)
  steps[$k]=$(sed -n 's/^done steps=\([0-9]*\).*/\1/p' "$out/bare_$k.out")
  say "bare $k: ${steps[$k]} steps, $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"
  echo "$t0 $t1" >"$out/bare_$k.times"
done
serial=$(cat "$out"/bare_a.times "$out"/bare_b.times | awk '{s += $2 - $1} END {printf "%.1f", s}')

g daemon start >/dev/null || { say "daemon did not start"; exit 1; }
t0=$(date +%s.%N)
c=$(g submit --gpu 1 -J c -o "$out/gshare_c.out" -- "$python" "$bench/mem_train.py" --gib 4 \
  --target-seconds "$c_seconds" --log-every 10 --seed 13)
sleep 5
ids="$c"
for k in a b; do
  seed=$([[ $k == a ]] && echo 11 || echo 12)
  id=$(g submit --gpus 2 --memory checkpoint --kill-after 5s -J "$k" -o "$out/gshare_$k.out" \
    -- "$python" "$bench/mem_train.py" --gib "$gib" --steps "${steps[$k]}" --log-every 1 \
    --seed "$seed")
  ids="$ids $id"
  sleep 2
done
say "submitted c=$c and a, b: $ids"
: >"$out/apps.txt"
each_poll() {
  nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv,noheader 2>/dev/null |
    sed "s/^/$(date +%s) /" >>"$out/apps.txt"
}
poll_jobs "$ids" "$out/status.jsonl" 400
t1=$(date +%s.%N)
cp "$work/state/daemon.log" "$out/" 2>/dev/null
grep -h "rebalance" "$out/daemon.log" | tee -a "$out/summary.txt"
ok=1
for k in a b; do
  v=$(losses_verdict "$out/bare_$k.out" "$out/gshare_$k.out")
  [[ $v == identical ]] || ok=0
  say "$k: losses $v; $(grep '^done' "$out/gshare_$k.out")"
done
say "makespan (c, a, b under gshare) $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s; a+b bare one at a time $serial s"
grep -q "moved from GPU" "$out/daemon.log" || ok=0
[[ $ok == 1 ]]
