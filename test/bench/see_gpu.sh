#!/usr/bin/env bash
# see_gpu.sh GSHARE_DIR OUTDIR: the timeline and the metrics of two trainings that do not fit the
# GPU together (2 x GIB GiB, default 45, of mem_train.py under the swap engine: they take turns,
# their memory swapped), the second at priority 5. While they run, the Prometheus endpoint
# ([metrics] listen) is scraped every EVERY seconds (default 10) into OUTDIR/metrics-<s>s.txt
# and `gshare top` draws a batch frame into OUTDIR/top-<s>s.txt;
# at the end `gshare timeline` writes OUTDIR/timeline.json (Chrome trace) and timeline.svg, and
# `gshare acct` OUTDIR/acct.txt. Runs a daemon of its own. Environment: GIB, STEPS (default 80),
# EVERY, PYTHON, PORT (default 9464).
set -u
me=see_gpu
source "$(dirname "$0")/mem_common.sh"
out_dir="${2:?usage: see_gpu.sh GSHARE_DIR OUTDIR}"
mem_setup "$1"
mkdir -p "$out_dir"
gib="${GIB:-45}" steps="${STEPS:-80}" every="${EVERY:-10}" port="${PORT:-9464}"
cfg="$work/gshare.toml"
ENGINE=swap write_config "$cfg" "$work" 20s
printf '[metrics]\nlisten = "127.0.0.1:%s"\n' "$port" >>"$cfg"
daemon_up "$cfg" || exit 1
t0=$(date +%s)
prio=0
for name in train-a train-b; do
  job_start "$name" "$out_dir/$name.out" 600 "$gshare" --config "$cfg" run -J "$name" -p "$prio" \
    -- "$python" "$bench/mem_train.py" --gib "$gib" --steps "$steps"
  prio=5
  sleep 8
done
while (($(jobs_alive) > 0)); do
  s=$(($(date +%s) - t0))
  "$python" -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=5).read().decode())" \
    >"$out_dir/metrics-${s}s.txt" 2>&1
  timeout 20 "$gshare" --config "$cfg" top -b -n 1 >"$out_dir/top-${s}s.txt" 2>&1
  sleep "$every"
done
jobs_wait run "$out_dir/times.txt"
timeout 30 "$gshare" --config "$cfg" timeline -o "$out_dir/timeline.json"
timeout 30 "$gshare" --config "$cfg" timeline --svg -o "$out_dir/timeline.svg"
timeout 30 "$gshare" --config "$cfg" acct -o JobID,JobName,Priority,Elapsed,GPUTime,LeaseWait,PeakMem,Swaps,ExitCode >"$out_dir/acct.txt" 2>&1
echo "$me: done; files in $out_dir" >&2
