#!/usr/bin/env bash
# Call Q (810eaa3's daemon and shim): is the ResNet service's tail its launching thread's CPU?
# service3 as it runs by default, with the service given one whole core (both hyperthreads) and
# the trainings the other CPUs, and with the trainings at nice 10; service1 and service8 pinned.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
q=$OUT/q && mkdir -p "$q"
{ nproc; lscpu; lscpu -e; } >"$q/cpu.txt" 2>&1
last=$(($(nproc) - 1))
svc=$(cat /sys/devices/system/cpu/cpu$last/topology/thread_siblings_list)
rest=$(python3 -c "
import sys
def ex(s):
    out=set()
    for part in s.split(','):
        a,_,b=part.partition('-'); out.update(range(int(a),int(b or a)+1))
    return out
n=int(sys.argv[1]); s=ex(sys.argv[2])
print(','.join(str(c) for c in range(n) if c not in s))" "$(nproc)" "$svc")
echo "service_cpus=$svc train_cpus=$rest" | tee "$q/pins.txt"
run() {   # run NAME SET [VAR=VALUE...]
  local name=$1 set=$2; shift 2
  env "$@" OUT="$q/$name" timeout 200 bash test/bench/share_items.sh dist "$set" >/dev/null 2>&1
  sed "s/^/$name /" "$q/$name/summary.txt" >>"$q/summary.txt"
}
run plain3 service3
run pin3 service3 SERVICE_CPUS="$svc" TRAIN_CPUS="$rest"
run nice3 service3 TRAIN_NICE=10
run pin1 service1 SERVICE_CPUS="$svc" TRAIN_CPUS="$rest"
run pin8 service8 SERVICE_CPUS="$svc" TRAIN_CPUS="$rest"
cp "$q/summary.txt" "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/callQ_all.tgz" q && rm -rf "$q"
cat "$OUT/summary.txt"
