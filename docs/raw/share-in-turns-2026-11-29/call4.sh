#!/usr/bin/env bash
# Call 4: gshare's defaults (the partition's new default, 60 %) beside one, three and eight
# trainings; MPS with a 25 % cap beside eight (the peer); the LLM decode service outside MPS a
# third time; trainings stopped and continued in turns through the window.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt; }
run d1 90 TRAININGS=1 SERVICE_CASES="gsmps" PAUSE_PERIOD=3 SERVICE_SECONDS=30
run d3 90 TRAININGS=3 SERVICE_CASES="gsmps" PAUSE_PERIOD=3 SERVICE_SECONDS=30
run d8 180 TRAININGS=8 SERVICE_CASES="gsmps mpscap" CAP_PCT=25 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run i1 110 SERVICE=llm LLM_RATE=2.5 TRAININGS=1 SERVICE_CASES="gsiso" PAUSE_PERIOD=4 SERVICE_SECONDS=40
tar czf $R/raw.tgz -C $R d1 d3 d8 i1 2>/dev/null; rm -rf $R/d1 $R/d3 $R/d8 $R/i1
