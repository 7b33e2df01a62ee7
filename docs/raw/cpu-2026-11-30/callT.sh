#!/usr/bin/env bash
# Call T (810eaa3's daemon and shim), in the device time left: eight and one trainings beside
# the ResNet service (item 1), the no-room LLM service (item 3) and the idle notebook (item 4)
# again, under one limit of 390 s (the notebook is cut short if the others run long).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
mkdir -p "$OUT/t"
OUT=$OUT/t timeout 390 bash test/bench/share_items.sh dist service8 service1 noroom notebook >/dev/null 2>&1
cp "$OUT/t/summary.txt" "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callT_all.tgz" t && rm -rf "$OUT/t"
cat "$OUT/summary.txt"
