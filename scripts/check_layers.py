#!/usr/bin/env python3
"""Checks that every #include of src/ and shim/ respects the layers of docs/design.md "Map".

src/<layer>/ may include its own folder and the layers listed for it below (the same list as
src/CMakeLists.txt links); src/policy/ may include no header that does I/O; shim/ includes only
its folders, the headers at its root (SHIM_ROOT_HEADERS) and include/gshare/, never src/.
Exit status 0 when all hold, 1 with one line per offending include ("file:line: ...")
otherwise. Usage: scripts/check_layers.py [REPO_ROOT]
"""
import os
import re
import sys

ALLOWED = {
    "base": set(),
    "policy": {"base"},
    "store": {"base"},
    "ipc": {"base", "store", "policy"},
    "runner": {"base", "store", "ipc"},
    "daemon": {"base", "policy", "store", "ipc", "runner"},
    "cli": {"base", "policy", "store", "ipc", "runner", "daemon"},
}
SHARED = {"gshare"}  # include/gshare/: what the shim and gshare share
# Policy decides; it does not touch files, sockets, processes, clocks of its own or logs.
IO_HEADERS = {"fstream", "iostream", "cstdio", "stdio.h", "unistd.h", "fcntl.h", "sys/socket.h",
              "sys/stat.h", "poll.h", "signal.h", "spdlog/spdlog.h", "sqlite3.h", "thread", "mutex"}
SHIM_FOLDERS = {"hooks", "lease", "memory"}
# Headers at shim/'s root, everyone's: the logger and the lock with its annotations.
SHIM_ROOT_HEADERS = {"shim_log.h", "mutex.h", "thread_annotations.h"}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def sources(root):
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith((".h", ".cc", ".def")):
                yield os.path.join(d, f)


def includes(path):
    with open(path, errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1), m.group(2)


def check(root):
    problems = []
    src = os.path.join(root, "src")
    for path in sources(src):
        rel = os.path.relpath(path, src)
        layer = rel.split(os.sep)[0]
        if layer not in ALLOWED:
            problems.append("%s: a file outside the layers %s" % (rel, sorted(ALLOWED)))
            continue
        for n, kind, name in includes(path):
            where = "src/%s:%d" % (rel, n)
            if kind == "<":
                if layer == "policy" and name in IO_HEADERS:
                    problems.append("%s: policy does no I/O, yet includes <%s>" % (where, name))
                continue
            top = name.split("/")[0]
            if "/" not in name:
                problems.append('%s: "%s" names no folder' % (where, name))
            elif top != layer and top not in ALLOWED[layer] | SHARED:
                problems.append('%s: %s may not include "%s" (it may use %s)' % (
                    where, layer, name, ", ".join(sorted(ALLOWED[layer] | SHARED)) or "nothing"))
    shim = os.path.join(root, "shim")
    for path in sources(shim):
        rel = os.path.relpath(path, shim)
        for n, kind, name in includes(path):
            top = name.split("/")[0]
            if kind == '"' and name not in SHIM_ROOT_HEADERS and top not in SHIM_FOLDERS | SHARED:
                problems.append('shim/%s:%d: the shim includes only shim/ and include/gshare/, not "%s"'
                                % (rel, n, name))
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(os.path.abspath(root))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
