#!/usr/bin/env bash
# Checks the shim's locking with clang's thread-safety analysis (shim/thread_annotations.h):
# every .cc the shim target compiles (shim/CMakeLists.txt) is parsed by clang with
# -Wthread-safety and the target's include directories and flags; nothing is built. Exit
# status 0 when clang says nothing, 1 with one line per failing file on stdout ("file: N
# diagnostics", clang's own messages on stderr) otherwise. The compiler is $GSHARE_CLANGXX,
# else clang++-14, else clang++. Usage: scripts/check_thread_safety.sh
set -uo pipefail
cd "$(dirname "$0")/.."

cxx=${GSHARE_CLANGXX:-}
if [[ -z $cxx ]]; then
  for c in clang++-14 clang++; do
    if command -v "$c" >/dev/null; then cxx=$c; break; fi
  done
fi
if [[ -z $cxx ]]; then
  echo "check_thread_safety: no clang++ (set GSHARE_CLANGXX)" >&2
  exit 2
fi

# GSHARE_VERSION as CMake passes it (the project's VERSION).
version=$(sed -n 's/^project(gshare VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
flags=(-std=c++20 -fsyntax-only -Wthread-safety -Werror=thread-safety -I shim -I include
       -fno-exceptions -fno-rtti -fvisibility=hidden "-DGSHARE_VERSION=\"$version\"")

status=0
for f in shim/driver/*.cc shim/hooks/*.cc shim/lease/*.cc shim/memory/*.cc; do
  # Not part of libgshare.so: it needs the CUDA toolkit's headers (shim/CMakeLists.txt).
  [[ $f == shim/driver/cuda_abi_check.cc ]] && continue
  out=$("$cxx" "${flags[@]}" "$f" 2>&1)
  rc=$?
  n=$(grep -cE '(warning|error):' <<<"$out")
  if [[ $rc -ne 0 || $n -ne 0 ]]; then
    echo "$out" >&2
    echo "$f: $n diagnostics"
    status=1
  fi
done
exit $status
