#!/usr/bin/env bash
# Call 3: the 60 % partition beside one training again, 70 % beside three and eight; the LLM
# decode service outside MPS again and beside an MPS-capped training; trainings stopped and
# continued in turns through the window.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt; }
run q1 90 TRAININGS=1 SERVICE_CASES="gsmps" SM_PCT=60 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run q3 90 TRAININGS=3 SERVICE_CASES="gsmps" SM_PCT=70 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run q8 100 TRAININGS=8 SERVICE_CASES="gsmps" SM_PCT=70 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run m1 220 SERVICE=llm LLM_RATE=2.5 TRAININGS=1 SERVICE_CASES="gsiso mpscap" CAP_PCT=25 PAUSE_PERIOD=4 SERVICE_SECONDS=40
tar czf $R/raw.tgz -C $R q1 q3 q8 m1 2>/dev/null; rm -rf $R/q1 $R/q3 $R/q8 $R/m1
