#!/usr/bin/env bash
# Call 2 (dd8a353: the first backlog rule, a gap under a quarter of the usual one or a busy
# spell four usual ones long; the wide bound shared): the partition at 60, 65 and 70 % beside
# eight and three trainings, 65 % beside one; the service's census counts its backlogs (#behind).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt
  cat $R/$name/share/service/gsmps/service_census.* 2>/dev/null | grep "#behind" | sed "s/^/$name service /" >> $R/summary.txt; }
run e8_65 100 TRAININGS=8 SERVICE_CASES="gsmps" SM_PCT=65 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run e8_70 100 TRAININGS=8 SERVICE_CASES="gsmps" SM_PCT=70 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run e3_65 90 TRAININGS=3 SERVICE_CASES="gsmps" SM_PCT=65 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run e3_70 90 TRAININGS=3 SERVICE_CASES="gsmps" SM_PCT=70 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run e1_65 80 TRAININGS=1 SERVICE_CASES="gsmps" SM_PCT=65 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run e8_60 100 TRAININGS=8 SERVICE_CASES="gsmps" PAUSE_PERIOD=3 SERVICE_SECONDS=30
tar czf $R/raw.tgz -C $R e8_65 e8_70 e3_65 e3_70 e1_65 e8_60 2>/dev/null; rm -rf $R/e*_*/
