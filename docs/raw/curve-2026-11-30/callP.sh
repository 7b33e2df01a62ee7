#!/usr/bin/env bash
# Call P (e40e695's daemon and shim, rebuilt at f511057): arrive1's two gshare cases again, the
# same settings as `share_items.sh dist arrive1` without its `alone` run, in the device time left.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
mkdir -p "$OUT/p"
PARTS=service SERVICE_BATCH=12 TRAININGS=1 ARRIVE_AFTER=10 AFTER_SECONDS=12 SERVICE_SECONDS=45 \
  SERVICE_CASES="gsmps gsmpsbeside" CAP_PCT=25 OUT=$OUT/p/arrive1 \
  timeout 200 bash test/bench/share_paths.sh dist >"$OUT/p/arrive1.log" 2>&1
grep -h '^service' "$OUT/p/arrive1.log" >"$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callP_all.tgz" p && rm -rf "$OUT/p"
cat "$OUT/summary.txt"
