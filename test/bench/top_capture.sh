#!/usr/bin/env bash
# top_capture.sh GSHARE_DIR OUTDIR: what `gshare top` shows during two trainings that do not fit
# the GPU together (2 x GIB GiB, default 45, of mem_train.py under the swap engine, so they take
# turns with their memory swapped): a batch frame (`top -b -n 1`) every EVERY seconds (default
# 15) into OUTDIR/top-<seconds>.txt, the live view in a real terminal when tmux is there
# (OUTDIR/top-live.txt, tmux capture-pane), `gshare status` at the end, and each training's
# output. Runs a daemon of its own. Environment: GIB, STEPS (default 200), EVERY, PYTHON.
set -u
me=top_capture
source "$(dirname "$0")/mem_common.sh"
out_dir="${2:?usage: top_capture.sh GSHARE_DIR OUTDIR}"
mem_setup "$1"
mkdir -p "$out_dir"
gib="${GIB:-45}" steps="${STEPS:-200}" every="${EVERY:-15}"
cfg="$work/gshare.toml"
ENGINE=swap write_config "$cfg" "$work" 20s
daemon_up "$cfg" || exit 1
t0=$(date +%s)
for name in train-a train-b; do
  job_start "$name" "$out_dir/$name.out" 600 "$gshare" --config "$cfg" run -J "$name" -- \
    "$python" "$bench/mem_train.py" --gib "$gib" --steps "$steps"
  sleep 5
done
frame=0
while (($(jobs_alive) > 0)); do
  sleep "$every"
  s=$(($(date +%s) - t0))
  timeout 20 "$gshare" --config "$cfg" top -b -n 1 >"$out_dir/top-${s}s.txt" 2>&1
  frame=$((frame + 1))
  if ((frame == 2)) && command -v tmux >/dev/null; then
    sock="$work/tmux.sock"
    TERM=xterm tmux -S "$sock" new-session -d -x 160 -y 30 \
      "$gshare --config $cfg top -d 0.5" && sleep 3 &&
      tmux -S "$sock" capture-pane -p >"$out_dir/top-live.txt"
    tmux -S "$sock" kill-server 2>/dev/null
  fi
done
jobs_wait run "$out_dir/times.txt"
timeout 20 "$gshare" --config "$cfg" status >"$out_dir/status-end.txt" 2>&1
echo "$me: done; frames in $out_dir" >&2
