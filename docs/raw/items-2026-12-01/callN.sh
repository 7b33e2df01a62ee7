#!/usr/bin/env bash
# Issue 43's item 1 again at the one-turn default, one H200: the ResNet service beside eight,
# one and three GPT-2 trainings under gshare (share_items.sh service8 service1 service3), the
# trainings' census summed (#beside_denied: refused turns, counted once per wait).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
OUT=$OUT/items PACK=0 timeout 330 bash test/bench/share_items.sh dist service8 service1 service3 > "$OUT/items.log" 2>&1
echo "items rc=$?" > "$OUT/times.txt"
{ cat "$OUT/times.txt" "$OUT/items/summary.txt"
  for s in service8 service1 service3; do
    find "$OUT/items/$s" -name 'census.*' -exec grep -hE '^#(beside_denied|narrowed) ' {} + |
      awk -v s="$s" '{t[$1]+=$2} END {for (k in t) print s " trainings " k, t[k]}'
  done
} > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" items items.log 2>/dev/null && rm -rf "$OUT/items"
cat "$OUT/summary.txt"
