#!/usr/bin/env bash
# Build test/gpu/cupti_counter.c into libcupti_counter.so, on the GPU machine.
#
#   test/gpu/build_cupti_counter.sh [OUTDIR]    (default OUTDIR: ${TMPDIR:-/tmp}/gshare-cupti-counter)
#
# Env: CUDA_HOME (default /usr/local/cuda, else /usr/local/cuda-13.0), CC (default gcc).
# Looks for cupti.h / libcupti.so in CUDA_HOME/include + lib64, targets/x86_64-linux/{include,lib}
# and extras/CUPTI/{include,lib64}; links with an rpath to the directory it found libcupti in.
# Prints the path of the built library on its last line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
outdir="${1:-${TMPDIR:-/tmp}/gshare-cupti-counter}"
cc="${CC:-gcc}"

cuda="${CUDA_HOME:-}"
if [[ -z "$cuda" ]]; then
  for c in /usr/local/cuda /usr/local/cuda-13.0; do
    [[ -d "$c" ]] && { cuda="$c"; break; }
  done
fi
[[ -n "$cuda" && -d "$cuda" ]] || { echo "build_cupti_counter: no CUDA toolkit (set CUDA_HOME)" >&2; exit 1; }

inc="" lib=""
for d in "$cuda/include" "$cuda/targets/x86_64-linux/include" "$cuda/extras/CUPTI/include"; do
  [[ -f "$d/cupti.h" ]] && { inc="$d"; break; }
done
for d in "$cuda/lib64" "$cuda/targets/x86_64-linux/lib" "$cuda/extras/CUPTI/lib64"; do
  [[ -e "$d/libcupti.so" ]] && { lib="$(cd "$d" && pwd -P)"; break; }
done
[[ -n "$inc" ]] || { echo "build_cupti_counter: cupti.h not found under $cuda" >&2; exit 1; }
[[ -n "$lib" ]] || { echo "build_cupti_counter: libcupti.so not found under $cuda" >&2; exit 1; }

# cuda.h lives in the main include dir even when cupti.h is under extras/.
mkdir -p "$outdir"
out="$outdir/libcupti_counter.so"
"$cc" -O2 -std=c11 -Wall -Wextra -shared -fPIC -pthread \
  -I"$inc" -I"$cuda/include" -I"$cuda/targets/x86_64-linux/include" \
  -o "$out" "$here/cupti_counter.c" \
  -L"$lib" -lcupti -Wl,-rpath,"$lib"
echo "$out"
