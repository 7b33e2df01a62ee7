#!/usr/bin/env python3
"""One `gshare status --json` on stdin: appended to JSONL with "t"; peaks kept in PEAKS;
prints `trip <why>` when the pinned host pools pass GUARD GiB or MemAvailable is below FLOOR."""
import json
import os
import sys
import time

path, peaks, guard, floor = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
GIB = float(1 << 30)
try:
    st = json.load(sys.stdin)
except ValueError:
    print("ok")
    sys.exit(0)
st["t"] = time.time()
with open(path, "a") as f:
    f.write(json.dumps(st, separators=(",", ":")) + "\n")
pinned = 0
for j in st.get("jobs", []):
    if j.get("state") in ("RUNNING", "SUSPENDED"):
        pinned += (j.get("memory") or {}).get("host_bytes", 0) or 0
hm = (st.get("daemon") or {}).get("host_memory") or {}
swapped = (hm.get("swapped", 0) or 0) + (hm.get("staged", 0) or 0)
exclusive = any(g.get("mode") == "exclusive" for g in st.get("gpus", []))
avail = None
try:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                avail = int(line.split()[1]) * 1024 / GIB
except (OSError, ValueError, IndexError):
    pass
old = [0.0, 0.0, 0, 0, float("inf")]
try:
    with open(peaks) as f:
        w = f.read().split()
    old = [float(w[0]), float(w[1]), int(w[2]), int(w[3]), float(w[4])]
except (OSError, ValueError, IndexError):
    pass
new = [max(old[0], swapped / GIB), max(old[1], pinned / GIB), old[2] + int(exclusive), old[3] + 1,
       min(old[4], avail if avail is not None else float("inf"))]
with open(peaks + ".tmp", "w") as f:
    f.write(" ".join(str(x) for x in new) + "\n")
os.replace(peaks + ".tmp", peaks)
if pinned / GIB > guard:
    print(f"trip pinned host pools {pinned / GIB:.1f} GiB > {guard:g} GiB")
elif avail is not None and avail < floor:
    print(f"trip MemAvailable {avail:.1f} GiB < {floor:g} GiB")
else:
    print("ok")
