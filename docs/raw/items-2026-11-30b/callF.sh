#!/usr/bin/env bash
# Call F (dc0615c): the idle-notebook case at the pin-ahead change (b788df4), each training step
# traced; the gshare case again with GSHARE_TRACE_SWAP=1 (each pin-ahead, eviction and swap-in
# on the shims' stderr); item 1 beside three trainings at the 70 % default.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
t0=$SECONDS
OUT=$R/n NB_GIB=70 TRAIN_GIB=74 CASES="alone gshare" HOST_WARM_GIB=100 TRAIN_TRACE=1 timeout 230 bash test/bench/notebook.sh dist > $R/notebook.txt 2>&1
echo "notebook rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(result|losses)" $R/notebook.txt >> $R/summary.txt
grep "trace gpu 0 \|trace ready" $R/n/gshare_train.err >> $R/summary.txt
t0=$SECONDS
GSHARE_TRACE_SWAP=1 OUT=$R/nt NB_GIB=70 TRAIN_GIB=74 CASES="gshare" HOST_WARM_GIB=0 TRAIN_TRACE=1 timeout 150 bash test/bench/notebook.sh dist > $R/notebook_trace.txt 2>&1
echo "notebook_trace rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(result|losses)" $R/notebook_trace.txt >> $R/summary.txt
grep "trace gpu 0 \|trace ready" $R/nt/gshare_train.err >> $R/summary.txt
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt
  cat $R/$name/share/service/gsmps/service_census.* 2>/dev/null | grep "#behind" | sed "s/^/$name service /" >> $R/summary.txt; }
run i1_70x3 90 TRAININGS=3 SERVICE_CASES="gsmps" PAUSE_PERIOD=3 SERVICE_SECONDS=30
tar czf $R/raw.tgz -C $R n nt i1_70x3 2>/dev/null; rm -rf $R/n $R/nt $R/i1_70x3
