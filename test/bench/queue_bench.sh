#!/usr/bin/env bash
# CPU benchmarks of the batch queue against its targets (docs/benchmarks.md, "Batch queue
# (CPU)"): `gshare submit` <= 20 ms per job end to end; `gshare queue` with 100,000 jobs in the
# database <= 200 ms. No GPU needed.
#
#   test/bench/queue_bench.sh [GSHARE] [OUTDIR]
#
#   GSHARE  the gshare binary (default build/src/gshare)
#   OUTDIR  results directory (default $OUT, else ./out/queue-bench): raw.txt (every timing,
#           one line each: phase, label, index, wall ms, CPU ms; '#' lines: machine, counts,
#           checks) and summary.txt (the table printed at the end)
#
# Measures (test/bench/queue_bench.py does the timing; every time is process start to exit as
# a user or cron sees it, taken around the process by Python, stdout to /dev/null):
#   1. submit: 500 sequential `gshare submit -H -- true` after one warm-up submit that starts
#      the daemon (held: nothing runs); then, with a fresh daemon, 200 `gshare submit -- true`
#      that run (max_running default), and how long the queue takes to drain.
#   2. queue: three databases, each created by the daemon, then bulk-filled with Python's
#      sqlite3 in one transaction: (a) 99,900 ended + 100 pending, (b) 100,000 pending,
#      (c) like (a) again. For each: the first command (starts the daemon, which loads the
#      pending jobs), 20 interleaved runs of `gshare queue`, `gshare queue -a`,
#      `gshare queue -a --json`; `gshare status`; submit -H and cancel latency with that queue
#      (idle daemon and back to back) and the daemon's CPU time for each; the same SELECT by
#      the sqlite3 shell alone (printed, and only counted); daemon start alone (3 stop/start
#      cycles).
#
# Each measurement has its own GSHARE_SOCKET / GSHARE_STATE_DIR under a temporary directory
# and a config file with [queue] gpus = 1; every daemon is stopped on exit, failure included.
#
# Env: QUEUE_RUNS (20), SUBMIT_HELD (500), SUBMIT_RUN (200), PROBES (5), RESTARTS (3),
#      JOBS (100000: the database size), KEEP_WORK=1 keeps the temporary directory (the three
#      databases: about 700 MiB), TMPDIR.
# Runtime: about 10 minutes on 2 cores (mostly the 60 runs of `queue -a --json`).
# Exit: 0 ok, 1 a measurement failed (partial timings stay in raw.txt), 2 usage.
set -euo pipefail

if [[ "${1:-}" == -h || "${1:-}" == --help || $# -gt 2 ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
gshare="${1:-build/src/gshare}"
[[ -x "$gshare" && -f "$gshare" ]] || { echo "queue_bench: $gshare is not an executable" >&2; exit 2; }
gshare="$(cd "$(dirname "$gshare")" && pwd)/$(basename "$gshare")"
out="${2:-${OUT:-./out/queue-bench}}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
py="${PYTHON:-python3}"
jobs="${JOBS:-100000}"

work="$(mktemp -d "${TMPDIR:-/tmp}/gshare-qb.XXXXXX")"
# A copy: a rebuild during the run must not swap the binary under the daemons.
cp "$gshare" "$work/gshare"
src_gshare="$gshare"
gshare="$work/gshare"
cfg="$work/gshare.toml"
# Retention off: the databases keep every ended job populated (a month of them, more than
# max_ended_jobs' default), as the measurement needs.
printf '[queue]\ngpus = 1\n[retention]\nended_jobs = "0"\nmax_ended_jobs = 0\n' > "$cfg"

# Stops the daemon of every run directory (those still running) and waits for it to exit
# (it holds gshare.lock until then); one that does not stop gets SIGTERM, by the pid its log
# names, if that process is a gshare daemon of this run.
cleanup() {
  local rc=$? d pid
  set +e
  if [[ -n "$child" ]]; then  # a signal came while a step ran: end that step first
    kill -TERM "$child" 2> /dev/null
    wait "$child" 2> /dev/null
  fi
  for d in "$work"/*/; do
    d="${d%/}"
    [[ -e "$d/gshare.lock" ]] || continue
    flock -n "$d/gshare.lock" true && continue
    GSHARE_SOCKET="$d/gshare.sock" GSHARE_STATE_DIR="$d/state" XDG_CONFIG_HOME="$d/xdg" \
      timeout 30 "$gshare" --config "$cfg" daemon stop > /dev/null 2>&1
    timeout 30 flock "$d/gshare.lock" true && continue
    pid="$(sed -n 's/.*daemon \([0-9][0-9]*\) serving.*/\1/p' "$d/state/daemon.log" 2>/dev/null | tail -1)"
    if [[ -n "$pid" ]] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF "$cfg"; then
      echo "queue_bench: daemon $pid of $d did not stop: SIGTERM" >&2
      kill -TERM "$pid"
      timeout 30 flock "$d/gshare.lock" true
    fi
  done
  if [[ "${KEEP_WORK:-0}" == 1 ]]; then
    echo "queue_bench: kept $work" >&2
  else
    rm -rf "$work"
  fi
  [[ $rc -ne 0 ]] && echo "queue_bench: failed (exit $rc); partial timings in $out/raw.txt" >&2
  exit "$rc"
}
child=""
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# One step of queue_bench.py, in the background so that a signal to this script is handled
# at once (bash runs traps only between commands).
step() {
  "$py" "$here/queue_bench.py" "$@" &
  child=$!
  wait "$child"
  child=""
}

raw="$out/raw.txt"
: > "$raw"
echo "== machine"
step meta "$gshare" "$raw"
echo "# meta: command: $0 $*; binary: copy of $src_gshare" >> "$raw"

echo "== 1. submit latency"
step submit "$gshare" "$cfg" "$work" "$raw"

echo "== 2. queue with $jobs jobs in the database"
step db "$gshare" "$cfg" "$work" "$raw" a $((jobs - 100)) 100
step db "$gshare" "$cfg" "$work" "$raw" b 0 "$jobs"
step db "$gshare" "$cfg" "$work" "$raw" c $((jobs - 100)) 100

step summary "$raw" > "$out/summary.txt"
echo "== summary ($out/summary.txt, raw: $raw)"
cat "$out/summary.txt"
