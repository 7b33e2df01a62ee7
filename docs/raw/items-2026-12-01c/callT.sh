#!/usr/bin/env bash
# Issue 43's item 3 with the CPU-start control, and item 1's isolated decode service against the
# gap rule's knobs, one H200. noroom: the no-room LLM service alone; with a training whose process
# sees no GPU (its imports and model on the CPU, then a failed CUDA call: the start alone); the
# training bare (it fails at its first allocation); under gshare's default. llm1: the decode
# service (KV pool at half the GPU) alone and isolated (GSHARE_MPS=0) beside one training with
# GAP_FILL=50 and INFLIGHT_US=50, then isolated at the defaults.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
t0=$SECONDS
NOROOM_CASES="alone cpustart bare gsmps" OUT=$OUT/items PACK=0 timeout 230 \
  bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "noroom rc=$? $((SECONDS - t0))s" > "$OUT/times.txt"
t0=$SECONDS
LLM_CASES="alone gsiso" GAP_FILL=50 INFLIGHT_US=50 OUT=$OUT/knobs PACK=0 timeout 150 \
  bash test/bench/share_items.sh dist llm1 > "$OUT/knobs.log" 2>&1
echo "llm1 knobs rc=$? $((SECONDS - t0))s" >> "$OUT/times.txt"
t0=$SECONDS
LLM_CASES="gsiso" OUT=$OUT/defaults PACK=0 timeout 90 \
  bash test/bench/share_items.sh dist llm1 > "$OUT/defaults.log" 2>&1
echo "llm1 defaults rc=$? $((SECONDS - t0))s" >> "$OUT/times.txt"
{ cat "$OUT/times.txt"; echo "== noroom"; cat "$OUT/items/summary.txt"
  echo "== llm1 GAP_FILL=50 INFLIGHT_US=50"; cat "$OUT/knobs/summary.txt"
  echo "== llm1 defaults"; cat "$OUT/defaults/summary.txt"; } > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" items items.log knobs knobs.log defaults defaults.log \
  2>/dev/null && rm -rf "$OUT/items" "$OUT/knobs" "$OUT/defaults"
cat "$OUT/summary.txt"
