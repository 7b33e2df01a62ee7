#!/usr/bin/env python3
"""Compare the shim's census of gated calls with CUPTI's independent count: 0 escapes wanted.

    python3 test/gpu/census_compare.py CENSUS_DIR [WORKLOAD...] [--all] [--json FILE]

CENSUS_DIR holds one folder per workload (as written by test/gpu/census.sh); naming WORKLOADs
compares only those folders:
    <workload>/shim.<pid>    the shim's census (GSHARE_CENSUS=<workload>/shim): `<export_name> <count>`
                             per hook with a non-zero count (calls recorded into a stream capture
                             included; `#captured <n>` says how many); optional `self:<export_name> <count>`
                             lines count submissions the shim made itself (swap copies, ...), which
                             CUPTI sees too; `#` lines are comments.
    <workload>/cupti.<pid>   test/gpu/cupti_counter.c's count (GSHARE_CUPTI_OUT=<workload>/cupti):
                             a `# cupti_counter ... subscribed=1 error=0 ...` header, then
                             `<functionName> <count>` for every driver API call seen at API_ENTER.
    <workload>/rc            optional: the exit status of `gshare run` (non-zero marks a failure).

Both sides are summed over all pids of a workload, per FAMILY. The family of a name is the name
with its ABI suffixes stripped, repeatedly, from the end: `_ptsz`, `_ptds` (per-thread default
stream variants) and `_v2`, `_v3`, ... (versioned ABIs). The two sides name one call differently:
the shim reports the export whose wrapper ran (cuMemcpyAsync_ptsz, cuMemcpyHtoD_v2), while CUPTI's
functionName is its callback id's name, which may drop or keep such suffixes. Families compare
the same calls whichever way they were spelled (cuMemcpy2DAsync_v2_ptsz -> cuMemcpy2DAsync).

Submission families are those starting with cuLaunch, cuGraphLaunch, cuGraphUpload, cuMemcpy,
cuMemset, cuStreamWriteValue, cuStreamWaitValue, cuStreamBatchMemOp, cuMemPrefetch, cuMemDiscard.
For them, escapes = cupti - shim: calls that reached the driver without passing the shim's gate.
A negative difference (the shim counted more than CUPTI saw) is not an escape but is flagged.
Calls recorded during stream capture count on both sides (CUPTI cannot tell them apart).

Exit status: 0 = no escapes and every workload valid; 1 = escapes; 2 = no escapes, but some
workload failed or could not be counted (rc != 0, no CUPTI data, or a pid with shim counts and no
working CUPTI subscription) so its zero proves nothing.

Try it here, without a GPU, on the synthetic examples:
    python3 test/gpu/census_compare.py test/gpu/testdata/census_ok       # exit 0
    python3 test/gpu/census_compare.py test/gpu/testdata/census_escape   # exit 1, escapes: 3
"""
import argparse
import json
import os
import re
import sys
from collections import defaultdict

SUBMISSION_PREFIXES = (
    "cuLaunch", "cuGraphLaunch", "cuGraphUpload", "cuMemcpy", "cuMemset",
    "cuStreamWriteValue", "cuStreamWaitValue", "cuStreamBatchMemOp", "cuMemPrefetch", "cuMemDiscard",
)

# Family prefixes each workload is built to exercise (keyed by census.sh's workload names);
# one CUPTI never saw is reported, not failed: a census that never saw a graph launch cannot
# show that graph launches are gated.
EXPECTED = {
    "torch": ["cuLaunchKernel", "cuMemcpyAsync"],
    "torch_compile": ["cuGraphLaunch"],
    "jax": ["cuLaunchKernel"],
    "cupy": ["cuLaunchKernel"],
    "triton": ["cuLaunchKernel"],
    "static": ["cuLaunchKernel", "cuLaunchHostFunc", "cuGraphLaunch", "cuMemcpy", "cuMemset",
               "cuMemPrefetchAsync"],
    "static_ptds": ["cuLaunchKernel", "cuLaunchHostFunc", "cuGraphLaunch", "cuMemPrefetchAsync"],
}

_SUFFIX = re.compile(r"(_ptsz|_ptds|_v[0-9]+)$")


def family(name):
    """cuMemcpy2DAsync_v2_ptsz -> cuMemcpy2DAsync; cuLaunchKernel -> cuLaunchKernel."""
    while True:
        stripped = _SUFFIX.sub("", name)
        if stripped == name:
            return name
        name = stripped


def is_submission(fam):
    return fam.startswith(SUBMISSION_PREFIXES)


def parse_counts(path):
    """Returns (counts by name, header dict). Raises ValueError on a malformed line."""
    counts, header = defaultdict(int), {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                words = line[1:].split()
                if len(words) == 2 and "=" not in line:   # the shim's "#captured <n>"
                    header[words[0]] = words[1]
                for word in words:
                    if "=" in word:
                        k, v = word.split("=", 1)
                        header[k] = v
                continue
            parts = line.split()
            if len(parts) != 2 or not parts[1].isdigit():
                raise ValueError(f"{path}:{lineno}: expected '<name> <count>', got {line!r}")
            counts[parts[0]] += int(parts[1])
    return counts, header


def pid_of(filename, prefix):
    rest = filename[len(prefix):]
    return rest if rest.isdigit() else None


def load_workload(wdir):
    """Reads one workload folder. Returns a dict with per-family sums and validity problems."""
    shim, shim_self, cupti = defaultdict(int), defaultdict(int), defaultdict(int)
    shim_pids, cupti_ok_pids, cupti_bad_pids = set(), set(), {}
    captured = 0
    problems, notes = [], []
    for fn in sorted(os.listdir(wdir)):
        path = os.path.join(wdir, fn)
        if fn.startswith("shim.") and pid_of(fn, "shim."):
            counts, header = parse_counts(path)
            captured += int(header.get("captured", "0")) if header.get("captured", "").isdigit() else 0
            if counts:
                shim_pids.add(pid_of(fn, "shim."))
            for name, c in counts.items():
                if name.startswith("self:"):
                    shim_self[family(name[5:])] += c
                else:
                    shim[family(name)] += c
        elif fn.startswith("cupti.") and pid_of(fn, "cupti."):
            pid = pid_of(fn, "cupti.")
            counts, header = parse_counts(path)
            if header.get("subscribed", "1") != "1" or header.get("error", "0") != "0":
                cupti_bad_pids[pid] = f"{header.get('where', '?')} error {header.get('error', '?')}"
                continue
            cupti_ok_pids.add(pid)
            for name, c in counts.items():
                cupti[family(name)] += c
            for key in ("overflow", "null_name"):
                if header.get(key, "0") not in ("0", ""):
                    problems.append(f"pid {pid}: CUPTI counter {key}={header[key]}")
    rc_path = os.path.join(wdir, "rc")
    if os.path.exists(rc_path):
        rc = open(rc_path).read().strip()
        if rc != "0":
            problems.append(f"workload exited with status {rc} (see stderr)")
    if not cupti_ok_pids:
        problems.append("CUPTI counted no process (counter not loaded, or subscription failed)")
    uncounted = sorted(shim_pids - cupti_ok_pids, key=int)
    if uncounted:
        problems.append("pids with shim counts but no CUPTI count: " + ", ".join(uncounted))
    idle_bad = sorted((pid for pid in cupti_bad_pids if pid not in shim_pids), key=int)
    if idle_bad:   # e.g. shells or compilers the job ran: harmless unless they used the GPU
        whys = sorted({cupti_bad_pids[pid] for pid in idle_bad})
        notes.append(f"{len(idle_bad)} pid(s) without a CUPTI subscription ({'; '.join(whys)}), "
                     f"none with shim counts: {', '.join(idle_bad[:8])}{' ...' if len(idle_bad) > 8 else ''}")
    if captured:
        notes.append(f"{captured} gated calls were recorded into stream captures (counted on both sides)")
    if not shim_pids:
        notes.append("the shim's census is empty (GSHARE_CENSUS not honoured, or no gated call)")
    return dict(shim=shim, shim_self=shim_self, cupti=cupti, problems=problems, notes=notes,
                pids=sorted(shim_pids | cupti_ok_pids, key=int))


def compare(census_dir, show_all=False, only=None):
    def is_workload(d):
        # A folder with neither side's files nor an rc (a build folder, say) is no workload.
        path = os.path.join(census_dir, d)
        return (not d.startswith(".") and os.path.isdir(path) and
                any(f.startswith(("shim.", "cupti.")) or f == "rc" for f in os.listdir(path)))

    rows, report = [], dict(workloads={}, escapes=0, invalid=[])
    names = only if only else sorted(filter(is_workload, os.listdir(census_dir)))
    for w in names:
        if not os.path.isdir(os.path.join(census_dir, w)):
            raise ValueError(f"no workload folder {w!r} in {census_dir}")
        data = load_workload(os.path.join(census_dir, w))
        fams = set(data["cupti"]) | set(data["shim"]) | set(data["shim_self"])
        if not show_all:
            fams = {f for f in fams if is_submission(f)}
        tot_c = tot_s = tot_e = 0
        wrep = dict(families={}, problems=data["problems"], notes=data["notes"], missing=[])
        for fam in sorted(fams):
            c = data["cupti"].get(fam, 0)
            s = data["shim"].get(fam, 0) + data["shim_self"].get(fam, 0)
            sub = is_submission(fam)
            diff = c - s if sub else None
            esc = max(diff, 0) if sub else 0
            tot_c += c if sub else 0
            tot_s += s if sub else 0
            tot_e += esc
            flag = ""
            if sub and diff > 0:
                flag = "ESCAPE"
            elif sub and diff < 0:
                flag = "shim>cupti"
            rows.append((w, fam, c, s if (sub or s) else "-", diff if sub else "-", flag))
            wrep["families"][fam] = dict(cupti=c, shim=s, escapes=esc, submission=sub)
        rows.append((w, "TOTAL", tot_c, tot_s, tot_c - tot_s, "ESCAPE" if tot_e else ""))
        wrep.update(cupti_total=tot_c, shim_total=tot_s, escapes=tot_e)
        for prefix in EXPECTED.get(w, []):
            if not any(f.startswith(prefix) and c > 0 for f, c in data["cupti"].items()):
                wrep["missing"].append(prefix)
        report["workloads"][w] = wrep
        report["escapes"] += tot_e
        if data["problems"]:
            report["invalid"].append(w)
    return rows, report


def print_table(rows, report, out=sys.stdout):
    head = ("workload", "family", "cupti_count", "shim_gated", "escapes", "")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" if i < 2 or i == 5 else f"{{:>{w}}}" for i, w in enumerate(widths))
    print(fmt.format(*head).rstrip(), file=out)
    for r in rows:
        print(fmt.format(*[str(x) for x in r]).rstrip(), file=out)
    print(file=out)
    for w, wrep in report["workloads"].items():
        for p in wrep["problems"]:
            print(f"INVALID {w}: {p}", file=out)
        for n in wrep["notes"]:
            print(f"note {w}: {n}", file=out)
        if wrep["missing"]:
            print(f"note {w}: expected families not seen by CUPTI: {', '.join(wrep['missing'])}", file=out)
    print(f"escapes: {report['escapes']}", file=out)
    if report["invalid"]:
        print(f"invalid workloads: {' '.join(report['invalid'])}", file=out)


def main(argv=None):
    p = argparse.ArgumentParser(description="compare the shim's census with CUPTI's count")
    p.add_argument("census_dir")
    p.add_argument("workloads", nargs="*", help="only these workload folders (default: all)")
    p.add_argument("--all", action="store_true", help="also list non-submission families (CUPTI only)")
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON")
    a = p.parse_args(argv)
    if not os.path.isdir(a.census_dir):
        print(f"census_compare: no such directory: {a.census_dir}", file=sys.stderr)
        return 2
    try:
        rows, report = compare(a.census_dir, a.all, a.workloads)
    except (OSError, ValueError) as e:
        print(f"census_compare: {e}", file=sys.stderr)
        return 2
    if not report["workloads"]:
        print(f"census_compare: no workload results under {a.census_dir}", file=sys.stderr)
        return 2
    print_table(rows, report)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=2, sort_keys=True)
    if report["escapes"]:
        return 1
    return 2 if report["invalid"] else 0


if __name__ == "__main__":
    sys.exit(main())
