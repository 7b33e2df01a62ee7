#!/usr/bin/env bash
# Call U (7f665fb's daemon and shim): the LLM decode service alone, bare and as gshare's MPS
# client, with CUDA graphs and eager (the MPS floor of item 1's LLM half), and the ResNet service
# alone, bare, for 60 s with its CPU sampled (whether its slow stretches come without gshare).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
mkdir -p "$OUT/u"
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,compute_mode --format=csv > "$OUT/u/gpu.txt" 2>&1
OUT=$OUT/u/graphs timeout 170 bash test/bench/share_items.sh dist floor >/dev/null 2>&1
OUT=$OUT/u/eager LLM_ARGS=--eager timeout 170 bash test/bench/share_items.sh dist floor >/dev/null 2>&1
OUT=$OUT/u/r60 timeout 130 bash test/bench/share_items.sh dist alone60 >/dev/null 2>&1
for s in graphs eager r60; do echo "== $s"; cat "$OUT/u/$s/summary.txt"; done > "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callU_all.tgz" u && rm -rf "$OUT/u"
cat "$OUT/summary.txt"
