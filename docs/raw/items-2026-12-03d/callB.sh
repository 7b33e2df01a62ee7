#!/usr/bin/env bash
# Item 1's ResNet service beside one training again (call A's service1 ran out of its 75 s on a
# cold machine), then issue 43's item 3 as call F (items-2026-12-03b) ran it: cases alone, gsmps
# and gslowiso (the service an MPS client, the arriving training asking for isolation: outside
# MPS while it waits for room), three rounds with seeds 12-14, the daemon logs at debug.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
OUT=$OUT/s1 PACK=1 timeout 90 bash test/bench/share_items.sh dist service1 > "$OUT/s1.log" 2>&1
echo "service1 rc=$?" >> "$OUT/s1/summary.txt"
mv "$OUT/s1/raw.tgz" "$OUT/s1.raw.tgz" 2>/dev/null
cp "$OUT/s1/summary.txt" "$OUT/s1.summary.txt"; rm -rf "$OUT/s1"; cat "$OUT/s1.summary.txt"
LOG_LEVEL=debug ARRIVE_PREPARED=1 NOROOM_ROUNDS=3 NOROOM_SEED0=11 NOROOM_CASES="alone gsmps gslowiso" \
  OUT=$OUT/items timeout 490 bash test/bench/share_items.sh dist noroom > "$OUT/items.log" 2>&1
echo "items rc=$?" >> "$OUT/items/summary.txt"
(cd "$OUT/items" && tar czf "$OUT/logs.tgz" --remove-files noroom.r*.log)
(cd "$OUT/items" && tar czf "$OUT/raw.tgz" --exclude summary.txt .)
grep -v '^  ' "$OUT/items/summary.txt"
