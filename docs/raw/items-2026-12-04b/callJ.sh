#!/usr/bin/env bash
# The ResNet service beside one and three trainings, gshare's default, at two builds in one
# call: dist0 (the spell a yielding client reads is overdue one forecast gap after the
# forecast return) and dist (overdue one usual gap after it, PublishQuiet), in the order
# s1 A B, s3 B A, s1 B A. One H200.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
runs="1:service1:dist0 2:service1:dist 3:service3:dist 4:service3:dist0 5:service1:dist 6:service1:dist0"
for r in $runs; do
  IFS=: read -r k set d <<< "$r"
  (( SECONDS > 460 )) && { echo "== run $k $set $d skipped at ${SECONDS}s" >> "$OUT/summary.txt"; continue; }
  OUT=$OUT/run$k PACK=0 timeout 110 bash test/bench/share_items.sh "$d" "$set" > "$OUT/run$k.log" 2>&1
  { echo "== run $k $set $d"; grep -v '#behind_event' "$OUT/run$k/summary.txt"; } >> "$OUT/summary.txt"
done
tar -C "$OUT" -czf "$OUT/raw.tgz" --exclude summary.txt $(cd "$OUT" && ls -d run*)
rm -rf "$OUT"/run?
grep -E "^(== run|phases)" "$OUT/summary.txt"
