#!/usr/bin/env bash
# Call E (7504930): where the notebook case's first training step waits: the gshare case with
# the daemon's log and each step traced, with gshare's MPS backend (default) and with [mps] off.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
for v in mps nomps; do
  t0=$SECONDS
  extra=(); [[ $v == nomps ]] && extra=(MPS_MODE=off)
  env "${extra[@]}" OUT=$R/$v NB_GIB=70 TRAIN_GIB=74 CASES="gshare" HOST_WARM_GIB=100 TRAIN_TRACE=1 timeout 150 bash test/bench/notebook.sh dist > $R/$v.txt 2>&1
  echo "$v rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(result|losses)" $R/$v.txt >> $R/summary.txt
  grep "trace gpu 0 \|trace ready" $R/$v/gshare_train.err >> $R/summary.txt
done
tar czf $R/raw.tgz -C $R mps nomps 2>/dev/null; rm -rf $R/mps $R/nomps
