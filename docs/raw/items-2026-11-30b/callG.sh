#!/usr/bin/env bash
# Call G (f5bc5f2): the idle-notebook case again (item 4, second call at the pin-ahead change);
# where a 74 GiB job's fixed seconds go bare and under gshare (mem_startup.sh, pre/post); item 1
# beside one training at the 70 % default.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
t0=$SECONDS
OUT=$R/n NB_GIB=70 TRAIN_GIB=74 CASES="alone gshare" HOST_WARM_GIB=100 TRAIN_TRACE=1 timeout 230 bash test/bench/notebook.sh dist > $R/notebook.txt 2>&1
echo "notebook rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(result|losses)" $R/notebook.txt >> $R/summary.txt
for c in alone gshare; do grep "trace start\|trace ready\|trace gpu 0 \|trace done" $R/n/${c}_train.err | sed "s/^/$c /" >> $R/summary.txt; done
t0=$SECONDS
OUT=$R/s GIB=74 ROUNDS=3 CASES="bare_solo gshare_solo" timeout 150 bash test/bench/mem_startup.sh dist > $R/startup.log 2>&1
echo "startup rc=$? $((SECONDS-t0))s" >> $R/summary.txt; cat $R/s/mem_startup/summary.txt >> $R/summary.txt
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt
  cat $R/$name/share/service/gsmps/service_census.* 2>/dev/null | grep "#behind" | sed "s/^/$name service /" >> $R/summary.txt; }
run i1_70 75 TRAININGS=1 SERVICE_CASES="gsmps" PAUSE_PERIOD=3 SERVICE_SECONDS=30
tar czf $R/raw.tgz -C $R n s i1_70 2>/dev/null; rm -rf $R/n $R/s $R/i1_70
