#!/usr/bin/env bash
# `gshare suspend` / `resume` on a real GPU: a test/bench/mem_train.py job of GIB GiB is
# suspended mid-training (its lease taken, its whole GPU state checkpointed by the driver,
# its processes stopped), the GPU's used memory is read, another job that needs most of the GPU
# runs meanwhile, then the first is resumed and must finish with the losses of its bare run.
#
#   test/bench/mem_suspend.sh GSHARE_DIR        (GSHARE_DIR holds gshare and libgshare.so)
#
# Steps: 1. the job bare (reference losses); 2. a daemon, the job under `gshare run`; once it has
# logged SUSPEND_AT_STEP steps, `gshare suspend`; wait until status says checkpointed and stopped
# (the daemon log gives the checkpoint time); nvidia-smi's used memory before and after;
# 3. OTHER_GIB GiB of mem_train.py under gshare while the first is suspended (it must fit only
# because the first left the GPU); 4. `gshare resume`; the job finishes; losses compared.
# One line (summary.txt and stdout):
#   gib=<G> checkpoint_ms=<x> restore_ms=<x> used_before_mib=<n> used_suspended_mib=<n>
#   other=ok|FAILED losses=identical|DIFFER runs=ok|FAILED
# Env: OUT (default ./out; results in $OUT/mem_suspend/), PYTHON, GIB (default 30), OTHER_GIB
# (default 60), STEPS (default 120), SUSPEND_AT_STEP (default 20), ENGINE (default swap),
# RUN_TIMEOUT (default 300).
# Cost on an H100: ~25 s bare, ~60-80 s for the rest (checkpoint ~1.8 GB/s, restore ~5 GB/s).
# Exit: 0 when every run succeeded and the losses are identical, 1 otherwise, 2 on usage errors.
set -uo pipefail

me=mem_suspend
# shellcheck source=mem_common.sh source-path=SCRIPTDIR
source "$(dirname "$0")/mem_common.sh"
mem_setup "$@"

gib=${GIB:-30}
other_gib=${OTHER_GIB:-60}
steps=${STEPS:-120}
at=${SUSPEND_AT_STEP:-20}
tmo=${RUN_TIMEOUT:-300}
out="${OUT:-./out}/mem_suspend"
mkdir -p "$out"
train=("$python" "$bench/mem_train.py" --gib "$gib" --steps "$steps" --log-every 1)
used_mib() { timeout 20 nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }

say "1/4 bare run (${gib} GiB, $steps steps)"
bounded "$tmo" "${train[@]}" >"$out/bare.out" 2>"$out/bare.err" || say "bare run failed"

cfg="$work/config.toml"
ENGINE=${ENGINE:-swap} write_config "$cfg" "$work" 20s
daemon_up "$cfg" || exit 1
say "2/4 under gshare; suspend after step $at"
job_start A "$out/gshare.out" "$tmo" "$gshare" --config "$cfg" run -J suspended -- "${train[@]}"
for ((i = 0; i < tmo * 5; i++)); do
  grep -q "^step $at " "$out/gshare.out" 2>/dev/null && break
  sleep 0.2
done
used_before=$(used_mib)
id=$(status_json | "$python" -c 'import json, sys
print(next(j["id"] for j in json.load(sys.stdin)["jobs"] if j.get("name") == "suspended"))')
"$gshare" --config "$cfg" suspend "$id" || say "suspend failed"
for ((i = 0; i < 600; i++)); do
  status_json >"$work/st.json"
  "$python" - "$work/st.json" "$id" <<'EOF' && break
import json, sys
st = json.load(open(sys.argv[1]))
j = next(j for j in st["jobs"] if j["id"] == int(sys.argv[2]))
sys.exit(0 if j["state"] == "SUSPENDED" and j["memory"].get("checkpoints", 0) > 0 else 1)
EOF
  sleep 0.2
done
sleep 1
used_suspended=$(used_mib)
say "used memory: $used_before MiB before, $used_suspended MiB suspended"

say "3/4 another job of ${other_gib} GiB while suspended"
other=FAILED
bounded "$tmo" "$gshare" --config "$cfg" run -J other -- "$python" "$bench/mem_train.py" \
  --gib "$other_gib" --steps 30 >"$out/other.out" 2>"$out/other.err" && other=ok

say "4/4 resume"
"$gshare" --config "$cfg" resume "$id" || say "resume failed"
jobs_wait run "$work/times.txt"
rc=$(awk '/_end /{print $3}' "$work/times.txt")
cp "$work/state/daemon.log" "$out/daemon.log" 2>/dev/null
daemon_down

ck=$(grep -o 'checkpointed in [0-9]*' "$out/daemon.log" | awk '{s+=$3} END {print s+0}')
rs=$(grep -o 'restored in [0-9]*' "$out/daemon.log" | awk '{s+=$3} END {print s+0}')
losses=DIFFER
if diff <(grep '^step ' "$out/bare.out") <(grep '^step ' "$out/gshare.out") >/dev/null &&
   grep -q '^step ' "$out/bare.out"; then losses=identical; fi
runs=ok
[[ $rc == 0 ]] || runs="FAILED($rc)"
line="gib=$gib checkpoint_ms=$ck restore_ms=$rs used_before_mib=$used_before used_suspended_mib=$used_suspended other=$other losses=$losses runs=$runs"
echo "$line" | tee "$out/summary.txt"
[[ $losses == identical && $runs == ok && $other == ok ]]
