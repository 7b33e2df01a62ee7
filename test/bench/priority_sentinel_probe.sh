#!/usr/bin/env bash
# What the priority lanes cost the higher job itself: the service (prio_service.py, ResNet-50,
# batch 32, a request every 12 ms for 15 s) alone and bare, then under `gshare run -p 10`
# beside a training under `gshare run -p 0` that is stopped (SIGSTOP) once it has run 20
# steps: the service is watched (it marks itself busy, its shim clears the mark), yet nothing
# competes for the GPU; and between the two, under `gshare run -p 10` alone (gshare's cost
# without the lanes). Run from the repository root on the GPU machine:
#   bash test/bench/priority_sentinel_probe.sh     (gshare from ./dist, PyTorch at /opt/torch)
# Prints one line per case: the name and the service's JSON result line.
export PATH=/opt/torch/.venv/bin:$PATH
B=test/bench; G=$PWD/dist/gshare
svc() { timeout 120 python3 $B/prio_service.py --batch 32 --seconds 15 --warmup 50 2>/dev/null | grep '"kind"'; }
echo "alone $(svc)"
echo "gshare-alone $(timeout 120 "$G" run -p 10 --name s0 -- python3 $B/prio_service.py --batch 32 --seconds 15 --warmup 50 2>/dev/null | grep '"kind"')"
timeout 300 "$G" run -p 0 --name t -- python3 $B/prio_train.py --steps 100000 --log /tmp/t.log >/tmp/t.out 2>&1 &
for _ in $(seq 60); do [[ -s /tmp/t.log && $(wc -l </tmp/t.log) -ge 20 ]] && break; sleep 1; done
tp=$(pgrep -f prio_train.py | head -1)
kill -STOP "$tp"; sleep 1
echo "watched-stopped-training $(timeout 120 "$G" run -p 10 --name s -- python3 $B/prio_service.py --batch 32 --seconds 15 --warmup 50 2>/dev/null | grep '"kind"')"
kill -CONT "$tp"; kill -TERM "$tp"; wait
"$G" daemon stop >/dev/null 2>&1
