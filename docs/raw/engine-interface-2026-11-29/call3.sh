#!/usr/bin/env bash
# Call 3 (2 GPUs): tensor parallel and DDP at this tree, under swap and off.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT; G=$PWD/dist
nvidia-smi -L > $R/gpus.txt 2>&1
t0=$SECONDS
OUT=$R/tp CASES="nccl_cumem1 ipc" ENGINES="swap off" STEPS="bare gshare beside" RUN_TIMEOUT=90 TRAIN_STEPS=400 timeout 270 bash test/gpu/tp_share.sh $G > $R/tp.log 2>&1; echo "tp rc=$? $((SECONDS-t0))s" >> $R/summary.txt
grep "^case=" $R/tp.log >> $R/summary.txt
t0=$SECONDS
OUT=$R/mg ENGINE=off STEPS="bare gshare" DDP_STEPS=100 timeout 230 bash test/bench/multi_gpu.sh $G > $R/mg.log 2>&1; echo "multi_gpu rc=$? $((SECONDS-t0))s" >> $R/summary.txt
tail -3 $R/mg.log >> $R/summary.txt
tar czf $R/raw.tgz -C $R tp mg 2>/dev/null; rm -rf $R/tp $R/mg
