#!/usr/bin/env bash
# The LLM decode service beside one GPT-2 training, one H200: what each of gshare's settings
# trades (rate 2.5/s, KV pool at half the GPU, 30 s window, the training stopped and continued
# every 3 s): alone; MPS with the training at client priority 1 and a 25 % cap (the best peer);
# gshare's MPS backend at its default partition (the training on 70 % of the SMs while the
# service is busy); the service asking for isolation (the training fills its gaps only); every
# training capped at 25 % (batch_cap "always"); then the partition at SM_PCT=30.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,memory.total,compute_mode --format=csv > "$OUT/gpu.txt" 2>&1
common=(SERVICE=llm LLM_RATE=2.5 SERVICE_SECONDS=30 PAUSE_PERIOD=3 PARTS=service TRAININGS=1 CAP_PCT=25)
t0=$SECONDS
env "${common[@]}" OUT="$OUT/a" SERVICE_CASES="alone mpscap gsmps gsiso gsmpscap" DEADLINE=300 \
  timeout 390 bash test/bench/share_paths.sh dist > "$OUT/a.log" 2>&1
echo "a rc=$? $((SECONDS - t0))s" > "$OUT/times.txt"
t0=$SECONDS
env "${common[@]}" OUT="$OUT/b" SERVICE_CASES="gsmps" SM_PCT=30 \
  timeout 120 bash test/bench/share_paths.sh dist > "$OUT/b.log" 2>&1
echo "b (SM_PCT=30) rc=$? $((SECONDS - t0))s" >> "$OUT/times.txt"
{ cat "$OUT/times.txt"
  for p in a b; do echo "== $p"; grep -hE '^(service|phases)' "$OUT/$p.log"
    find "$OUT/$p" -name 'census.*' -path '*gs*' -exec grep -hE '^#(beside_denied|behind|narrowed) ' {} + |
      awk '{s[$1]+=$2} END {for (k in s) print "trainings " k, s[k]}'; done
} > "$OUT/summary.txt" 2>&1
tar -C "$OUT" -czf "$OUT/call_raw.tgz" a b a.log b.log 2>/dev/null && rm -rf "$OUT/a" "$OUT/b"
cat "$OUT/summary.txt"
