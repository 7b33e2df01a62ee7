#!/usr/bin/env bash
# Call 4 (e5aa8e4, as call 3): 70 % beside one, three and eight trainings again; 60 % beside three.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt
  cat $R/$name/share/service/gsmps/service_census.* 2>/dev/null | grep "#behind" | sed "s/^/$name service /" >> $R/summary.txt; }
run g8_70 90 TRAININGS=8 SERVICE_CASES="gsmps" SM_PCT=70 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run g3_70 75 TRAININGS=3 SERVICE_CASES="gsmps" SM_PCT=70 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run g1_70 70 TRAININGS=1 SERVICE_CASES="gsmps" SM_PCT=70 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run g3_60 75 TRAININGS=3 SERVICE_CASES="gsmps" PAUSE_PERIOD=3 SERVICE_SECONDS=30
tar czf $R/raw.tgz -C $R g8_70 g3_70 g1_70 g3_60 2>/dev/null; rm -rf $R/g*_*/
