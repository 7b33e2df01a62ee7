#!/usr/bin/env bash
# nvml_view.sh GSHARE_DIR: what NVML tells a job about its GPU (docs/memory.md, "What a job
# sees"), next to what the driver tells it, on the GPU machine. A `--memory off` job holds
# FIXED_GIB (default 20) GiB; meanwhile a job under the swap engine holding OWN_GIB (default 10)
# GiB asks torch.cuda.mem_get_info, `nvidia-smi --query-gpu`, NVML by ctypes and pynvml
# (nvml_view.py view), then the same job under `--memory off`. nvidia-smi outside gshare is
# asked before and during the hold. All of these run on GPU 0. On a machine of several GPUs
# it then shows what jobs on GPU 1 and on two GPUs are told (nvidia-smi -L, the query, the
# viewer). Writes everything to stdout; runs a daemon of its own.
# Environment: FIXED_GIB, OWN_GIB, PYTHON.
set -u
me=nvml_view
source "$(dirname "$0")/mem_common.sh"
mem_setup "$@"
fixed="${FIXED_GIB:-20}" own="${OWN_GIB:-10}"
smi() { nvidia-smi --query-gpu=index,uuid,memory.total,memory.used,memory.free \
  --format=csv,noheader,nounits; }

cfg="$work/gshare.toml"
ENGINE=swap write_config "$cfg" "$work" 20s
daemon_up "$cfg" || exit 1
echo "nvidia-smi outside gshare, nothing running: $(smi)"
hold_out="$work/hold.out"
timeout -k 10 300 "$gshare" --config "$cfg" run -J fixed --gpu 0 --memory off -- \
  "$python" "$bench/nvml_view.py" hold "$fixed" 120 >"$hold_out" 2>&1 &
job_pids+=($!)
for ((i = 0; i < 600; i++)); do grep -q holding "$hold_out" && break; sleep 0.1; done
grep -q holding "$hold_out" || { say "the holder did not start: $(tail -3 "$hold_out")"; exit 1; }
echo "nvidia-smi outside gshare, ${fixed} GiB held by job 'fixed': $(smi)"
for engine in swap off; do
  echo "== job 'viewer' holding ${own} GiB, --memory $engine"
  bounded 120 "$gshare" --config "$cfg" run -J "viewer-$engine" --gpu 0 --memory "$engine" -- \
    "$python" "$bench/nvml_view.py" view "$own"
done
echo "== nvidia-smi as a job of its own (no memory of its own), --memory swap"
bounded 60 "$gshare" --config "$cfg" run -J smi --gpu 0 -- nvidia-smi
if (($(nvidia-smi -L | wc -l) >= 2)); then
  echo "== several GPUs: nvidia-smi -L outside gshare"
  nvidia-smi -L
  echo "== gshare run --gpu 1 -- nvidia-smi -L; nvidia-smi --query-gpu"
  bounded 60 "$gshare" --config "$cfg" run -J smi-gpu1 --gpu 1 -- sh -c 'nvidia-smi -L;
    nvidia-smi --query-gpu=index,uuid,memory.total,memory.used --format=csv,noheader'
  echo "== gshare run --gpus 2 -- nvidia-smi -L"
  bounded 60 "$gshare" --config "$cfg" run -J smi-gpus2 --gpus 2 -- nvidia-smi -L
  echo "== job 'viewer-gpu1' holding ${own} GiB on GPU 1, --memory swap"
  bounded 120 "$gshare" --config "$cfg" run -J viewer-gpu1 --gpu 1 -- \
    "$python" "$bench/nvml_view.py" view "$own"
fi
echo "== gshare status while 'fixed' holds"
timeout 20 "$gshare" --config "$cfg" status
