#!/usr/bin/env bash
# Call B (7504930): issue 43 item 1 beside one training at the 70 % default, with time-slicing and
# MPS (priority 1, 25 % cap) in the same call; item 3 (the LLM service whose KV pool leaves no
# room, a training arriving 6 s into its window).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt
  cat $R/$name/share/service/gsmps/service_census.* 2>/dev/null | grep "#behind" | sed "s/^/$name service /" >> $R/summary.txt; }
run h1_70 75 TRAININGS=1 SERVICE_CASES="gsmps" PAUSE_PERIOD=3 SERVICE_SECONDS=30
run h1_peers 140 TRAININGS=1 SERVICE_CASES="bare mpscap" CAP_PCT=25 PAUSE_PERIOD=3 SERVICE_SECONDS=30
t0=$SECONDS
OUT=$R/nr SERVICE=llm LLM_RATE=2.5 LLM_UTIL=0.92 ARRIVE_AFTER=6 AFTER_SECONDS=12 SERVICE_SECONDS=25 PARTS=service TRAININGS=1 SERVICE_CASES="alone gsmps" timeout 240 bash test/bench/share_paths.sh dist > $R/nr.log 2>&1
echo "noroom rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases|llm)" $R/nr.log >> $R/summary.txt
find $R/nr -name daemon.log -path "*gsmps*" -exec grep -E "handoff|COMPLETED|bound" {} + >> $R/summary.txt 2>/dev/null
tar czf $R/raw.tgz -C $R h1_70 h1_peers nr 2>/dev/null; rm -rf $R/h1_70 $R/h1_peers $R/nr
