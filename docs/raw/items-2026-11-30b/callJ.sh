#!/usr/bin/env bash
# Call J (19cec55): item 1 beside one training at the 70 % default right after the idle-notebook case,
# as in calls F, G and H, with the host sampled throughout (vmstat 1: CPU steal, memory; the
# CPU and memory pressure stall information): whether the service's slow stretches after that
# case are the host's.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
vmstat -t 1 > $R/vmstat.txt 2>&1 &
vm=$!
( while :; do echo "$(date +%s.%N) cpu $(head -1 /proc/pressure/cpu 2>/dev/null) mem $(head -1 /proc/pressure/memory 2>/dev/null)"; sleep 1; done ) > $R/pressure.txt 2>&1 &
pr=$!
t0=$SECONDS
OUT=$R/n NB_GIB=70 TRAIN_GIB=74 CASES="gshare" HOST_WARM_GIB=100 timeout 170 bash test/bench/notebook.sh dist > $R/notebook.txt 2>&1
echo "notebook rc=$? $((SECONDS-t0))s $(date +%s)" >> $R/summary.txt; grep -E "^(result|losses)" $R/notebook.txt >> $R/summary.txt
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt
  cat $R/$name/share/service/gsmps/service_census.* 2>/dev/null | grep "#behind" | sed "s/^/$name service /" >> $R/summary.txt; }
run i1_70 75 TRAININGS=1 SERVICE_CASES="gsmps" PAUSE_PERIOD=3 SERVICE_SECONDS=30
kill $vm $pr
tar czf $R/raw.tgz -C $R i1_70 n vmstat.txt pressure.txt 2>/dev/null; rm -rf $R/i1_70 $R/n
