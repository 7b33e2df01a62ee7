#!/usr/bin/env bash
# Call 5 (at f18cb25): the pooled services with the shared pool pinned while idle (PinPoolLater).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
R=$OUT
mkdir -p $R/pool
GSHARE_TRACE_SWAP=1 LOG_LEVEL=debug OUT=$R/pool CASES=gshare RUN_SECONDS=90 timeout 360 bash test/bench/pool_services.sh dist > $R/pool_summary.txt 2> $R/pool_stderr.txt
echo "pool rc=$?" >> $R/summary.txt; grep result $R/pool_summary.txt >> $R/summary.txt
