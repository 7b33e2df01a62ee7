# Shell helpers of a private MPS control daemon for the benchmarks that compare against MPS
# (share_paths.sh, mps_floor.sh); sourced after mem_common.sh (its `say`), not run. The caller
# calls mps_down from its EXIT trap, so that no MPS daemon outlives it.

mps_dir=""
mps_pid=""
# mps_up DIR: a private MPS control daemon; its pipe and log folders under a new /tmp folder,
# exported. Logs go to DIR when it stops. Returns 1 when it did not start.
mps_up() {
  mps_dir="$(mktemp -d /tmp/share-mps.XXXXXX)" || return 1
  mkdir -p "$mps_dir/pipe" "$mps_dir/log"
  export CUDA_MPS_PIPE_DIRECTORY="$mps_dir/pipe" CUDA_MPS_LOG_DIRECTORY="$mps_dir/log"
  mps_keep="$1"
  if ! timeout 30 nvidia-cuda-mps-control -d; then
    say "nvidia-cuda-mps-control -d failed"
    mps_down
    return 1
  fi
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -s $mps_dir/pipe/nvidia-cuda-mps-control.pid ]] && break
    sleep 0.1
  done
  mps_pid=$(cat "$mps_dir/pipe/nvidia-cuda-mps-control.pid" 2>/dev/null)
  say "MPS control daemon up (pid ${mps_pid:-?}, pipes $mps_dir/pipe)"
}

# mps_down: quit the control daemon (it stops its server), wait up to 20 s for both, copy logs.
mps_down() {
  [[ -n $mps_dir ]] || return 0
  echo quit | timeout 20 nvidia-cuda-mps-control >/dev/null 2>&1
  local i
  for ((i = 0; i < 100; i++)); do
    pgrep -f "^nvidia-cuda-mps-(control|server)" >/dev/null || break
    sleep 0.2
  done
  pgrep -af "^nvidia-cuda-mps-(control|server)" >&2 && say "warning: MPS still running after quit"
  [[ -n ${mps_keep:-} ]] && cp "$mps_dir/log/"*.log "$mps_keep/" 2>/dev/null
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  rm -rf "$mps_dir"
  mps_dir="" mps_pid="" mps_keep=""
}
