#!/usr/bin/env bash
# Call 4 (at 6a6fbae): the pooled services again, then the LLM
# decode service beside one training with a 35 % partition.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
R=$OUT
mkdir -p $R/pool
GSHARE_TRACE_SWAP=1 LOG_LEVEL=debug OUT=$R/pool CASES=gshare RUN_SECONDS=80 HOST_WARM_GIB=0 timeout 330 bash test/bench/pool_services.sh dist > $R/pool_summary.txt 2> $R/pool_stderr.txt
echo "pool rc=$?" >> $R/summary.txt; grep result $R/pool_summary.txt >> $R/summary.txt
t0=$SECONDS
env OUT=$R/llm35 PARTS=service TRAININGS=1 SERVICE=llm LLM_RATE=2.5 SERVICE_SECONDS=25 SERVICE_CASES="alone gsmps" SM_PCT=35 timeout 240 bash test/bench/share_paths.sh dist > $R/llm35.log 2>&1
echo "llm35 rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^service|^train|kept" $R/llm35.log >> $R/summary.txt
