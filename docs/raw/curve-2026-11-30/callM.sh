#!/usr/bin/env bash
# Call M (bf972ea binaries, right after call L on the same machine): item 2's fitting pair and
# item 3's no-room LLM service, with vmstat; every folder packed into one file.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
vmstat -t 1 >"$OUT/vmstat.txt" 2>&1 &
vm=$!
OUT=$OUT/m timeout 560 bash test/bench/share_items.sh dist pair noroom
kill $vm
cp "$OUT/m/summary.txt" "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callM_all.tgz" m vmstat.txt && rm -rf "$OUT/m" "$OUT/vmstat.txt"
cat "$OUT/summary.txt"
