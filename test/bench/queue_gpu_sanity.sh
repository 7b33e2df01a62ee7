#!/bin/bash
# GPU sanity of the queue: submitted jobs and a `gshare run` share the GPU; a daemon killed
# with -9 mid-training re-adopts the running job, which completes with the bare run's losses.
export PATH=/opt/torch/.venv/bin:$PATH
G=$PWD/dist/gshare
export GSHARE_SOCKET=/tmp/gq/s.sock GSHARE_STATE_DIR=/tmp/gq/state
rm -rf /tmp/gq
set -x
python3 examples/hello_gpu.py > $OUT/bare_hello.txt
python3 examples/train_cnn.py --steps 300 --log-every 50 > $OUT/bare_cnn.txt
a=$($G submit -J hello-a -- python3 examples/hello_gpu.py)
b=$($G submit -J hello-b -t 1 --after $a -- python3 examples/hello_gpu.py)
$G run -J hello-run -- python3 examples/hello_gpu.py > $OUT/run_hello.txt; echo "run rc=$?"
$G wait $a $b; echo "wait rc=$?"
$G logs $a > $OUT/sub_a.txt; $G logs $b > $OUT/sub_b.txt
c=$($G submit -J cnn -- python3 examples/train_cnn.py --steps 300 --log-every 50)
sleep 12
$G queue
dpid=$($G status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["pid"])')
kill -9 $dpid; sleep 2
$G queue; echo "queue after restart rc=$?"
sleep 3; $G status $c
$G wait $c; echo "wait cnn rc=$?"
$G logs $c > $OUT/sub_cnn.txt
$G queue -a
cat $GSHARE_STATE_DIR/daemon.log
set +x
echo "== checksums"; grep -ho 'checksum=[^ ]*' $OUT/bare_hello.txt $OUT/run_hello.txt $OUT/sub_a.txt $OUT/sub_b.txt
echo "== cnn losses"; diff <(grep '^step' $OUT/bare_cnn.txt) <(grep '^step' $OUT/sub_cnn.txt) && echo "losses identical"
$G daemon stop
