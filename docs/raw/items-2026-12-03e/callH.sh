#!/usr/bin/env bash
# The arrival rule's placement as the driver sees it (test/bench/mps_arrival.sh; call G's run of
# it stopped at a bug of its own wait loop, fixed).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
OUT=$OUT/arrival timeout 100 bash test/bench/mps_arrival.sh dist > "$OUT/arrival.txt" 2>&1
echo "arrival rc=$?" >> "$OUT/arrival.txt"
cat "$OUT/arrival.txt"
grep -E "python|mps-server" "$OUT"/arrival/*.smi
