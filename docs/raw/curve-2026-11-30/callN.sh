#!/usr/bin/env bash
# Call N (e40e695 binaries: batch_cap "never" by default): a training arriving beside the ResNet
# service, uncapped (the default) and capped for its life ("beside_service"); the no-room LLM
# service again, its daemon at log level debug (one line per lease message).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
vmstat -t 1 >"$OUT/vmstat.txt" 2>&1 &
vm=$!
OUT=$OUT/n timeout 300 bash test/bench/share_items.sh dist arrive1
LOG_LEVEL=debug OUT=$OUT/n2 timeout 250 bash test/bench/share_items.sh dist noroom
kill $vm
cat "$OUT/n/summary.txt" "$OUT/n2/summary.txt" >"$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callN_all.tgz" n n2 vmstat.txt && rm -rf "$OUT/n" "$OUT/n2" "$OUT/vmstat.txt"
cat "$OUT/summary.txt"
