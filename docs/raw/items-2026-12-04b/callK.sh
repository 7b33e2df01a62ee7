#!/usr/bin/env bash
# Item 2's fitting pair from a common start (share_paths.sh PAIR_PREPARED=1: both jobs build
# their models on the CPU, the makespan counts from the go given once both are ready), under
# gshare's MPS backend and plain MPS only (no alone runs, no time-slicing: the session's last
# device seconds). One H200.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
PARTS=pair PAIR_PREPARED=1 PAIR_ALONE=0 PAIR_CASES="gsmps mps" OUT=$OUT/pp \
  timeout 125 bash test/bench/share_paths.sh dist > "$OUT/pp.log" 2>&1
echo "pp rc=$?" >> "$OUT/pp.log"
cp "$OUT/pp/share/summary.txt" "$OUT/summary.txt" 2>/dev/null
(cd "$OUT/pp" && tar czf "$OUT/raw.tgz" .) && rm -rf "$OUT/pp"
grep -E "^pair|makespan|rc=" "$OUT/pp.log" | tail -8
