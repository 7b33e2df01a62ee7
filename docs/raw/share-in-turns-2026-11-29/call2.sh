#!/usr/bin/env bash
# Call 2: the 60 % partition beside 1/3/8 trainings; the LLM decode service beside one training
# (gshare's MPS backend, the service outside MPS, time-slicing); trainings stopped and continued
# in turns through the window.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt; }
run p1 90 TRAININGS=1 SERVICE_CASES="gsmps" SM_PCT=60 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run p3 90 TRAININGS=3 SERVICE_CASES="gsmps" SM_PCT=60 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run p8 100 TRAININGS=8 SERVICE_CASES="gsmps" SM_PCT=60 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run l1 300 SERVICE=llm LLM_RATE=2.5 TRAININGS=1 SERVICE_CASES="gsmps gsiso bare" PAUSE_PERIOD=4 SERVICE_SECONDS=40
tar czf $R/raw.tgz -C $R p1 p3 p8 l1 2>/dev/null; rm -rf $R/p1 $R/p3 $R/p8 $R/l1
