#!/usr/bin/env bash
# Checks that the C++ sources follow .clang-format (Google's style at 100 columns): every
# tracked .h/.cc of src/, shim/, include/ and test/ is compared with what clang-format would
# make of it; nothing is changed. Exit status 0 when all match, 1 with the name of each file
# that does not (run `clang-format -i FILE` to fix it). The formatter is $GSHARE_CLANG_FORMAT,
# else clang-format-14, else clang-format. Usage: scripts/check_format.sh
set -uo pipefail
cd "$(dirname "$0")/.."
fmt=${GSHARE_CLANG_FORMAT:-}
if [[ -z $fmt ]]; then
  for c in clang-format-14 clang-format; do
    if command -v "$c" >/dev/null; then fmt=$c; break; fi
  done
fi
if [[ -z $fmt ]]; then
  echo "check_format: no clang-format (set GSHARE_CLANG_FORMAT)" >&2
  exit 2
fi
# One clang-format for all the files (a process per file cost CI's two cores about a minute):
# each file that differs is named once, from clang-format's "FILE:LINE:COL: error: code should be
# clang-formatted" lines.
out=$(git ls-files -z 'src/*.h' 'src/*.cc' 'shim/*.h' 'shim/*.cc' 'include/*.h' 'test/*.h' \
        'test/*.cc' | xargs -0 "$fmt" --dry-run --Werror 2>&1)
rc=$?
bad=$(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$out" |
        sort -u)
if [[ -n $bad ]]; then
  sed 's/^/not formatted: /' <<<"$bad"
  exit 1
fi
if [[ $rc -ne 0 ]]; then
  echo "check_format: $fmt failed: $(head -n 1 <<<"$out")"
  exit 1
fi
exit 0
