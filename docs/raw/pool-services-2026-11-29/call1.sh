#!/usr/bin/env bash
# Calls 1-3 (call 1 at c71d940; calls 2-3 at bc82190's tree): CASES as named in the section.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
R=$OUT/raw; mkdir -p $R
export GSHARE_TRACE_SWAP=1 LOG_LEVEL=debug
OUT=$R CASES="${CASES:-alone gshare}" RUN_SECONDS=${RUN_SECONDS:-90} timeout 560 bash test/bench/pool_services.sh dist > $OUT/summary.txt 2> $OUT/stderr.txt
echo "rc=$?" >> $OUT/summary.txt
cd $R && tar czf $OUT/raw.tgz . 2>/dev/null
