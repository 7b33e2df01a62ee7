#!/usr/bin/env bash
# The main job: two real PyTorch trainings (a ResNet-18 and a small GPT) started together
# under `gshare run`, sharing one GPU under gshare's lease; `gshare status` is shown while
# they run and at the end. Without a GPU both train on the CPU (small sizes), still through
# gshare. Usage: [PYTHON=python3] examples/demo.sh [BIN_DIR]   (default: build/src)
set -uo pipefail
cd "$(dirname "$0")/.."
bin="$(cd "${1:-build/src}" && pwd)"
args=()
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "demo: no NVIDIA GPU here: training on the CPU, small sizes" >&2
  args=(--device cpu)
fi
out="${TMPDIR:-/tmp}/gshare-demo"
mkdir -p "$out"
py="${PYTHON:-python3}"
"$bin/gshare" run -J cnn -- "$py" examples/train_cnn.py "${args[@]}" >"$out/cnn.log" 2>&1 &
cnn=$!
"$bin/gshare" run -J gpt -- "$py" examples/train_gpt.py "${args[@]}" >"$out/gpt.log" 2>&1 &
gpt=$!
sleep 5
"$bin/gshare" status
wait "$cnn"; rc_cnn=$?
wait "$gpt"; rc_gpt=$?
echo
tail -n 2 "$out/cnn.log"
tail -n 2 "$out/gpt.log"
echo
"$bin/gshare" status
echo "demo: cnn exit $rc_cnn, gpt exit $rc_gpt (logs in $out)"
[ "$rc_cnn" -eq 0 ] && [ "$rc_gpt" -eq 0 ]
