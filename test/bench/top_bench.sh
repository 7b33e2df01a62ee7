#!/usr/bin/env bash
# top_bench.sh GSHARE_DIR [JOBS]: the CPU one `gshare top` frame costs with JOBS (default 1000)
# jobs in the queue (held, so all of them are listed), measured over `top -b -n 20` (batch
# frames: the same status request and layout as the live view, printed instead of drawn) and
# over `status --json` alone. Runs a user daemon of its own in a scratch folder; no GPU needed.
set -eu
gbin="$(cd "${1:?usage: top_bench.sh GSHARE_DIR [JOBS]}" && pwd)"
jobs="${2:-1000}"
work="$(mktemp -d)"
trap '"$gbin/gshare" --config "$work/g.toml" daemon stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
printf '[daemon]\nsocket = "%s/g.sock"\nstate_dir = "%s/state"\n' "$work" "$work" >"$work/g.toml"
g() { "$gbin/gshare" --config "$work/g.toml" "$@"; }
g daemon start >/dev/null
for ((i = 0; i < jobs; i++)); do g submit -H -J "sweep-lr0.00$i" -- true >/dev/null; done
frames=20
cpu() { /usr/bin/time -f "%U %S %e" "$@" 2>&1 >/dev/null | tail -1; }
read -r u s e <<<"$(cpu "$gbin/gshare" --config "$work/g.toml" top -b -n $frames -d 0.1)"
echo "top -b: $frames frames with $jobs jobs: user ${u}s sys ${s}s wall ${e}s;" \
  "CPU per frame $(echo "($u + $s) * 1000 / $frames" | bc -l | xargs printf '%.1f') ms"
read -r u s e <<<"$(cpu "$gbin/gshare" --config "$work/g.toml" status --json)"
echo "status --json once: user ${u}s sys ${s}s wall ${e}s"
