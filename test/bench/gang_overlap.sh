#!/usr/bin/env bash
# Gangs that want overlapping GPUs, on a machine of four GPUs: three 2-GPU DDP trainings
# (test/bench/ddp_train.py under torchrun, NCCL, NCCL_NVLS_ENABLE=0) named to GPUs 0,1 / 1,2 /
# 2,3 and a 1-GPU training (mem_train.py) on GPU 1, submitted at once under
# `[scheduler] sharing = "exclusive"` (one job per GPU at a time: a gang holds both its GPUs or
# neither). Every job must finish (no deadlock) with its bare losses.
#
#   OUT=DIR bash test/bench/gang_overlap.sh GSHARE_DIR     (GSHARE_DIR: gshare, libgshare.so)
#
# Bare first: each job alone on its GPUs, one at a time (losses; serial time). Then the four
# under gshare with `status --json` once a second (status.jsonl: the GPUs' holders, for the
# check that no GPU had two holders). Prints per job: losses identical|DIFFER and its end;
# the makespan against the serial sum. Env: STEPS (DDP steps, default 60), GIB (per rank,
# default 8), PYTHON, TORCHRUN. Files in $OUT: bare_*.out, gshare_*.out, status.jsonl,
# daemon.log, summary.txt. Exit 0 when every job ended with identical losses.
set -uo pipefail
gdir=$(cd "${1:?usage: gang_overlap.sh GSHARE_DIR}" && pwd)
gshare=$gdir/gshare
bench=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench_jobs.sh
source "$bench/bench_jobs.sh"
out=${OUT:?set OUT}
python=${PYTHON:-python3}
torchrun=${TORCHRUN:-$(dirname "$(command -v "$python")")/torchrun}
steps=${STEPS:-60} gib=${GIB:-8}
mkdir -p "$out"
work=$(mktemp -d /tmp/gshare-gangs.XXXXXX)
say() { echo "gangs: $*" | tee -a "$out/summary.txt"; }
cfg=$work/config.toml
cat >"$cfg" <<EOF
[daemon]
socket = "$work/gshare.sock"
state_dir = "$work/state"
[scheduler]
sharing = "exclusive"
[queue]
max_running = 8
EOF
g() { timeout 60 "$gshare" --config "$cfg" "$@"; }
cleanup() { g daemon stop >/dev/null 2>&1; cp "$work/state/daemon.log" "$out/" 2>/dev/null; }
trap cleanup EXIT
export NCCL_NVLS_ENABLE=0

declare -A gpus=([g01]=0,1 [g12]=1,2 [g23]=2,3 [s1]=1)
cmd_of() {  # KEY: sets cmd
  case $1 in
    g01) cmd=("$torchrun" --standalone --nproc_per_node 2 "$bench/ddp_train.py" --gib "$gib" --steps "$steps" --log-every 5 --seed 1) ;;
    g12) cmd=("$torchrun" --standalone --nproc_per_node 2 "$bench/ddp_train.py" --gib "$gib" --steps "$steps" --log-every 5 --seed 2) ;;
    g23) cmd=("$torchrun" --standalone --nproc_per_node 2 "$bench/ddp_train.py" --gib "$gib" --steps "$steps" --log-every 5 --seed 3) ;;
    s1) cmd=("$python" "$bench/mem_train.py" --gib "$gib" --steps 60 --log-every 5 --seed 4) ;;
  esac
}
serial=0
for k in g01 g12 g23 s1; do
  cmd_of "$k"
  t0=$(date +%s.%N)
  CUDA_VISIBLE_DEVICES=${gpus[$k]} timeout 200 "${cmd[@]}" >"$out/bare_$k.out" 2>&1
  t1=$(date +%s.%N)
  d=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  serial=$(awk -v s="$serial" -v d="$d" 'BEGIN{printf "%.1f", s+d}')
  say "bare $k on GPUs ${gpus[$k]}: $d s, $(grep -c '^step ' "$out/bare_$k.out") loss lines"
done

g daemon start >/dev/null || { say "daemon did not start"; exit 1; }
t0=$(date +%s.%N)
ids=""
for k in g01 g12 g23 s1; do
  cmd_of "$k"
  n=$(awk -F, '{print NF}' <<<"${gpus[$k]}")
  id=$(g submit --gpu "${gpus[$k]}" --gpus "$n" --kill-after 5s -J "$k" -o "$out/gshare_$k.out" \
    -- "${cmd[@]}")
  ids="$ids $id"
done
say "submitted:$ids"
poll_jobs "$ids" "$out/status.jsonl" 420
t1=$(date +%s.%N)
ok=1
for k in g01 g12 g23 s1; do
  v=$(losses_verdict "$out/bare_$k.out" "$out/gshare_$k.out")
  [[ $v == identical ]] || ok=0
  say "$k: losses $v; $(grep '^done' "$out/gshare_$k.out" | head -1)"
done
say "makespan $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s; serial $serial s"
[[ $ok == 1 ]]
