#!/usr/bin/env bash
# Call I (19cec55): item 1 beside one training at the 70 % default twice,
# with bare time-slicing and MPS (priority 1, cap 25 %) between them, each case with the GPU's
# clock samples: whether the service's slow stretches seen in calls G and H follow the clocks.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT
run() { local name=$1 lim=$2; shift 2; t0=$SECONDS
  env "$@" OUT=$R/$name PARTS=service SERVICE_BATCH=12 timeout $lim bash test/bench/share_paths.sh dist > $R/$name.log 2>&1
  echo "$name rc=$? $((SECONDS-t0))s" >> $R/summary.txt; grep -E "^(service|phases)" $R/$name.log >> $R/summary.txt
  cat $R/$name/share/service/gsmps/service_census.* 2>/dev/null | grep "#behind" | sed "s/^/$name service /" >> $R/summary.txt; }
run i1_70a 75 TRAININGS=1 SERVICE_CASES="gsmps" PAUSE_PERIOD=3 SERVICE_SECONDS=30
run i1_peers 140 TRAININGS=1 SERVICE_CASES="bare mpscap" CAP_PCT=25 PAUSE_PERIOD=3 SERVICE_SECONDS=30
run i1_70b 75 TRAININGS=1 SERVICE_CASES="gsmps" PAUSE_PERIOD=3 SERVICE_SECONDS=30
for f in $(find $R -name gpu_samples.csv); do echo "$f $(awk -F', ' '{c[$2]++; if ($5 != "0x0000000000000000") r[$5]++} END {for (k in c) printf "sm%s:%d ", k, c[k]; for (k in r) printf "why%s:%d ", k, r[k]}' $f)" >> $R/summary.txt; done
tar czf $R/raw.tgz -C $R i1_70a i1_peers i1_70b 2>/dev/null; rm -rf $R/i1_70a $R/i1_peers $R/i1_70b
