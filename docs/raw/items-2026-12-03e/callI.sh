#!/usr/bin/env bash
# Both sides of [mps] join_free_percentage (15) on the GPU: test/bench/mps_arrival.sh with the
# service holding 80 % of the free memory (about 19 % of the GPU left: the batch job joins),
# then 90 % again (about 10 % left: outside, as in call H).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
for pct in 80 90; do
  HOLD_PCT=$pct OUT=$OUT/arrival$pct timeout 80 bash test/bench/mps_arrival.sh dist > "$OUT/arrival$pct.txt" 2>&1
  echo "arrival hold=$pct rc=$?" >> "$OUT/arrival$pct.txt"
  cat "$OUT/arrival$pct.txt"
  grep -E "python|mps-server" "$OUT"/arrival$pct/*.smi
done
