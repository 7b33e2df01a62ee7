#!/usr/bin/env bash
# Where the driver puts a lower job that reaches the GPU while a higher MPS client of gshare's
# left it no room ([mps] join_free_percentage, policy/mps_choice.h ChooseAtArrival): the
# process types nvidia-smi shows (M+C: an MPS client; C: outside MPS), with the daemon's lines.
#
#   bash test/bench/mps_arrival.sh GSHARE_DIR
#
# GSHARE_DIR holds gshare and libgshare.so. A service (`gshare run -p 10`, PyTorch) takes
# HOLD_PCT % (default 90) of the GPU's free memory and holds it; then a batch job (`-p 0`)
# starts, makes its context and one small tensor, and sleeps 6 s while nvidia-smi is read; the
# same batch job again once the service has ended (it joins MPS then). Prints
# `arrival case=<beside|after> pid=<p> type=<M+C|C|?>`, then the daemon's placement lines.
# Needs PyTorch (PYTHON) and nvidia-cuda-mps-control. About 40 s. With OUT set, nvidia-smi's
# tables, the jobs' output and the daemon's log are copied there.
set -uo pipefail
me=mps_arrival
. "$(dirname "$0")/mem_common.sh"
mem_setup "$@"
hold_pct=${HOLD_PCT:-90}
MPS_MODE=auto LOG_LEVEL=info write_config "$work/config.toml" "$work" 20s
daemon_up "$work/config.toml" || exit 1
run() { timeout -k 5 120 "$gshare" --config "$work/config.toml" run -q "$@"; }

run -p 10 -J service -- "$python" -c "
import time, torch, os
free, total = torch.cuda.mem_get_info()
x = torch.empty(int(free * $hold_pct / 100), dtype=torch.uint8, device='cuda')
x.fill_(1); torch.cuda.synchronize()
open('$work/held', 'w').close()
while not os.path.exists('$work/stop'): time.sleep(0.1)
" >"$work/service.out" 2>&1 &
svc=$!
for ((i = 0; i < 600; i++)); do [[ -e $work/held ]] && break; sleep 0.1; done
[[ -e $work/held ]] || { say "the service did not take its memory"; cat "$work/service.out" >&2; exit 1; }
sleep 1  # its memory report reaches the daemon

batch() {  # batch CASE: one batch job; nvidia-smi read while it sleeps
  local c=$1
  run -p 0 -J "batch_$c" -- "$python" -c "
import os, time, torch
torch.zeros(1, device='cuda'); torch.cuda.synchronize()
open('$work/$c.pid', 'w').write(str(os.getpid()))
time.sleep(6)
" >"$work/$c.out" 2>&1 &
  local b=$! p="" t="?"
  for ((i = 0; i < 600; i++)); do [[ -s $work/$c.pid ]] && break; sleep 0.1; done
  p=$(cat "$work/$c.pid" 2>/dev/null)
  nvidia-smi >"$work/$c.smi" 2>&1
  [[ -n $p ]] && t=$(awk -v p="$p" '$0 ~ "^\\|" && $5 == p { print $6 }' "$work/$c.smi" | head -1)
  wait "$b"
  echo "arrival case=$c pid=${p:-?} type=${t:-?}"
}
batch beside
touch "$work/stop"
wait "$svc"
batch after
sed -n 's/^.*\(job [0-9]*: \(MPS client\|outside MPS\).*\)$/  daemon: \1/p' "$work/state/daemon.log"
[[ -n ${OUT:-} ]] && mkdir -p "$OUT" && cp "$work"/*.smi "$work"/*.out "$work/state/daemon.log" "$OUT/" 2>/dev/null
true
