#!/usr/bin/env bash
# Call 1 (995641b): the SM partition at 65 % beside one, three and eight trainings; time-slicing
# and MPS with a 25 % cap beside three (the peers); trainings stopped and continued in turns.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
nvidia-smi --query-gpu=name,memory.total,driver_version,memory.used --format=csv > $R/gpu.txt 2>&1
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt; }
run a3 90 TRAININGS=3 SERVICE_CASES="gsmps" SM_PCT=65 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run a8 120 TRAININGS=8 SERVICE_CASES="gsmps" SM_PCT=65 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run a1 90 TRAININGS=1 SERVICE_CASES="gsmps" SM_PCT=65 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run b3 170 TRAININGS=3 SERVICE_CASES="bare mpscap" CAP_PCT=25 PAUSE_PERIOD=3 SERVICE_SECONDS=30
tar czf $R/raw.tgz -C $R a1 a3 a8 b3 2>/dev/null; rm -rf $R/a1 $R/a3 $R/a8 $R/b3
