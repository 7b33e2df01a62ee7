#!/usr/bin/env bash
# gshare's multi-GPU features on a machine with 2 GPUs: gang leases of data-parallel jobs
# (`submit --gpus 2`) queued with single-GPU jobs, and a checkpointed job moved to the other GPU
# (`suspend`, then `resume --gpu 1`). Every training must print its bare run's losses.
#
#   test/bench/multi_gpu.sh GSHARE_DIR          (GSHARE_DIR holds gshare and libgshare.so)
#
# Steps (STEPS, default "bare gshare move": any of them, in this order; each prints its time):
#   bare:   one at a time, the references: D1, D2 = `torchrun --standalone --nproc_per_node 2
#           ddp_train.py` (seeds 1, 2; CUDA_VISIBLE_DEVICES=0,1), S1, S2 = mem_train.py on GPU 0
#           (seeds 3, 4); serial_s is the sum of their times.
#   gshare: one daemon (private socket and state, [queue] max_running 4 per GPU); D1 and D2
#           submitted with --gpus 2, S1 and S2 without --gpu, all at once; `status --json` once
#           a second into status.jsonl until all four end (RUN_TIMEOUT); makespan_s from the
#           first submit to the last end; losses against the bare runs; the `done` lines name the
#           GPUs each DDP job used (ddp_devices.txt). ddp_overlap (an observation, not a pass
#           criterion): whether some snapshot shows both DDP jobs among the GPUs' `holding`
#           jobs (allowed in shared mode, never on one GPU in exclusive mode).
#   move:   S3 (mem_train.py, seed 5) bare on GPU 0; then submitted with --gpus 2 --memory
#           checkpoint (it sees both GPUs and computes on its device 0, GPU 0: the driver
#           restores a process onto another GPU only when it sees every GPU); after MOVE_AT_STEP
#           steps `gshare suspend`, wait until SUSPENDED with a
#           checkpoint, `gshare resume --gpu 1`; nvidia-smi's compute apps once a second
#           (move_apps.txt) give the GPU of the job's processes (GSHARE_JOB_ID in their
#           environment; else the GPU whose lease it holds in status --json); losses compared.
# The gshare step compares with $OUT/multi_gpu/bare_*.out of this run or of an earlier one with
# the same OUT, so runs may be split across time limits (STEPS=bare, then STEPS="gshare move").
# One line (summary.txt and stdout); `-` for what the chosen steps did not measure:
#   ddp1=identical|DIFFER ddp2=... s1=... s2=... makespan_s=<x> serial_s=<x>
#   ddp_overlap=yes|no|unknown move=identical|DIFFER moved_to=<uuid or none> gpu1_uuid=<uuid>
# Env: OUT (default ./out; results in $OUT/multi_gpu/), PYTHON (default python3), TORCHRUN
# (default: torchrun next to $PYTHON), GIB_DDP (per rank, default 8), DDP_STEPS (default 150),
# GIB_SINGLE (default 20), TARGET_SECONDS (default 20), MOVE_AT_STEP (default 20), RUN_TIMEOUT
# (per wait, default 400), MAX_RUNNING (default 4), ENGINE (default swap).
# Cost on 2 H100s: bare ~160 s (a DDP run 44 s), gshare ~110 s (two DDP runs at once: 77 s bare),
# move ~90 s (estimates but for the DDP figures).
# Two torchruns at once are safe: --standalone means --rdzv-backend c10d --rdzv-endpoint
# localhost:0 (a free port from the OS) and a random --rdzv-id, and NCCL's bootstrap takes
# ephemeral ports; NVLink multicast stays off (NCCL_NVLS_ENABLE=0).
# Exit: 0 when the chosen steps passed (bare: all ran; gshare: all four identical; move:
# identical and on GPU 1), 1 otherwise, 2 on usage errors.
set -uo pipefail

me=multi_gpu
# shellcheck source=mem_common.sh source-path=SCRIPTDIR
source "$(dirname "$0")/mem_common.sh"
mem_setup "$@"

steps_run=" ${STEPS:-bare gshare move} "
for s in $steps_run; do
  [[ $s == bare || $s == gshare || $s == move ]] || { say "unknown step $s in STEPS"; exit 2; }
done
gib_ddp=${GIB_DDP:-8}
ddp_steps=${DDP_STEPS:-150}
gib1=${GIB_SINGLE:-20}
target=${TARGET_SECONDS:-20}
at=${MOVE_AT_STEP:-20}
tmo=${RUN_TIMEOUT:-400}
torchrun=${TORCHRUN:-$(dirname "$python")/torchrun}
[[ -x $torchrun ]] || { say "no torchrun at $torchrun (set TORCHRUN)"; exit 2; }
out="${OUT:-./out}/multi_gpu"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
ended_re='^(COMPLETED|FAILED|CANCELLED|TIMEOUT|LOST)$'
submitted=()

mg_cleanup() {
  trap "" TERM INT
  if ((${#submitted[@]})) && [[ -n $daemon_cfg ]]; then   # submitted jobs outlive the daemon
    timeout 10 "$gshare" --config "$daemon_cfg" cancel "${submitted[@]}" >/dev/null 2>&1
    local i
    for ((i = 0; i < 15; i++)); do
      status_json | "$python" -c 'import json, sys
ids = set(map(int, sys.argv[1:]))
sys.exit(any(j["id"] in ids and j["state"] in ("RUNNING", "SUSPENDED", "PENDING")
             for j in json.load(sys.stdin)["jobs"]))' "${submitted[@]}" 2>/dev/null && break
      sleep 1
    done
  fi
  daemon_down
  cp "$work/state/daemon.log" "$out/daemon.log" 2>/dev/null
  mem_cleanup
}
trap mg_cleanup EXIT

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

job_cmd() {  # KEY: sets cmd to the training of ddp1, ddp2 (seeds 1, 2), s1, s2, s3 (seeds 3..5)
  case $1 in
    ddp*) cmd=("$torchrun" --standalone --nproc_per_node 2 "$bench/ddp_train.py" --gib "$gib_ddp"
               --steps "$ddp_steps" --log-every 10 --seed "${1#ddp}") ;;
    s*) cmd=("$python" "$bench/mem_train.py" --gib "$gib1" --target-seconds "$target"
             --log-every 1 --seed $((${1#s} + 2))) ;;
  esac
}

ensure_daemon() {
  [[ -n $daemon_cfg ]] && return 0
  cfg="$work/config.toml"
  ENGINE=${ENGINE:-swap} write_config "$cfg" "$work" 20s
  printf '[queue]\nmax_running = %s\n' "${MAX_RUNNING:-4}" >>"$cfg"
  daemon_up "$cfg"
}

submit() {  # KEY OPTIONS...: submits KEY's training; sets sub_id to its id (empty on failure)
  local key=$1
  shift
  job_cmd "$key"
  sub_id=$(timeout 30 "$gshare" --config "$daemon_cfg" submit "$@" -J "$key" --kill-after 5s \
    -o "$out/gshare_$key.out" -- "${cmd[@]}" 2>>"$out/submit.err")
  if [[ $sub_id =~ ^[0-9]+$ ]]; then
    submitted+=("$sub_id")
  else
    say "submit of $key failed: $(tail -1 "$out/submit.err")"
    sub_id=""
  fi
}

# poll_once JSONL ID...: appends one `status --json` (with "t") to JSONL; exit 0 when every ID
# has ended.
poll_once() {
  status_json | "$python" -c 'import json, sys, time
try:
    st = json.load(sys.stdin)
except ValueError:
    sys.exit(1)
st["t"] = time.time()
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(st, separators=(",", ":")) + "\n")
state = {j["id"]: j["state"] for j in st.get("jobs", [])}
ended = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "LOST")
sys.exit(0 if all(state.get(int(i)) in ended for i in sys.argv[2:]) else 1)' "$@"
}

job_state() {  # ID: its state in `status --json` (empty when unknown)
  status_json | "$python" -c 'import json, sys
print(next((j["state"] for j in json.load(sys.stdin)["jobs"] if j["id"] == int(sys.argv[1])), ""))' \
    "$1" 2>/dev/null
}

verdict() {  # REF OUT: identical when OUT has REF's step lines (and REF has some)
  if grep -q '^step ' "$1" 2>/dev/null && diff <(grep '^step ' "$1") <(grep '^step ' "$2" 2>/dev/null) >/dev/null; then
    echo identical
  else
    echo DIFFER
  fi
}

gpu_uuid() { timeout 20 nvidia-smi --query-gpu=uuid --format=csv,noheader -i "$1" 2>/dev/null | head -1; }

ok=1
v_ddp1=- v_ddp2=- v_s1=- v_s2=- makespan=- serial=- overlap=- v_move=- moved_to=-
gpu1=$(gpu_uuid 1)
say "GPUs: $(timeout 20 nvidia-smi --query-gpu=index,name,uuid,memory.total --format=csv,noheader | tr '\n' ';')"

if [[ $steps_run == *" bare "* ]]; then
  t_step=$(now)
  say "bare: D1, D2 (2 GPUs, $gib_ddp GiB a rank, $ddp_steps steps), S1, S2 (GPU 0, $gib1 GiB), one at a time"
  : >"$out/bare_times.txt"
  for key in ddp1 ddp2 s1 s2; do
    job_cmd "$key"
    visible=0
    [[ $key == ddp* ]] && visible=0,1
    t0=$(now)
    CUDA_VISIBLE_DEVICES=$visible bounded "$tmo" "${cmd[@]}" >"$out/bare_$key.out" 2>"$out/bare_$key.err"
    rc=$?
    echo "$key $(elapsed "$t0" "$(now)") $rc" >>"$out/bare_times.txt"
    say "bare $key: exit $rc, $(elapsed "$t0" "$(now)") s; $(grep '^done' "$out/bare_$key.out")"
    [[ $rc == 0 ]] || ok=0
  done
  say "step bare: $(elapsed "$t_step" "$(now)") s"
fi
[[ -s $out/bare_times.txt ]] && serial=$(awk '{ s += $2 } END { printf "%.1f", s }' "$out/bare_times.txt")

if [[ $steps_run == *" gshare "* ]]; then
  t_step=$(now)
  ensure_daemon || exit 1
  say "gshare: D1, D2 with --gpus 2, S1, S2 without --gpu, all at once"
  declare -A gid=()
  t0=$(now)
  for key in ddp1 ddp2 s1 s2; do
    opts=()
    [[ $key == ddp* ]] && opts=(--gpus 2)
    submit "$key" "${opts[@]}"
    gid[$key]=$sub_id
  done
  ids=()
  for key in ddp1 ddp2 s1 s2; do [[ -n ${gid[$key]} ]] && ids+=("${gid[$key]}"); done
  say "job ids: ddp1=${gid[ddp1]} ddp2=${gid[ddp2]} s1=${gid[s1]} s2=${gid[s2]}"
  : >"$out/status.jsonl"
  t_end=""
  for ((i = 0; i < tmo && ${#ids[@]}; i++)); do
    if poll_once "$out/status.jsonl" "${ids[@]}"; then t_end=$(now); break; fi
    sleep 1
  done
  [[ -n $t_end ]] || say "not all jobs ended within $tmo s"
  # The makespan from the jobs' end_time (epoch seconds) when it is sane, else from the poll.
  read -r makespan overlap < <("$python" - "$out/status.jsonl" "$t0" "${t_end:-0}" \
      "${gid[ddp1]:-0}" "${gid[ddp2]:-0}" "${ids[@]}" <<'EOF'
import json, sys
path, t0, t_end, d1, d2 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
ids = set(map(int, sys.argv[6:]))
samples = []
for line in open(path):
    try:
        samples.append(json.loads(line))
    except ValueError:
        pass
overlap = "unknown"
for s in samples:
    holding = set()
    for g in s.get("gpus", []):
        holding.update(g.get("holding") or [])
        if g.get("holder") is not None:
            holding.add(g["holder"])
    if d1 in holding or d2 in holding:
        overlap = "no" if overlap == "unknown" else overlap
    if d1 in holding and d2 in holding:
        overlap = "yes"
ends = [j.get("end_time") for j in (samples[-1]["jobs"] if samples else []) if j["id"] in ids]
if t_end and ends and all(isinstance(e, (int, float)) and t0 - 1 < e < t_end + 5 for e in ends):
    t_end = max(ends)
print(f"{t_end - t0:.1f}" if t_end else "-", overlap)
EOF
  )
  makespan=${makespan:--} overlap=${overlap:-unknown}
  for key in ddp1 ddp2 s1 s2; do
    v=$(verdict "$out/bare_$key.out" "$out/gshare_$key.out")
    printf -v "v_$key" %s "$v"
    [[ $v == identical ]] || ok=0
    say "gshare $key (job ${gid[$key]}): $v; $(grep '^done' "$out/gshare_$key.out" 2>/dev/null)"
  done
  {
    for f in "$out"/bare_ddp?.out "$out"/gshare_ddp?.out; do
      d=$(grep -o 'devices=[^ ]*' "$f" 2>/dev/null | cut -d= -f2)
      echo "$(basename "$f" .out) ${d:-none} distinct=$(tr ',' '\n' <<<"$d" | grep -c . | tr -d ' ')"
    done
  } >"$out/ddp_devices.txt"
  say "DDP devices: $(tr '\n' ';' <"$out/ddp_devices.txt")"
  say "step gshare: $(elapsed "$t_step" "$(now)") s (makespan $makespan s, serial $serial s)"
fi

if [[ $steps_run == *" move "* ]]; then
  t_step=$(now)
  say "move: S3 bare on GPU 0"
  job_cmd s3
  CUDA_VISIBLE_DEVICES=0 bounded "$tmo" "${cmd[@]}" >"$out/bare_s3.out" 2>"$out/bare_s3.err" ||
    say "bare s3 failed"
  ensure_daemon || exit 1
  submit s3 --gpus 2 --memory checkpoint
  id=$sub_id
  v_move=DIFFER moved_to=none
  if [[ -n $id ]]; then
    say "move: job $id on GPU 0; suspend after step $at"
    for ((i = 0; i < tmo * 5; i++)); do
      grep -q "^step $at " "$out/gshare_s3.out" 2>/dev/null && break
      ((i % 25 == 0)) && [[ $(job_state "$id") =~ $ended_re ]] && break
      sleep 0.2
    done
    timeout 60 "$gshare" --config "$daemon_cfg" suspend "$id" || say "suspend failed"
    # Until SUSPENDED with its checkpoint taken (or ended: nothing left to move).
    for ((i = 0; i < tmo * 5; i++)); do
      status_json >"$work/st.json"
      "$python" - "$work/st.json" "$id" <<'EOF' && break
import json, sys
st = json.load(open(sys.argv[1]))
j = next(j for j in st["jobs"] if j["id"] == int(sys.argv[2]))
done = j["state"] in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "LOST")
sys.exit(0 if done or j["state"] == "SUSPENDED" and j["memory"].get("checkpoints", 0) > 0 else 1)
EOF
      sleep 0.2
    done
    : >"$out/move_status.jsonl"
    say "move: $(job_state "$id"), resume on GPU 1 ($gpu1)"
    # Refused while the checkpoint is still being taken: asked again for up to 10 s.
    for ((i = 0; i < 20; i++)); do
      timeout 60 "$gshare" --config "$daemon_cfg" resume "$id" --gpu 1 2>>"$out/resume.err" && break
      sleep 0.5
    done
    [[ $i -lt 20 ]] || say "resume failed: $(tail -1 "$out/resume.err")"
    : >"$out/move_apps.txt"
    for ((i = 0; i < tmo; i++)); do
      poll_once "$out/move_status.jsonl" "$id" && break
      t=$(now)
      while IFS=', ' read -r pid uuid; do
        [[ -n $pid ]] || continue
        mine=other
        grep -qzx "GSHARE_JOB_ID=$id" "/proc/$pid/environ" 2>/dev/null && mine=mine
        echo "$t $pid $uuid $mine" >>"$out/move_apps.txt"
      done < <(timeout 20 nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv,noheader 2>/dev/null)
      sleep 1
    done
    # The GPUs of the job's processes in the last sample that had any; else its lease's GPU.
    last=$(awk '$4 == "mine" { t = $1 } END { print t }' "$out/move_apps.txt")
    if [[ -n $last ]]; then
      moved_to=$(awk -v t="$last" '$1 == t && $4 == "mine" { print $3 }' "$out/move_apps.txt" | sort -u | paste -sd+)
      say "move: the job's processes were last seen on $moved_to (nvidia-smi)"
    else
      moved_to=$("$python" - "$out/move_status.jsonl" "$id" <<'EOF'
import json, sys
gpu = "none"
for line in open(sys.argv[1]):
    try:
        s = json.loads(line)
    except ValueError:
        continue
    for g in s.get("gpus", []):
        if int(sys.argv[2]) in (g.get("holding") or []) or g.get("holder") == int(sys.argv[2]):
            gpu = g["uuid"]
print(gpu)
EOF
      )
      say "move: no process of the job in nvidia-smi; its lease was last on $moved_to (status --json)"
    fi
    v_move=$(verdict "$out/bare_s3.out" "$out/gshare_s3.out")
    say "move: $(job_state "$id"); losses $v_move; $(grep '^done' "$out/gshare_s3.out")"
  fi
  [[ $v_move == identical && -n $gpu1 && $moved_to == "$gpu1" ]] || ok=0
  say "step move: $(elapsed "$t_step" "$(now)") s"
fi

line="ddp1=$v_ddp1 ddp2=$v_ddp2 s1=$v_s1 s2=$v_s2 makespan_s=$makespan serial_s=$serial"
line+=" ddp_overlap=$overlap move=$v_move moved_to=$moved_to gpu1_uuid=${gpu1:-none}"
echo "$line" | tee "$out/summary.txt"
((ok))
