#!/usr/bin/env bash
# Runs every test gshare has that needs no GPU: builds (installing build dependencies on
# Debian 12 when missing), then ctest: unit tests (doctest) and end-to-end tests of the
# daemon, the CLI and the shim against the fake libcuda of test/fake_cuda.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
gshare_apt_install "${gshare_build_packages[@]}"
gshare_build build
cd build
ctest --output-on-failure --timeout 600
