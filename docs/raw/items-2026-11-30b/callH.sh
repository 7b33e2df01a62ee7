#!/usr/bin/env bash
# Call H (c8d0d44): the idle-notebook case with the same CPU time per step in both cases
# (alone's cpu_ms); item 1 beside one training at the 70 % default, with bare time-slicing and
# MPS (priority 1, cap 25 %) in the same call.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
t0=$SECONDS
OUT=$R/n NB_GIB=70 TRAIN_GIB=74 CASES="alone gshare" HOST_WARM_GIB=100 TRAIN_TRACE=1 timeout 230 bash test/bench/notebook.sh dist > $R/notebook.txt 2>&1
echo "notebook rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(result|losses)" $R/notebook.txt >> $R/summary.txt
for c in alone gshare; do grep "trace start\|trace ready\|trace gpu 0 \|trace done" $R/n/${c}_train.err | sed "s/^/$c /" >> $R/summary.txt; done
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt
  cat $R/$name/share/service/gsmps/service_census.* 2>/dev/null | grep "#behind" | sed "s/^/$name service /" >> $R/summary.txt; }
run i1_70 75 TRAININGS=1 SERVICE_CASES="gsmps" PAUSE_PERIOD=3 SERVICE_SECONDS=30
run i1_peers 140 TRAININGS=1 SERVICE_CASES="bare mpscap" CAP_PCT=25 PAUSE_PERIOD=3 SERVICE_SECONDS=30
tar czf $R/raw.tgz -C $R n i1_70 i1_peers 2>/dev/null; rm -rf $R/n $R/i1_70 $R/i1_peers
