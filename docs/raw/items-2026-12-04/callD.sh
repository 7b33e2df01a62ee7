#!/usr/bin/env bash
# What the wait for room at arrival gives a training when room comes while the service still
# runs: the ResNet service (batch 12, a request every 12 ms, 30 s) holding 92 % of the free
# memory in a ballast it gives back 14 s into its window; a GPT-2 training (model built
# beforehand) let go 6 s into it. alone; gsmps (gshare's default: the training arrives with
# ~7 % of the GPU free and waits at its first CUDA call, with no context, for room to join);
# gsmpsout (join_wait_seconds = 0: it runs outside MPS at once, for its life, in the service's
# gaps once room comes: the rule before the wait).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
PARTS=service TRAININGS=1 SERVICE_BATCH=12 ARRIVE_AFTER=6 ARRIVE_PREPARED=1 AFTER_SECONDS=10 \
  SERVICE_SECONDS=30 SERVICE_CASES="${CASES:-alone gsmps gsmpsout}" \
  SERVICE_ARGS="--ballast-fraction 0.92 --ballast-free-at 14" \
  OUT=$OUT/room timeout ${TMO:-540} bash test/bench/share_paths.sh dist > "$OUT/room.log" 2>&1
echo "room rc=$?" >> "$OUT/room.log"
for f in $(find "$OUT/room" -name daemon.log); do
  echo "== $f"; grep -E "MPS client|outside MPS|waits at its first|handoff" "$f"
done > "$OUT/placement.txt" 2>&1
(cd "$OUT/room" && tar czf "$OUT/raw.tgz" .) && rm -rf "$OUT/room"
grep -E "^(case|service|#)|rc=" "$OUT/room.log" | grep -v "^#   " | tail -20
cat "$OUT/placement.txt"
