#!/usr/bin/env bash
# GPU machine: the robustness of issues 19 and 27 with real trainings.
#  1. bare: train_gpt.py and train_cnn.py, one after the other: the losses.
#  2. both under `gshare run` at once, the daemon running throughout: losses must equal bare.
#  3. both under `gshare run` at once, the daemon stopped (SIGSTOP) for HANG_S seconds a few
#     seconds in: the shims fail open within GSHARE_DAEMON_TIMEOUT_MS (one warning each), the
#     trainings go on, then gate again once it is continued; losses must equal bare.
#  4. a submitted job's daemon killed with SIGKILL mid-run and restarted: the job is
#     re-adopted and ends COMPLETED with the bare losses.
# Usage: OUT=dir [STEPS_GPT=150 STEPS_CNN=1500] [SHARING=exclusive] [PARTS="bare shared hang
# kill9"] test/bench/hung_daemon_gpu.sh BIN_DIR (the losses of "bare" are what the others
# are compared with). Writes OUT/*.log and
# OUT/summary.txt. Every GPU command runs under timeout.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=$(cd "${1:-dist}" && pwd)
out=${OUT:-./out}
declare -A steps=([gpt]=${STEPS_GPT:-150} [cnn]=${STEPS_CNN:-1500})
hang=${HANG_S:-6}
py=${PYTHON:-python3}
mkdir -p "$out"
export GSHARE_STATE_DIR=$out/state XDG_RUNTIME_DIR=$out/run
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
if [ -n "${SHARING:-}" ]; then  # e.g. SHARING=exclusive: the jobs take turns, never share
  mkdir -p "$out/config/gshare"
  printf '[scheduler]\nsharing = "%s"\n' "$SHARING" >"$out/config/gshare/gshare.toml"
  export XDG_CONFIG_HOME=$out/config
fi
parts=${PARTS:-bare shared hang kill9}
g="$bin/gshare"
losses() { grep '^step ' "$1"; }
summary="$out/summary.txt"
: >"$summary"

for m in gpt cnn; do
  [[ " $parts " == *" bare "* ]] || continue
  every=10; [ $m = cnn ] && every=100
  timeout 300 "$py" examples/train_$m.py --steps "${steps[$m]}" --log-every $every >"$out/bare_$m.log" 2>&1
  echo "bare $m rc=$? $(tail -1 "$out/bare_$m.log")" >>"$summary"
done

pair() {  # pair NAME [action during the run]
  local name=$1
  timeout 300 "$g" run -J gpt -- "$py" examples/train_gpt.py --steps "${steps[gpt]}" --log-every 10 \
    >"$out/${name}_gpt.log" 2>"$out/${name}_gpt.err" &
  local a=$!
  timeout 300 "$g" run -J cnn -- "$py" examples/train_cnn.py --steps "${steps[cnn]}" --log-every 100 \
    >"$out/${name}_cnn.log" 2>"$out/${name}_cnn.err" &
  local b=$!
  if [ "${2:-}" = hang ]; then
    sleep 8
    local d
    d=$("$g" status --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["pid"])')
    kill -STOP "$d"
    echo "$name: daemon $d stopped at $(date +%s.%N)" >>"$summary"
    sleep "$hang"
    kill -CONT "$d"
    echo "$name: daemon $d continued at $(date +%s.%N)" >>"$summary"
  fi
  wait $a; local ra=$?
  wait $b; local rb=$?
  for m in gpt cnn; do
    if diff <(losses "$out/bare_$m.log") <(losses "$out/${name}_$m.log") >/dev/null; then
      same=identical
    else
      same=DIFFERENT
    fi
    echo "$name $m: losses $same to bare, $(grep -c 'stopped answering' "$out/${name}_$m.err") " \
         "warning(s), $(tail -1 "$out/${name}_$m.log")" >>"$summary"
  done
  echo "$name: rc gpt=$ra cnn=$rb" >>"$summary"
}

[[ " $parts " == *" shared "* ]] && pair shared
[[ " $parts " == *" hang "* ]] && pair hang hang
"$g" status >"$out/status_after_hang.txt" 2>&1
[[ " $parts " == *" kill9 "* ]] || { "$g" daemon stop >/dev/null 2>&1; cp "$GSHARE_STATE_DIR/daemon.log" "$out/daemon.log"; cat "$summary"; exit 0; }

# 4. kill -9 of the daemon while a submitted training runs.
id=$("$g" submit -J gpt9 -o "$out/kill9_gpt.log" -- "$py" examples/train_gpt.py --steps "${steps[gpt]}" --log-every 10)
sleep 10
d=$("$g" status --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["pid"])')
kill -KILL "$d"
echo "kill9: daemon $d killed at $(date +%s.%N) (job $id)" >>"$summary"
sleep 2
"$g" daemon >/dev/null 2>&1
timeout 300 "$g" wait "$id"; rc=$?
if diff <(losses "$out/bare_gpt.log") <(losses "$out/kill9_gpt.log") >/dev/null; then same=identical; else same=DIFFERENT; fi
echo "kill9: wait rc=$rc, losses $same to bare; $("$g" queue -a | grep gpt9)" >>"$summary"
"$g" daemon stop >/dev/null 2>&1
cp "$GSHARE_STATE_DIR/daemon.log" "$out/daemon.log" 2>/dev/null
cat "$summary"
