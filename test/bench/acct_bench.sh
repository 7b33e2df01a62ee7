#!/usr/bin/env bash
# acct_bench.sh GSHARE_DIR [JOBS] [RUNS]: the wall time of `gshare acct --since 2000-01-01`
# (output to /dev/null) with JOBS (default 100000) ended jobs in the database, 1 in 100 of them
# requeued once (an earlier run in job_runs), against the target of 300 ms (docs/benchmarks.md,
# "History: acct over 100,000 jobs"). A user daemon of its own creates the database in a
# scratch folder, Python's sqlite3 fills it in one transaction, then RUNS (default 10) timed
# runs follow one warm-up run; also -P with every field, --json, and the default window
# (since midnight: no job of the database in it). No GPU needed.
set -eu
gbin="$(cd "${1:?usage: acct_bench.sh GSHARE_DIR [JOBS] [RUNS]}" && pwd)"
jobs="${2:-100000}"
runs="${3:-10}"
work="$(mktemp -d)"
trap '"$gbin/gshare" --config "$work/g.toml" daemon stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
printf '[daemon]\nsocket = "%s/g.sock"\nstate_dir = "%s/state"\n[retention]\nended_jobs = "0"\nmax_ended_jobs = 0\n' \
  "$work" "$work" >"$work/g.toml"
g() { "$gbin/gshare" --config "$work/g.toml" "$@"; }
g daemon start >/dev/null
g daemon stop >/dev/null
python3 - "$work/state/gshare.db" "$jobs" <<'PY'
import json, os, sqlite3, sys
db, jobs = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(db)
uid = os.getuid()
t0 = 1_000_000_000.0  # 2001-09-09: every job ended long before today
states = ["COMPLETED"] * 8 + ["FAILED", "CANCELLED"]
rows = []
for i in range(jobs):
    s = t0 + i * 60
    rows.append(("sweep-lr0.00%d" % i, json.dumps(["python3", "train.py", "--seed", str(i)]),
                 "/home/u", uid, states[i % 10], s, s + 5, s + 65, 0 if i % 10 < 8 else 1,
                 55.5, 4.5, (1 << 30) + i, "submit", i % 7, i % 5, 1 if i % 100 == 0 else 0))
c.execute("BEGIN")
c.executemany("INSERT INTO jobs (name, argv, cwd, uid, state, submit_time, start_time,"
              " end_time, exit_code, lease_seconds, wait_seconds, peak_bytes, kind, swaps_out,"
              " swaps_in, restarts) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
c.executemany("INSERT INTO job_runs (job_id, run, state, requeued, submit_time, start_time,"
              " end_time, exit_code, requeue_time) VALUES (?, 0, 'FAILED', 0, ?, ?, ?, 1, ?)",
              [(i + 1, t0 + i * 60 - 30, t0 + i * 60 - 25, t0 + i * 60 - 20, t0 + i * 60)
               for i in range(0, jobs, 100)])
c.commit()
PY
g daemon start >/dev/null
lines="$(g acct --since 2000-01-01 -n | wc -l)"
echo "# $(date -u +%FT%TZ) $(uname -n) $(nproc) cores; $jobs jobs, $lines runs listed"
timed() {  # label, then the acct arguments: RUNS wall times in ms, after one warm-up
  local label="$1"; shift
  g acct "$@" >/dev/null
  local all=""
  for ((i = 0; i < runs; i++)); do
    local t0 t1
    t0=$(date +%s%N)
    g acct "$@" >/dev/null
    t1=$(date +%s%N)
    all="$all $(((t1 - t0) / 1000000))"
  done
  local sorted median
  sorted="$(tr ' ' '\n' <<<"$all" | grep . | sort -n | tr '\n' ' ')"
  median="$(tr ' ' '\n' <<<"$sorted" | grep . | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
  echo "$label: median ${median} ms; all (ms, sorted): $sorted"
}
timed "acct --since 2000-01-01" --since 2000-01-01
timed "acct --since 2000-01-01 -P -o <every field>" --since 2000-01-01 -P \
  -o JobID,JobName,User,UID,State,Reason,Submit,Start,End,Elapsed,Reserved,ExitCode,Priority,Restarts,GPUTime,LeaseWait,PeakMem,Swaps,GPU
timed "acct --since 2000-01-01 --json" --since 2000-01-01 --json
timed "acct (default window: today, empty)"
