#!/usr/bin/env bash
# A cron-style batch on one GPU: six real PyTorch trainings submitted from a script run under
# `env -i` (as cron runs it), with mixed priorities and one dependency, run to completion by
# the queue under the lease. Records who held the GPU when.
#
#   test/bench/batch.sh GSHARE_BIN_DIR
#
# The jobs (submitted in this order within a second, all with the same --begin 5 s later, so
# that the queue orders them rather than their order of arrival):
#   1 cnn  -p 0    2 gpt  -p 0    3 cnn  -p 10    4 gpt  -p 5
#   5 cnn  -p 0 --after 3 (afterok)              6 gpt  -p -5
# With max_running 2 the queue should start 3 and 4 first, then 1 and 2 (same priority: by
# submission), then 5 once 3 COMPLETED, then 6.
#
# Env:
#   OUT            results go to $OUT/batch/ (default ./out)
#   PYTHON         interpreter (default python3)
#   CNN_STEPS, GPT_STEPS   training steps (default 600 and 120: ~25 s each alone on an H100)
#   QUANTUM        the lease's time quantum (default 10s)
#   BATCH_TIMEOUT  seconds allowed to the whole batch (default 900)
# Output in $OUT/batch/: cron.sh, config.toml, status.jsonl (a `gshare status --json` every
# 0.5 s), queue.json (the end state), job-*.out (each job's output), timeline.txt, summary.txt.
# Exit: 0 when every job COMPLETED in a valid order, 1 otherwise, 2 on usage errors.
set -uo pipefail

if [[ $# -ne 1 || "$1" == -h || "$1" == --help ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 2
fi
gbin="$(cd "$1" 2>/dev/null && pwd)" || { echo "batch: no such directory: $1" >&2; exit 2; }
gshare="$gbin/gshare"
[[ -x "$gshare" ]] || { echo "batch: $gshare missing or not executable" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "${OUT:-./out}/batch"
out="$(cd "${OUT:-./out}/batch" && pwd)"
python="$(command -v "${PYTHON:-python3}")"
work="$(mktemp -d)"
rm -f "$out"/*

# Everything through one config file, so that the cron-like script (no environment at all)
# reaches this daemon: the socket and the state directory are spelled out.
cat >"$out/config.toml" <<EOF
[scheduler]
quantum = "${QUANTUM:-10s}"
[queue]
gpus = 1
max_running = 2
[daemon]
socket = "$work/gshare.sock"
state_dir = "$work/state"
EOF
g=("$gshare" --config "$out/config.toml")
cleanup() { "${g[@]}" daemon stop >/dev/null 2>&1; }
trap cleanup EXIT

cnn="$python $root/examples/train_cnn.py --steps ${CNN_STEPS:-600} --log-every 100"
gpt="$python $root/examples/train_gpt.py --steps ${GPT_STEPS:-120} --log-every 20"
cat >"$out/cron.sh" <<EOF
#!/bin/sh
# What a crontab line would run. Prints the six job ids, one per line.
set -e
G="$gshare --config $out/config.toml submit --begin @\$((\$(date +%s) + 5))"
\$G -J cnn-1 -p 0 -o "$out/job-%j.out" -- $cnn
\$G -J gpt-2 -p 0 -o "$out/job-%j.out" -- $gpt
j3=\$(\$G -J cnn-3 -p 10 -o "$out/job-%j.out" -- $cnn)
echo \$j3
\$G -J gpt-4 -p 5 -o "$out/job-%j.out" -- $gpt
\$G -J cnn-5 -p 0 --after \$j3 -o "$out/job-%j.out" -- $cnn
\$G -J gpt-6 -p -5 -o "$out/job-%j.out" -- $gpt
EOF
chmod +x "$out/cron.sh"
{
  echo "# batch.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) gshare=$gshare"
  echo "# gpu: $(timeout 20 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "# cnn: $cnn"
  echo "# gpt: $gpt"
} >"$out/summary.txt"

"${g[@]}" daemon start || { echo "batch: daemon did not start" >&2; exit 1; }
t0=$(date +%s.%N)
ids=$(env -i HOME="$HOME" PATH=/usr/bin:/bin /bin/sh "$out/cron.sh") || {
  echo "batch: cron.sh failed" >&2; exit 1; }
ids=$(echo $ids)
echo "# submitted at $t0: jobs $ids" >>"$out/summary.txt"
(
  while sleep 0.5; do
    "${g[@]}" status --json 2>/dev/null | python3 -c \
      'import json,sys,time; s=json.load(sys.stdin); print(json.dumps({"t": time.time(), "gpus": s["gpus"], "jobs": [{k: j.get(k) for k in ("id","name","state","lease")} for j in s["jobs"]]}))' \
      >>"$out/status.jsonl" 2>/dev/null
  done
) &
poller=$!
timeout "${BATCH_TIMEOUT:-900}" "${g[@]}" wait $ids
rc=$?
kill $poller 2>/dev/null
"${g[@]}" queue -a --json >"$out/queue.json"
echo "# gshare wait exit $rc" >>"$out/summary.txt"
python3 "$root/test/bench/benchlib.py" batch "$out" "$t0" >"$out/timeline.txt"
order_ok=$?
cat "$out/timeline.txt" >>"$out/summary.txt"
cat "$out/summary.txt"
exit $(( rc == 0 && order_ok == 0 ? 0 : 1 ))
