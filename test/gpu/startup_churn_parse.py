#!/usr/bin/env python3
"""One llm_service.py run: OUT ERR RC T0 -> key=value lines for startup_churn.sh."""
import json
import re
import sys

out_path, err_path, rc, t0 = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
res, window_start = None, None
try:
    with open(out_path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("window_start "):
                try:
                    window_start = float(line.split()[1])
                except (IndexError, ValueError):
                    pass
            elif line.startswith("{"):
                try:
                    d = json.loads(line)
                except ValueError:
                    continue
                if isinstance(d, dict) and d.get("kind") == "service":
                    res = d
except OSError:
    pass
try:
    with open(err_path, errors="replace") as f:
        err = f.read()
except OSError:
    err = ""
# llm_service.py's line after its second free-memory read (printed before --strict exits 3).
m = re.search(r"weights ([\d.]+) GiB; free ([\d.]+) -> ([\d.]+) GiB of ([\d.]+) while profiling; "
              r"peak ([\d.]+) GiB; KV pool (-?\d+) slots of (\d+) MiB", err)
oom = re.search(r"out of memory|OutOfMemoryError|CUDA_ERROR_OUT_OF_MEMORY|cannot fit", err,
                re.IGNORECASE) is not None
keys = ("free_rose", "free_before_gib", "free_after_gib", "pool_gib", "told_total_gib",
        "ttft_p99_ms", "weights_gib", "slots", "graphs", "pool_fits", "startup_s")
v = {k: "-" for k in keys}
fits = None
if res is not None:
    v.update(free_rose=str(bool(res.get("free_rose"))).lower(),
             free_before_gib=res.get("free_before_gib", "-"),
             free_after_gib=res.get("free_after_gib", "-"),
             pool_gib=res.get("kv_pool_gib", "-"), told_total_gib=res.get("total_gib", "-"),
             ttft_p99_ms=res.get("ttft_p99_ms", "-"), weights_gib=res.get("weights_gib", "-"),
             slots=res.get("slots", "-"),
             graphs=",".join(str(b) for b in res.get("graph_sizes", [])) or "-")
    try:
        fits = float(res["kv_pool_gib"]) <= float(res["free_after_gib"]) + 0.001
    except (KeyError, TypeError, ValueError):
        fits = None
elif m is not None:
    slots, mib = int(m.group(6)), int(m.group(7))
    v.update(weights_gib=m.group(1), free_before_gib=m.group(2), free_after_gib=m.group(3),
             told_total_gib=m.group(4), slots=str(slots), pool_gib=f"{slots * mib / 1024:.4f}")
    # --strict exits 3 exactly when free memory rose; past that line it did not.
    v["free_rose"] = "true" if rc == 3 else "false"
elif rc == 3:
    v["free_rose"] = "true"
else:
    v["free_rose"] = "unknown"
if fits is not None:
    v["pool_fits"] = str(fits).lower()
if window_start is not None:
    v["startup_s"] = f"{window_start - t0:.1f}"
if rc == 3 or v["free_rose"] == "true":
    result = "free_rose"
elif rc == 0 and res is not None:
    result = "ok" if fits else "pool_exceeds_free"
elif oom:
    result = "oom"
elif rc in (124, 137):
    result = "timeout"
elif rc == 0:
    result = "no_result"
else:
    result = f"exit{rc}"
v["oom"] = str(oom).lower()
v["result"] = result
for k, x in v.items():
    print(f"{k}={x}")
