#!/usr/bin/env python3
"""Item 2's fitting pair over several calls: where gshare's makespan differs from MPS's.

    python3 test/bench/pair_calls.py SUMMARY [SUMMARY...]

Each SUMMARY is a file with share_paths.sh's `pair case=...` lines (a call's summary): cases
gsmps (gshare's default), mps (a private MPS server, no gshare) and bare (time-slicing), each
with the GPT-2 and ResNet-50 trainings' wall (launch to exit, s) and train (their step loop, s).
Per call it prints the makespan of gsmps ÷ mps and ÷ bare, each training's train ÷ mps's (the
part on the GPU beside the other job) and its start-up (wall - train: imports, model build,
data; CPU side); then the medians over the calls and how many calls had gsmps ≤ mps.

Why: the makespan is the GPT-2 job's wall, of which 12-24 s is its start-up on the CPU; that
part moves by seconds between runs of one setting, as much as the gap between gshare and MPS.
The train ratio says whether the jobs' GPU part under gshare ran at MPS's speed.
Exit 0; 2 when a file lacks the cases."""
import statistics
import sys


def cases(path):
    """{case: {key: value}} of the `pair case=` lines of path."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("pair case="):
                kv = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
                out[kv["case"]] = kv
    return out


def num(kv, key):
    return float(kv[key])


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    rows = []
    for path in sys.argv[1:]:
        c = cases(path)
        if not all(k in c for k in ("gsmps", "mps", "bare")):
            print(f"pair_calls: {path}: no gsmps, mps and bare pair lines", file=sys.stderr)
            return 2
        g, m, b = c["gsmps"], c["mps"], c["bare"]
        r = {
            "mps": num(g, "makespan") / num(m, "makespan"),
            "bare": num(g, "makespan") / num(b, "makespan"),
            "gpt_train": num(g, "gpt_train") / num(m, "gpt_train"),
            "cnn_train": num(g, "cnn_train") / num(m, "cnn_train"),
            "gpt_start_g": num(g, "gpt_wall") - num(g, "gpt_train"),
            "gpt_start_m": num(m, "gpt_wall") - num(m, "gpt_train"),
        }
        rows.append(r)
        print(f"call {path}: makespan gsmps/mps={r['mps']:.3f} gsmps/bare={r['bare']:.3f} "
              f"train gsmps/mps gpt={r['gpt_train']:.3f} cnn={r['cnn_train']:.3f} "
              f"gpt start-up gsmps={r['gpt_start_g']:.1f}s mps={r['gpt_start_m']:.1f}s")
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    starts = [r[k] for r in rows for k in ("gpt_start_g", "gpt_start_m")]
    print(f"calls={len(rows)} makespan_vs_mps_median={med['mps']:.3f} "
          f"at_or_under_mps={sum(r['mps'] <= 1 for r in rows)} "
          f"makespan_vs_bare_median={med['bare']:.3f} "
          f"under_0.95_bare={sum(r['bare'] <= 0.95 for r in rows)} "
          f"gpt_train_vs_mps_median={med['gpt_train']:.3f} "
          f"cnn_train_vs_mps_median={med['cnn_train']:.3f} "
          f"gpt_start_up_s={min(starts):.1f}-{max(starts):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
