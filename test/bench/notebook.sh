#!/usr/bin/env bash
# Notebooks beside a training (issue 23; docs/benchmarks.md "Notebooks"): an idle notebook
# holding NB_GIB GiB of filled tensors (test/bench/notebook.py) and a training of TRAIN_GIB GiB
# (test/bench/mem_train.py) that arrives ARRIVE_S seconds after the notebook is ready; their
# memory adds up to more than the GPU. After the training ends the notebook runs its next
# cell: the time of its first touch and whether its data is intact.
#
#   notebook.sh GSHARE_DIR      (GSHARE_DIR holds gshare and libgshare.so)
#
# CASES (default "alone gshare nostage three"):
#   alone    the training alone, bare (its time and losses are the reference)
#   gshare   notebook + training under gshare, default settings (idle memory staged after 5 s)
#   nostage  the same with [memory] idle_stage_after = "0" (no staging)
#   three    THREE_GIB-GiB notebooks x 3 and a THREE_TRAIN_GIB-GiB training (host_budget
#            THREE_BUDGET): all finish, every notebook intact
# Other knobs: NB_GIB (40), TRAIN_GIB (49), TRAIN_SECONDS (40: the training's --target-seconds),
# ARRIVE_S (15), THREE_GIB (30), THREE_TRAIN_GIB (60), THREE_BUDGET (96GiB), HOST_WARM_GIB (100),
# TRAIN_TRACE=1 (the trainings' --trace: each step's GPU and CPU span on <case>_train.err),
# CPU_MS (the trainings' --cpu-ms; default: what `alone` measured, when it ran first).
# Output on stdout: one `result` line per case (launch= and exit=: the training's, epoch
# seconds, beside its --trace marks); `step` lines of the trainings in OUT (default
# a scratch folder) as <case>_train.out, the notebooks' as <case>_nb<k>.out, status samples as
# <case>_status.jsonl, the daemon's log as <case>_daemon.log.
me=notebook
. "$(dirname "${BASH_SOURCE[0]}")/mem_common.sh"
mem_setup "$@"
out="${OUT:-$work/out}"
mkdir -p "$out"
NB_GIB=${NB_GIB:-40} TRAIN_GIB=${TRAIN_GIB:-49} TRAIN_SECONDS=${TRAIN_SECONDS:-40}
ARRIVE_S=${ARRIVE_S:-15}
# The trainings of the cases after `alone` run with alone's measured CPU time per step
# (--cpu-ms): mem_train.py otherwise derives it from its first steps' GPU time, which under
# gshare includes the room being made, and so would change the workload (CPU_MS sets it).
cpu_ms=${CPU_MS:-}
train_args() {
  echo --gib "$1" --target-seconds "$TRAIN_SECONDS"
  if [[ -n $cpu_ms ]]; then echo --cpu-ms "$cpu_ms"; fi
  if [[ ${TRAIN_TRACE:-0} == 1 ]]; then echo --trace; fi
}

field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p" "$2" | tail -1; }

# run_case NAME NB_COUNT NB_GIB TRAIN_GIB: daemon up, notebooks, the training ARRIVE_S later,
# then every notebook's next cell; prints the result line.
run_case() {
  local name=$1 count=$2 nb=$3 train=$4 k
  write_config "$work/$name.toml" "$work/$name" 20s
  daemon_up "$work/$name.toml" || return 1
  poll_start "$out/${name}_status.jsonl"
  local g=("$gshare" --config "$work/$name.toml" run)
  for ((k = 1; k <= count; k++)); do
    job_start "nb$k" "$out/${name}_nb$k.out" 900 "${g[@]}" -J "nb$k" -- \
      "$python" "$bench/notebook.py" --gib "$nb" --wake-file "$work/$name.wake"
  done
  for ((k = 1; k <= count; k++)); do
    until grep -q '^ready' "$out/${name}_nb$k.out" 2>/dev/null; do
      [[ $(jobs_alive) -gt 0 ]] || { say "$name: notebook $k died"; return 1; }
      sleep 0.2
    done
  done
  say "$name: notebooks ready; the training comes in $ARRIVE_S s"
  sleep "$ARRIVE_S"
  local t0
  t0=$(now)
  bounded 600 "${g[@]}" -J train -- "$python" "$bench/mem_train.py" $(train_args "$train") \
    >"$out/${name}_train.out" 2>"$out/${name}_train.err"
  local rc=$? t1
  t1=$(now)
  touch "$work/$name.wake"
  jobs_wait "$name" "$out/${name}_times"
  poll_stop
  daemon_down
  cp "$work/$name/state/daemon.log" "$out/${name}_daemon.log" 2>/dev/null
  local wakes="" intact=1
  for ((k = 1; k <= count; k++)); do
    wakes+="$(field seconds "$out/${name}_nb$k.out"),"
    [[ $(field intact "$out/${name}_nb$k.out") == 1 ]] || intact=0
  done
  echo "result $name train_rc=$rc train_wall=$(awk "BEGIN { print $t1 - $t0 }") $(grep '^done' "$out/${name}_train.out" | cut -d' ' -f2-4) wake_s=${wakes%,} intact=$intact launch=$t0 exit=$t1"
}

echo "# $(date -u +%FT%TZ) gpu: $(gpu_line)"
host_warm
for c in ${CASES:-alone gshare nostage three}; do
  case $c in
    alone)
      t0=$(now)
      bounded 600 "$python" "$bench/mem_train.py" $(train_args "$TRAIN_GIB") \
        >"$out/alone_train.out" 2>"$out/alone_train.err"
      rc=$?
      t1=$(now)
      [[ -n $cpu_ms ]] || cpu_ms=$(field cpu_ms "$out/alone_train.out")
      echo "result alone train_rc=$rc train_wall=$(awk "BEGIN { print $t1 - $t0 }") $(grep '^done' "$out/alone_train.out" | cut -d' ' -f2-4) launch=$t0 exit=$t1"
      ;;
    gshare) ENGINE=swap run_case gshare 1 "$NB_GIB" "$TRAIN_GIB" ;;
    nostage) ENGINE=swap IDLE_STAGE_AFTER=0 run_case nostage 1 "$NB_GIB" "$TRAIN_GIB" ;;
    three)
      ENGINE=swap HOST_BUDGET=${THREE_BUDGET:-96GiB} run_case three 3 "${THREE_GIB:-30}" \
        "${THREE_TRAIN_GIB:-60}"
      ;;
    *) say "unknown case $c"; exit 2 ;;
  esac
done
for c in gshare nostage; do
  [[ -f $out/alone_train.out && -f $out/${c}_train.out ]] || continue
  if diff <(grep '^step' "$out/alone_train.out") <(grep '^step' "$out/${c}_train.out") >/dev/null; then
    echo "losses $c: equal to alone"
  else
    echo "losses $c: DIFFERENT from alone"
  fi
done
