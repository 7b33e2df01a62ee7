#!/usr/bin/env bash
# Call 1: the ResNet service beside 1/3/8 trainings, trainings stopped and continued every 3 s.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 PAUSE_PERIOD=3 SERVICE_SECONDS=30 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt; }
nvidia-smi --query-gpu=name,memory.total,memory.used,clocks.sm,temperature.gpu --format=csv > $R/gpu.txt 2>&1
run r1 270 TRAININGS=1 SERVICE_CASES="alone gsmps bare mpscap" CAP_PCT=25
run r3 110 TRAININGS=3 SERVICE_CASES="gsmps"
run r8 150 TRAININGS=8 SERVICE_CASES="gsmps"
tar czf $R/raw.tgz -C $R r1 r3 r8 2>/dev/null; rm -rf $R/r1 $R/r3 $R/r8
