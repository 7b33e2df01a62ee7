#!/usr/bin/env bash
# Call 2: issue 43 items 2, 3 and 4 at this tree.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin PYTHONUNBUFFERED=1
R=$OUT; G=$PWD/dist; export PATH=$G:$PATH
t0=$SECONDS
OUT=$R/p PARTS=pair PAIR_CASES="gsmps mps bare" timeout 240 bash test/bench/share_paths.sh dist > $R/pair.log 2>&1; echo "pair rc=$? $((SECONDS-t0))s" >> $R/summary.txt
t0=$SECONDS
OUT=$R/n SERVICE=llm LLM_RATE=2.5 LLM_UTIL=0.92 ARRIVE_AFTER=6 AFTER_SECONDS=12 SERVICE_SECONDS=25 PARTS=service TRAININGS=1 SERVICE_CASES="alone gsmps" timeout 150 bash test/bench/share_paths.sh dist > $R/noroom.log 2>&1; echo "noroom rc=$? $((SECONDS-t0))s" >> $R/summary.txt
t0=$SECONDS
OUT=$R/nb NB_GIB=70 TRAIN_GIB=74 CASES="gshare alone" HOST_WARM_GIB=100 timeout 200 bash test/bench/notebook.sh $G > $R/nb.log 2>&1; echo "notebook rc=$? $((SECONDS-t0))s" >> $R/summary.txt
grep result $R/nb.log >> $R/summary.txt
gshare daemon stop >/dev/null 2>&1
tar czf $R/raw.tgz -C $R p n nb 2>/dev/null; rm -rf $R/p $R/n $R/nb
