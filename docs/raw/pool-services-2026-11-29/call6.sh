#!/usr/bin/env bash
# Call 6 (at 9f3095a): the pooled services on the final tree (module loads wait for room).
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
R=$OUT
mkdir -p $R/pool
GSHARE_TRACE_SWAP=1 LOG_LEVEL=debug OUT=$R/pool CASES=gshare RUN_SECONDS=55 HOST_WARM_GIB=60 timeout 190 bash test/bench/pool_services.sh dist > $R/pool_summary.txt 2> $R/pool_stderr.txt
echo "pool rc=$?" >> $R/summary.txt; grep -E "result|host_warm" $R/pool_summary.txt >> $R/summary.txt
tar czf $R/raw.tgz -C $R pool 2>/dev/null; rm -rf $R/pool
