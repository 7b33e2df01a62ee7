#!/usr/bin/env bash
# The ResNet service beside one training (twice) and three, gshare's default, with the
# service's census listing each backlog mark and clear (#behind_event): what the watch had
# learnt when a backlog began and how it ended. One H200.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
for r in a b; do
  OUT=$OUT/items$r PACK=0 timeout 200 bash test/bench/share_items.sh dist service1 \
    > "$OUT/items$r.log" 2>&1
done
OUT=$OUT/itemsc PACK=0 timeout 150 bash test/bench/share_items.sh dist service3 > "$OUT/itemsc.log" 2>&1
for r in a b c; do
  cat "$OUT/items$r/summary.txt"
  for f in $(find "$OUT/items$r" -name 'service_census.*'); do echo "== $f"; grep '^#behind' "$f"; done
done > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/raw.tgz" --exclude summary.txt itemsa itemsb itemsc itemsa.log itemsb.log itemsc.log
rm -rf "$OUT"/items?
cat "$OUT/summary.txt"
