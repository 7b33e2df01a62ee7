#!/usr/bin/env bash
# Two H200s: gshare's multi-GPU bench (test/bench/multi_gpu.sh, steps bare and gshare) with the
# MPS backend on ([mps] mode "auto", the default): two DDP jobs of `submit --gpus 2` queued with
# two one-GPU trainings. The one-GPU jobs may become MPS clients of their GPU's control daemon;
# the two-GPU jobs run outside MPS (a process reaches one control daemon). Losses must equal
# the bare runs'. The daemon's log says which job ran how.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=index,name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
( while sleep 2; do nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader; echo --; done ) > "$OUT/apps.txt" 2>&1 &
mon=$!
t0=$SECONDS
MPS_MODE=auto STEPS="bare gshare" RUN_TIMEOUT=240 timeout 480 bash test/bench/multi_gpu.sh dist > "$OUT/multi.log" 2>&1
echo "multi_gpu rc=$? $((SECONDS - t0))s" > "$OUT/times.txt"
kill "$mon" 2>/dev/null
{ cat "$OUT/times.txt"; grep -hE 'ddp1=|_s=|seconds' "$OUT/multi.log" | tail -20
  find "$OUT" -name daemon.log -exec grep -hiE 'mps|client|outside|COMPLETED|gang' {} + | cut -c1-240 | head -60
  grep -c "M+C\|mps" "$OUT/apps.txt"; sort -u "$OUT/apps.txt" | grep -v -- -- | awk -F, '{print $1, $3}' | sort | uniq -c | head -20
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
