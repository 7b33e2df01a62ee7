#!/usr/bin/env bash
# Two GPUs (nvidia-h200-x2): gshare's MPS backend with a server per GPU. The ResNet service
# (batch 12, 30 s, trainings stopped and continued every 3 s) on GPU 0 beside one GPT-2
# training there, a second training alone on GPU 1; time-slicing (bare) and gshare (gsmps),
# in one call. Then what each training kept, and the daemon's MPS servers mid-run.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
nvidia-smi --query-gpu=index,name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
nvidia-smi topo -m >> "$OUT/gpu.txt" 2>&1
OUT=$OUT/i PARTS=service SERVICE_BATCH=12 TRAININGS=2 TRAIN_GPUS="1 0" SERVICE_GPU=0 \
  PAUSE_PERIOD=3 SERVICE_SECONDS=30 SERVICE_CASES="bare gsmps" \
  timeout 300 bash test/bench/share_paths.sh dist > "$OUT/i.log" 2>&1
echo "share_paths rc=$?" >> "$OUT/i.log"
{ grep -hE '^(service|phases)|rc=' "$OUT/i.log"
  for c in bare gsmps; do
    d=$(find "$OUT/i" -path "*service/$c/priority/*" -name times.txt -printf '%h\n' | head -1)
    [[ -n $d ]] || continue
    echo "== $c ($d)"
    for k in 1 2; do   # a training's steps/s before the service and during its window
      python3 - "$d/train$k.log" "$d/service.out" "$k" <<'PY'
import sys
steps = [tuple(map(float, l.split()[:2])) for l in open(sys.argv[1]) if l[0].isdigit()]
ws = we = None
for l in open(sys.argv[2]):
    if l.startswith("window_start"): ws = float(l.split()[1])
    if l.startswith("window_end"): we = float(l.split()[1])
def rate(a, b):
    s = [t for _, t in steps if a <= t <= b]
    return (len(s) - 1) / (s[-1] - s[0]) if len(s) > 2 else float("nan")
before = rate(steps[min(10, len(steps) - 1)][1], ws) if ws else float("nan")
during = rate(ws, we) if ws else float("nan")
print(f"train{sys.argv[3]} steps/s before={before:.2f} window={during:.2f} (stopped half of it)")
PY
    done
    [[ -f $d/status_mid.json ]] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('mps', json.dumps(d['daemon'].get('mps')))" "$d/status_mid.json"
    grep -h 'MPS\|mps' "$d/daemon.log" 2>/dev/null | head -8
  done
  find "$OUT/i" -name mps_view.txt -exec cat {} \; | head -40; } > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" i i.log && rm -rf "$OUT/i"
cat "$OUT/summary.txt"
