#!/usr/bin/env bash
# Beside turns (GSHARE_PRIORITY_BESIDE, lease/beside_turns.h) on the H200: the ResNet service
# (batch 12, ~50 % duty, 30 s window, trainings paused and continued every 3 s) beside
# TRAININGS (default 8) GPT-2 trainings under gshare's MPS backend (share_paths.sh's gsmps),
# once per entry of ORDER (default "none 3 1 3 none"; none: the variable unset, the shim's
# default; an entry T:B runs T trainings with BESIDE=B). Call G ran ORDER="8:1 8:none 3:1
# 3:none 8:1 8:none" with a shim whose default was no bound; call H ORDER="8:none 8:0 3:none
# 3:0 8:none 8:0" with one whose default is one turn (0: no bound), call J ORDER="1:none 8:none
# 8:none 1:none" STOP_AFTER=230 with that one. Call F ran callF.sh. A case
# that would begin after STOP_AFTER s (default 430) is skipped and named.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
mkdir -p "$OUT/f"
i=0
for b in ${ORDER:-none 3 1 3 none}; do
  i=$((i + 1))
  if (( SECONDS > ${STOP_AFTER:-430} )); then echo "skipped $i ($b) at ${SECONDS}s" >> "$OUT/f/skipped.txt"; continue; fi
  n=${TRAININGS:-8}
  if [[ $b == *:* ]]; then n=${b%%:*}; b=${b#*:}; fi
  if [[ $b == none ]]; then unset BESIDE; else export BESIDE=$b; fi
  t0=$SECONDS c=$i-t$n-b$b
  OUT=$OUT/f/$c PARTS=service SERVICE_BATCH=12 TRAININGS=$n PAUSE_PERIOD=3 \
    SERVICE_SECONDS=30 SERVICE_CASES=gsmps timeout 150 bash test/bench/share_paths.sh dist \
    > "$OUT/f/$c.log" 2>&1
  echo "case $c rc=$? $((SECONDS - t0))s" >> "$OUT/f/times.txt"
done
{ cat "$OUT/f/times.txt" "$OUT/f/skipped.txt" 2>/dev/null
  for d in "$OUT"/f/*/; do
    n=$(basename "$d"); echo "== $n"; grep -hE '^(service|phases)' "$OUT/f/$n.log"
    for k in behind behind_ms behind_capped beside_denied narrowed; do
      find "$d" -name 'census.*' -exec grep -h "^#$k " {} + | awk -v k="$k" '{s+=$2} END {print "#" k, s+0}'
    done
    find "$d" -name 'service_census.*' -exec grep -h '^#behind' {} + | sed 's/^/service /'
  done; } > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" f && rm -rf "$OUT/f"
cat "$OUT/summary.txt"
