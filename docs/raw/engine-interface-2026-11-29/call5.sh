#!/usr/bin/env bash
# Call 5: the 60 % partition again, alone first.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^service" $R/$name.log >> $R/summary.txt; }
run t1_60 120 TRAININGS=1 SERVICE_CASES="alone gsmps" SM_PCT=60
run t3_60 100 TRAININGS=3 SERVICE_CASES="gsmps" SM_PCT=60
tar czf $R/raw.tgz -C $R t1_60 t3_60 2>/dev/null; rm -rf $R/t1_60 $R/t3_60
