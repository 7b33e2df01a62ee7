#!/usr/bin/env bash
# Call A (7504930): issue 43 item 2 (the fitting pair: gshare's MPS backend, MPS, time-slicing)
# and item 4 (the idle 70 GiB notebook, a 74 GiB training arriving).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv > $R/gpu.txt 2>&1
t0=$SECONDS
OUT=$R/p PARTS=pair PAIR_CASES="gsmps mps bare" timeout 300 bash test/bench/share_paths.sh dist > $R/pair.log 2>&1
echo "pair rc=$? $((SECONDS-t0))s" >> $R/summary.txt; cat $R/p/share/summary.txt >> $R/summary.txt 2>/dev/null
t0=$SECONDS
OUT=$R/n NB_GIB=70 TRAIN_GIB=74 CASES="alone gshare" HOST_WARM_GIB=100 timeout 230 bash test/bench/notebook.sh dist > $R/notebook.txt 2>&1
echo "notebook rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(result|losses)" $R/notebook.txt >> $R/summary.txt
tar czf $R/raw.tgz -C $R p n 2>/dev/null; rm -rf $R/p $R/n
