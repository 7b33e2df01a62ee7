# Shell helpers of the memory benchmarks (mem_pair.sh, mem_handoff.sh, mem_stress.sh); sourced,
# not run. The caller sets `me` (its name for messages) and calls mem_setup "$@" first.
#
# Every long step runs in the background and is waited for, so a TERM or INT (e.g. from an outer
# `timeout`) is handled at once: the EXIT trap then signals the jobs still running (each under
# its own `timeout -k`, which passes the signal on), stops the status poller and the daemon
# (by its pid if `daemon stop` does not end it) and removes the scratch folder.
# Needs bash >= 5.1 (`wait -n -p`).

: "${me:=mem}"   # the caller's name for messages
say() { echo "$me: $*" >&2; }
now() { date +%s.%N; }

# mem_setup "$@" (the script's arguments, GSHARE_DIR): prints the script's header comment and
# exits 2 on -h/--help or a wrong count; sets gshare, root, bench, python, work; installs the
# traps.
mem_setup() {
  if [[ $# -ne 1 || "$1" == -h || "$1" == --help ]]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
  fi
  if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
    say "needs bash >= 5.1 (this is $BASH_VERSION)"; exit 2
  fi
  gbin="$(cd "$1" 2>/dev/null && pwd)" || { say "no such directory: $1"; exit 2; }
  gshare="$gbin/gshare"
  [[ -x "$gshare" ]] || { say "$gshare missing or not executable"; exit 2; }
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  bench="$root/test/bench"
  python="$(command -v "${PYTHON:-python3}")" || { say "no interpreter ${PYTHON:-python3}"; exit 2; }
  work="$(mktemp -d "${TMPDIR:-/tmp}/gshare-mem.XXXXXX")" || exit 2
  job_pids=() job_keys=() poller="" fg_pid="" daemon_cfg="" daemon_pid=""
  trap mem_cleanup EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
}

mem_cleanup() {
  trap - EXIT
  trap "" TERM INT   # a second signal (timeout signals the group too) must not cut this short
  local p
  for p in "${job_pids[@]}" $fg_pid; do kill -TERM "$p" 2>/dev/null; done
  poll_stop
  for p in "${job_pids[@]}" $fg_pid; do wait "$p" 2>/dev/null; done   # bounded by timeout -k
  job_pids=() job_keys=() fg_pid=""
  daemon_down
  rm -rf "$work"
}

# host_warm: touches HOST_WARM_GIB GiB of host memory once (default 100, 0: skip; see
# host_warm.py: a VM's lazily initialized memory would otherwise slow the first host pools
# down); prints host_warm.py's line, or "host_warm skipped".
host_warm() {
  local gib="${HOST_WARM_GIB:-100}"
  if [[ $gib == 0 ]]; then echo "host_warm skipped"; return 0; fi
  bounded 300 "$python" "$bench/host_warm.py" "$gib" || echo "host_warm failed (rc $?)"
}

# bounded SECONDS CMD...: CMD under `timeout -k 10`, in the background, waited for.
bounded() {
  timeout -k 10 "$@" &
  fg_pid=$!
  wait "$fg_pid"
  local rc=$?
  fg_pid=""
  return "$rc"
}

# write_config FILE RUN_DIR QUANTUM [GPU_LIMIT]: the daemon's configuration for one run: its own
# socket and state folder under RUN_DIR; [memory] only when ENGINE is set; IDLE_RELEASE,
# EARLY_RELEASE (true|false), STAGGER (true|false), SHARING (auto|exclusive), HOST_BUDGET,
# IDLE_STAGE_AFTER and LOG_LEVEL when set; [mps] with MPS_MODE (MPS_THREADS, MPS_CAP and
# MPS_JOIN_FREE, MPS_JOIN_WAIT: batch_thread_percentage, batch_cap, join_free_percentage,
# join_wait_seconds).
write_config() {
  {
    echo "[scheduler]"
    echo "quantum = \"$3\""
    [[ -n ${IDLE_RELEASE:-} ]] && echo "idle_release = \"$IDLE_RELEASE\""
    [[ -n ${EARLY_RELEASE:-} ]] && echo "early_release = $EARLY_RELEASE"
    [[ -n ${STAGGER:-} ]] && echo "stagger = $STAGGER"
    [[ -n ${SHARING:-} ]] && echo "sharing = \"$SHARING\""
    if [[ -n ${ENGINE:-} ]]; then
      echo "[memory]"
      echo "engine = \"$ENGINE\""
      [[ -n ${HOST_BUDGET:-} ]] && echo "host_budget = \"$HOST_BUDGET\""
      [[ -n ${IDLE_STAGE_AFTER:-} ]] && echo "idle_stage_after = \"$IDLE_STAGE_AFTER\""
      [[ -n ${4:-} ]] && echo "gpu_limit = \"$4\""
    fi
    if [[ -n ${MPS_MODE:-} ]]; then
      echo "[mps]"
      echo "mode = \"$MPS_MODE\""
      [[ -n ${MPS_THREADS:-} ]] && echo "batch_thread_percentage = $MPS_THREADS"
      [[ -n ${MPS_CAP:-} ]] && echo "batch_cap = \"$MPS_CAP\""
      [[ -n ${MPS_JOIN_FREE:-} ]] && echo "join_free_percentage = $MPS_JOIN_FREE"
      [[ -n ${MPS_JOIN_WAIT:-} ]] && echo "join_wait_seconds = $MPS_JOIN_WAIT"
    fi
    echo "[daemon]"
    echo "socket = \"$2/gshare.sock\""
    echo "state_dir = \"$2/state\""
    [[ -n ${LOG_LEVEL:-} ]] && echo "log_level = \"$LOG_LEVEL\""
    true
  } >"$1"
}

# daemon_up CONFIG: starts a daemon for CONFIG (up to DAEMON_START_TIMEOUT s, default 180: it
# may pin host memory first) and records its pid. Returns 1 when it did not start.
daemon_up() {
  daemon_cfg="$1"
  local err="$work/daemon_start.err"
  if ! bounded "${DAEMON_START_TIMEOUT:-180}" "$gshare" --config "$1" daemon start >/dev/null 2>"$err"; then
    say "daemon did not start: $(tail -3 "$err" | tr '\n' ' ')"
    return 1
  fi
  daemon_pid=$(timeout 20 "$gshare" --config "$1" status --json 2>/dev/null |
    "$python" -c 'import json, sys; print(json.load(sys.stdin)["daemon"]["pid"])' 2>/dev/null)
  [[ -n $daemon_pid ]] || say "warning: no daemon pid from status --json"
  return 0
}

# daemon_down: `daemon stop`, then up to 30 s for the process to end, then SIGTERM, SIGKILL.
daemon_down() {
  [[ -n $daemon_cfg ]] || return 0
  timeout 30 "$gshare" --config "$daemon_cfg" daemon stop >/dev/null 2>&1
  if [[ -n $daemon_pid ]]; then
    local i
    for ((i = 0; i < 150; i++)); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$daemon_pid" 2>/dev/null; then
      say "daemon $daemon_pid still running 30 s after stop: SIGTERM"
      kill -TERM "$daemon_pid" 2>/dev/null
      sleep 3
      kill -KILL "$daemon_pid" 2>/dev/null
    fi
  fi
  daemon_cfg="" daemon_pid=""
}

# poll_start FILE: appends one compact `gshare status --json` line (benchlib.py status-line) to
# FILE every POLL_EVERY seconds (default 0.5) until poll_stop.
poll_start() {
  local cfg="$daemon_cfg" file="$1"
  (
    trap 'exit 0' TERM
    while :; do
      timeout 10 "$gshare" --config "$cfg" status --json 2>/dev/null |
        "$python" "$bench/benchlib.py" status-line >>"$file" 2>/dev/null
      sleep "${POLL_EVERY:-0.5}"
    done
  ) &
  poller=$!
}

poll_stop() {
  [[ -n $poller ]] || return 0
  kill -TERM "$poller" 2>/dev/null
  wait "$poller" 2>/dev/null
  poller=""
}

# status_json: the daemon's `status --json` (empty on failure).
status_json() { timeout 10 "$gshare" --config "$daemon_cfg" status --json 2>/dev/null; }

# job_start KEY OUT SECONDS CMD...: CMD in the background under `timeout -k 10 SECONDS`, stdout
# to OUT, stderr to OUT with .err for .out.
job_start() {
  local key=$1 out=$2 tmo=$3
  shift 3
  timeout -k 10 "$tmo" "$@" >"$out" 2>"${out%.out}.err" &
  job_pids+=("$!")
  job_keys+=("$key")
}

jobs_alive() {   # how many started jobs still run
  local p n=0
  for p in "${job_pids[@]}"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done
  echo "$n"
}

# jobs_wait PREFIX TIMES: waits for every started job; appends `PREFIX_KEY_end <epoch> <rc>`
# to TIMES as each one ends.
jobs_wait() {
  local w rc i t
  while ((${#job_pids[@]})); do
    w=""
    wait -n -p w "${job_pids[@]}"
    rc=$?
    t=$(now)
    [[ -n $w ]] || { say "wait returned no job (rc $rc)"; break; }
    for i in "${!job_pids[@]}"; do
      if [[ ${job_pids[$i]} == "$w" ]]; then
        echo "${1}_${job_keys[$i]}_end $t $rc" >>"$2"
        say "${1} ${job_keys[$i]}: exit $rc"
        unset 'job_pids[i]' 'job_keys[i]'
      fi
    done
    job_pids=("${job_pids[@]}")
    job_keys=("${job_keys[@]}")
  done
}

gpu_line() { timeout 20 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1; }
