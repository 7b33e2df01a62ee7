#!/usr/bin/env bash
# Issue 43's items 3 and 2, one H200. noroom twice (the service alone, then under gshare's
# default, twice in turn): the two alone runs paired with each other are the TTFT noise floor of
# the same arrivals. Then the fitting pair (GPT-2 + ResNet-50) under gshare, MPS, time-slicing.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
: > "$OUT/times.txt"
for r in a b; do
  t0=$SECONDS
  NOROOM_CASES="alone gsmps" OUT=$OUT/noroom_$r PACK=0 timeout 120 \
    bash test/bench/share_items.sh dist noroom > "$OUT/noroom_$r.log" 2>&1
  echo "noroom_$r rc=$? $((SECONDS - t0))s" >> "$OUT/times.txt"
done
t0=$SECONDS
OUT=$OUT/pair PACK=0 timeout 260 bash test/bench/share_items.sh dist pair > "$OUT/pair.log" 2>&1
echo "pair rc=$? $((SECONDS - t0))s" >> "$OUT/times.txt"
{ cat "$OUT/times.txt"
  for r in a b; do echo "== noroom_$r"; cat "$OUT/noroom_$r/summary.txt"; done
  a=$(find "$OUT/noroom_a" -name detail.txt -path '*/alone/*') b=$(find "$OUT/noroom_b" -name detail.txt -path '*/alone/*')
  echo "== alone b paired with alone a"
  python3 test/bench/llm_pairs.py "$a" "$b" --spans 0,6,12,18,30
  echo "== pair"; cat "$OUT/pair/summary.txt"; } > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" noroom_a noroom_a.log noroom_b noroom_b.log pair pair.log \
  2>/dev/null && rm -rf "$OUT/noroom_a" "$OUT/noroom_b" "$OUT/pair"
cat "$OUT/summary.txt"
