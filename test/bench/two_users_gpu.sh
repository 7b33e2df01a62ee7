#!/usr/bin/env bash
# Two Unix users share one GPU through the system daemon (issue 21), each with a training that
# needs most of the GPU's memory, so that they take turns with their memory swapped.
#
#   test/bench/two_users_gpu.sh GSHARE_DIR      (as root; GSHARE_DIR holds gshare, libgshare.so)
#
# Steps: 1. users gshare-gpu-a and -b (useradd, kept); 2. each training bare, one at a time
# (reference losses; seeds 1 and 2); 3. a system daemon on private paths ([system] socket,
# state_dir; max_priority 10); 4. both users `gshare run` their training at once, from cron's
# bare environment with GSHARE_SYSTEM_SOCKET; while they run, `gshare status` from each user
# and `gshare cancel` of A's job by B (must exit 5); 5. losses compared with the bare runs.
# One line (summary.txt and stdout):
#   gib=<G> both_listed=yes|no cancel_by_other=<exit> a=identical|DIFFER b=identical|DIFFER
#   a_s=<s> b_s=<s> makespan_s=<s> serial_s=<s>
# Env: OUT (default ./out; results in $OUT/two_users/), PYTHON, GIB (default 49), TARGET_SECONDS
# (default 20), RUN_TIMEOUT (default 300).
# Exit: 0 when both finished with their bare losses and B's cancel was refused, 1 otherwise.
set -uo pipefail
me=two_users
[[ $# -eq 1 ]] || { echo "usage: $0 GSHARE_DIR" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "$me: needs root (useradd, a system daemon)" >&2; exit 2; }
gbin="$(cd "$1" && pwd)"; gshare="$gbin/gshare"
root="$(cd "$(dirname "$0")/../.." && pwd)"
python="$(command -v "${PYTHON:-python3}")"
gib=${GIB:-49}; target=${TARGET_SECONDS:-20}; run_timeout=${RUN_TIMEOUT:-300}
out="${OUT:-./out}/$me"; mkdir -p "$out"
say() { echo "$me: $*" >&2; }
elapsed() { "$python" -c 'import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))' "$1" "$2"; }
work="$(mktemp -d /tmp/gshare-two-users.XXXXXX)"; chmod 755 "$work"
cfg="$work/gshare.toml" sock="$work/run/gshare.sock" state="$work/state"
cleanup() {
  "$gshare" --config "$cfg" daemon stop --system >/dev/null 2>&1
  cp "$state/daemon.log" "$out/daemon.log" 2>/dev/null
}
trap cleanup EXIT
train=(--gib "$gib" --target-seconds "$target" --log-every 5)
# The trainer and the binaries must be readable by both users.
# (mem_train.py imports examples/training.py from two levels above its own folder.)
mkdir -p "$work/tree/test/bench" "$work/tree/examples"
cp "$root/test/bench/mem_train.py" "$work/tree/test/bench/"
cp "$root/examples/training.py" "$work/tree/examples/"
chmod -R a+rX "$work/tree"
trainer="$work/tree/test/bench/mem_train.py"
mkdir -p "$work/bin" && cp "$gbin/gshare" "$gbin/libgshare.so" "$work/bin/" && chmod 755 "$work/bin"/*
gshare="$work/bin/gshare"

users=(gshare-gpu-a gshare-gpu-b)
for u in "${users[@]}"; do
  id "$u" >/dev/null 2>&1 || useradd --no-create-home --shell /usr/sbin/nologin "$u"
  mkdir -p "$work/home-$u" && chown "$u:" "$work/home-$u"
done

say "1/3 bare runs, one at a time"
t0=$(date +%s.%N)
for i in 0 1; do
  timeout "$run_timeout" "$python" "$trainer" "${train[@]}" --seed $((i + 1)) \
    > "$out/bare$i.out" 2> "$out/bare$i.err" || say "bare run $i failed"
done
serial=$(elapsed "$t0" "$(date +%s.%N)")

cat > "$cfg" <<TOML
[scheduler]
quantum = "20s"
[system]
socket = "$sock"
state_dir = "$state"
max_priority = 10
TOML
"$gshare" --config "$cfg" daemon start --system 2> "$out/daemon_start.err" ||
  { say "the system daemon did not start"; cat "$out/daemon_start.err" >&2; exit 1; }

as_user() {  # USER ARGS...: gshare ARGS as USER in cron's bare environment
  local u=$1; shift
  runuser -u "$u" -- env -i HOME="$work/home-$u" PATH="$(dirname "$python"):/usr/bin:/bin" \
    GSHARE_SYSTEM_SOCKET="$sock" "$gshare" "$@"
}

say "2/3 both users' trainings under the system daemon"
t0=$(date +%s.%N)
for i in 0 1; do
  ( cd "$work/home-${users[$i]}" && timeout "$run_timeout" runuser -u "${users[$i]}" -- env -i \
      HOME="$work/home-${users[$i]}" PATH="$(dirname "$python"):/usr/bin:/bin" \
      GSHARE_SYSTEM_SOCKET="$sock" "$gshare" run -J "train-$i" -- \
      "$python" "$trainer" "${train[@]}" --seed $((i + 1)) \
      > "$out/shared$i.out" 2> "$out/shared$i.err"; echo $? > "$out/shared$i.rc"
    echo "$(date +%s.%N)" > "$out/shared$i.end" ) &
done
both_listed=no cancel_rc=-
for _ in $(seq 1 120); do
  sleep 1
  as_user "${users[1]}" status --json > "$out/status_b.json" 2>/dev/null || continue
  as_user "${users[0]}" status > "$out/status_a.txt" 2>&1
  running=$("$python" -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(sum(1 for j in d["jobs"] if j["state"]=="RUNNING" and j["name"].startswith("train-")))' \
    "$out/status_b.json" 2>/dev/null)
  if [[ "$running" == 2 ]]; then
    both_listed=yes
    a_job=$("$python" -c 'import json,sys; d=json.load(open(sys.argv[1]))
print([j["id"] for j in d["jobs"] if j["name"]=="train-0" and j["state"]=="RUNNING"][0])' \
      "$out/status_b.json")
    as_user "${users[1]}" cancel "$a_job" > "$out/cancel_by_b.txt" 2>&1; cancel_rc=$?
    break
  fi
done
wait
makespan=$(elapsed "$t0" "$(cat "$out"/shared*.end | sort -n | tail -1)")

say "3/3 losses"
verdict() { diff <(grep '^step' "$out/bare$1.out") <(grep '^step' "$out/shared$1.out") \
  >/dev/null && [[ -s "$out/bare$1.out" ]] && echo identical || echo DIFFER; }
secs() { grep -o 'seconds=[0-9.]*' "$out/shared$1.out" | head -1 | cut -d= -f2; }
line="gib=$gib both_listed=$both_listed cancel_by_other=$cancel_rc a=$(verdict 0) b=$(verdict 1)"
line+=" a_s=$(secs 0) b_s=$(secs 1) makespan_s=$makespan serial_s=$serial"
echo "$line" | tee "$out/summary.txt"
[[ "$line" == *"a=identical b=identical"* && $cancel_rc == 5 && $both_listed == yes ]]
