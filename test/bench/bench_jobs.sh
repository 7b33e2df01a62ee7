# Shared by the GPU benchmarks that submit jobs and compare their losses with bare runs
# (rebalance_gpu.sh, gang_overlap.sh). Sourced; needs $python and a function `g` that runs
# gshare with the benchmark's config.

# jobs_left IDS STATUS_JSON: how many of the job ids IDS (space-separated) are not ended in
# STATUS_JSON (`gshare status --json`); 1 when it cannot be read.
jobs_left() {
  "$python" -c '
import json, sys
ids = sys.argv[1].split()
s = json.loads(sys.argv[2]) if sys.argv[2] else {}
jobs = {str(j.get("id")): j.get("state") for j in s.get("jobs", [])}
print(sum(1 for i in ids if jobs.get(i, "PENDING") in ("PENDING", "RUNNING", "SUSPENDED")))
' "$1" "$2" 2>/dev/null || echo 1
}

# poll_jobs IDS JSONL [SECONDS]: appends `{"t": <epoch>, "status": <status --json>}` to JSONL
# once a second (and runs the function `each_poll`, when defined) until every job of IDS has
# ended, at most SECONDS (default 420) times.
poll_jobs() {
  local s
  : >"$2"
  for _ in $(seq "${3:-420}"); do
    s=$(g status --json 2>/dev/null) || s='{}'
    echo "{\"t\": $(date +%s.%N), \"status\": $s}" >>"$2"
    declare -F each_poll >/dev/null && each_poll
    [[ $(jobs_left "$1" "$s") == 0 ]] && return 0
    sleep 1
  done
  return 1
}

# losses_verdict BARE OUT: "identical" when OUT has BARE's `step` lines (and BARE has some),
# else "DIFFER".
losses_verdict() {
  if grep -q '^step ' "$1" 2>/dev/null &&
    diff <(grep '^step ' "$1") <(grep '^step ' "$2" 2>/dev/null) >/dev/null; then
    echo identical
  else
    echo DIFFER
  fi
}
