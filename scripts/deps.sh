# Sourced by scripts/setup.sh and scripts/test.sh: installs what gshare needs to build and
# test on Debian 12 when it is missing (apt-get; as root, or through sudo).
gshare_build_packages=(g++ cmake ninja-build pkg-config python3 libcli11-dev libsqlite3-dev
  libtomlplusplus-dev libspdlog-dev libfmt-dev nlohmann-json3-dev doctest-dev libncurses-dev)

gshare_apt_install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null; then
    echo "gshare: missing packages and no apt-get: ${missing[*]}" >&2
    return 1
  fi
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "gshare: installing ${missing[*]}" >&2
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# CI's fuzzing (scripts/test.sh, test/fuzz/): clang and libFuzzer's runtime.
gshare_fuzz_packages=(clang-14 libclang-rt-14-dev)
# CI's source checks (scripts/check_format.sh; check_thread_safety.sh uses clang-14 above).
gshare_lint_packages=(clang-format-14)
# The e2e tests' real Jupyter kernel (test/e2e/test_notebook_kernels.py), for /usr/bin/python3,
# a real terminal for `gshare top` (tmux: test/e2e/test_top.py), and Prometheus's own
# parser of the metrics (test/e2e/test_metrics.py), and a real single-node Slurm
# (munge, slurmctld, slurmd, the clients: test/e2e/test_slurm.py), and groff to render the
# manual page with every warning on (test/e2e/test_cli_extras.py).
gshare_test_packages=(python3-ipykernel python3-jupyter-client tmux python3-prometheus-client
  munge slurmctld slurmd slurm-client groff-base)

gshare_build() {  # gshare_build BUILD_DIR [BUILD_TYPE [CMAKE_ARGS...]]
  local dir=$1 type=${2:-RelWithDebInfo}
  shift $(($# < 2 ? $# : 2))
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
}
