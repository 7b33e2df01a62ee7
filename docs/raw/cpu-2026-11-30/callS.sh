#!/usr/bin/env bash
# Call S (810eaa3's daemon and shim; cpu_sampler.py with steal time and a fixed-work probe):
# the idle notebook (item 4), the fitting pair (item 2), then one and three trainings beside the
# ResNet service (item 1), to see whether a stretch of slow requests comes with steal time or a
# slower probe. /proc/stat's cpu lines before and after the call.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
mkdir -p "$OUT/s"
grep '^cpu' /proc/stat >"$OUT/s/stat_before.txt"
OUT=$OUT/s timeout 560 bash test/bench/share_items.sh dist service3 service1 notebook pair >/dev/null 2>&1
grep '^cpu' /proc/stat >"$OUT/s/stat_after.txt"
cp "$OUT/s/summary.txt" "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callS_all.tgz" s && rm -rf "$OUT/s"
cat "$OUT/summary.txt"
