#!/usr/bin/env bash
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
R=$OUT/raw; mkdir -p $R
export GSHARE_TRACE_SWAP=1 LOG_LEVEL=debug
OUT=$R CASES="${CASES:-gshare}" RUN_SECONDS=${RUN_SECONDS:-120} timeout 500 bash test/bench/pool_services.sh dist > $OUT/summary.txt 2> $OUT/stderr.txt
echo "rc=$?" >> $OUT/summary.txt
cd $R && tar czf $OUT/raw.tgz . 2>/dev/null
