#!/usr/bin/env bash
# Sets gshare up and runs the main job: installs build dependencies when missing (Debian 12,
# apt-get), builds into build/, then runs examples/demo.sh (two PyTorch trainings sharing the
# GPU; on a machine without a GPU they train on the CPU, with Debian's PyTorch installed if
# no torch is importable). Where nothing can be installed or built but a build is present in
# dist/ or build/src/ (the GPU machine, which has no package registry), that build is used.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
if gshare_apt_install "${gshare_build_packages[@]}" && gshare_build build Release; then
  bin=build/src
elif [ -x dist/gshare ]; then
  bin=dist
  echo "gshare: cannot build here; using the build in dist/" >&2
elif [ -x build/src/gshare ]; then
  bin=build/src
  echo "gshare: cannot build here; using the build in build/src/" >&2
else
  echo "gshare: cannot install the build dependencies and no build is present" >&2
  exit 1
fi
# The manual page, where man(1) finds a user's pages (MANPATH's default includes it).
mkdir -p "$HOME/.local/share/man/man1" &&
  "$bin/gshare" man >"$HOME/.local/share/man/man1/gshare.1" &&
  echo "gshare: man gshare reads $HOME/.local/share/man/man1/gshare.1" >&2
# The demo's Python: the first of python3 and Debian's own that imports torch, after
# installing Debian's PyTorch if neither does.
find_python() {
  for py in "${PYTHON:-python3}" /usr/bin/python3; do
    if "$py" -c "import torch, torchvision" 2>/dev/null; then echo "$py"; return 0; fi
  done
  return 1
}
if ! PYTHON=$(find_python); then
  gshare_apt_install python3-torch python3-torchvision
  PYTHON=$(find_python) || { echo "gshare: no Python with torch and torchvision" >&2; exit 1; }
fi
export PYTHON
exec bash examples/demo.sh "$bin"
