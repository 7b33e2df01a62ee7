#!/usr/bin/env bash
# Call C (7504930), as call A, with the notebook also without staging: issue 43 item 2 (the fitting pair: gshare's MPS backend, MPS, time-slicing)
# and item 4 (the idle 70 GiB notebook, a 74 GiB training arriving).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv > $R/gpu.txt 2>&1
t0=$SECONDS
OUT=$R/p PARTS=pair PAIR_CASES="gsmps mps bare" timeout 300 bash test/bench/share_paths.sh dist > $R/pair.log 2>&1
echo "pair rc=$? $((SECONDS-t0))s" >> $R/summary.txt; cat $R/p/share/summary.txt >> $R/summary.txt 2>/dev/null
t0=$SECONDS
(vmstat -w 2 > $R/vmstat.txt 2>&1 &) ; free -g > $R/free.txt
OUT=$R/n NB_GIB=70 TRAIN_GIB=74 CASES="alone gshare nostage" HOST_WARM_GIB=100 timeout 330 bash test/bench/notebook.sh dist > $R/notebook.txt 2>&1
echo "notebook rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(result|losses)" $R/notebook.txt >> $R/summary.txt
pkill vmstat; free -g >> $R/free.txt
tar czf $R/raw.tgz -C $R p n 2>/dev/null; rm -rf $R/p $R/n
