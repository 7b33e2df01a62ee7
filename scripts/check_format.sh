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
status=0
while IFS= read -r f; do
  if ! "$fmt" --dry-run --Werror "$f" 2>/dev/null; then
    echo "not formatted: $f"
    status=1
  fi
done < <(git ls-files 'src/*.h' 'src/*.cc' 'shim/*.h' 'shim/*.cc' 'include/*.h' 'test/*.h' \
           'test/*.cc')
exit $status
