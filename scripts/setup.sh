#!/usr/bin/env bash
# Sets gshare up and runs the main job: installs build dependencies when missing (Debian 12,
# apt-get), builds into build/, then runs examples/demo.sh (two PyTorch trainings sharing the
# GPU; on a machine without a GPU they train on the CPU, with Debian's PyTorch installed if
# no torch is importable). A machine without a package registry but with a build already in
# build/src or dist/ (the GPU machine) uses that build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
bin=build/src
if [ -x dist/gshare ] && ! command -v cmake >/dev/null; then
  bin=dist
elif ! [ -x build/src/gshare ] || command -v cmake >/dev/null; then
  gshare_apt_install "${gshare_build_packages[@]}"
  gshare_build build Release
fi
if ! python3 -c "import torch, torchvision" 2>/dev/null; then
  gshare_apt_install python3-torch python3-torchvision
fi
exec bash examples/demo.sh "$bin"
