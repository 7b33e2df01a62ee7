#!/usr/bin/env bash
# The ResNet service beside eight GPT-2 trainings (share_items.sh service8), one H200, two shims
# in turns: dist2/ (a gap's turn taken by a client without a beside turn submits on the SM
# partition) and dist/ (it submits on every SM), ORDER (default "dist2 dist dist2 dist").
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
i=0
for d in ${ORDER:-dist2 dist dist2 dist}; do
  i=$((i + 1))
  if (( SECONDS > ${STOP_AFTER:-300} )); then echo "skipped $i ($d) at ${SECONDS}s" >> "$OUT/times.txt"; continue; fi
  t0=$SECONDS
  OUT=$OUT/r$i-$d PACK=0 timeout 130 bash test/bench/share_items.sh "$d" service8 > "$OUT/r$i-$d.log" 2>&1
  echo "r$i $d rc=$? $((SECONDS - t0))s" >> "$OUT/times.txt"
done
{ cat "$OUT/times.txt"
  for r in "$OUT"/r*/; do n=$(basename "$r"); echo "== $n"; grep -hE '^(service|phases)' "$r/summary.txt"
    find "$r" -name 'census.*' -exec grep -hE '^#(beside_denied|narrowed) ' {} + |
      awk '{t[$1]+=$2} END {for (k in t) print "trainings " k, t[k]}'
  done; } > "$OUT/summary.txt" 2>&1
# As run, the next line packed nothing (its globs were expanded in the working folder, not in
# $OUT); the per-run logs came back and are kept as callO_logs.tgz.
(cd "$OUT" && tar -czf call_raw.tgz r[0-9]*-*/) && rm -rf "$OUT"/r*/
cat "$OUT/summary.txt"
