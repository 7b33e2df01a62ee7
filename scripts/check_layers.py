#!/usr/bin/env python3
"""Checks that every #include of src/ and shim/ respects the layers of docs/design.md "Map".

Each include is resolved as the compiler resolves it: a quoted name first beside the including
file, then (quoted or angle-bracketed) in the target's include paths (src/ and include/ for src/;
shim/ and include/ for shim/), so `<daemon/server/daemon.h>` and
`"base/../daemon/server/daemon.h"` are judged by the file they reach. A name that reaches no file of the repository is a system or library
header. Rules:
  - src/<layer>/ reaches only its own folder, the layers listed for it below (the same list as
    src/CMakeLists.txt links) and include/gshare/; a layer may be a folder below src/ (the
    daemon's wings, "daemon/gpu"), and a file belongs to the longest layer folder it is in;
  - a project header is named as its include path names it: quoted, no "..";
  - src/policy/ includes no header that does I/O (IO_HEADERS) and reads no clock of its own
    (POLICY_CALLS): time comes in as arguments;
  - shim/ reaches only shim/ and include/gshare/, never src/; its folders are layers too,
    bottom up SHIM_FOLDERS (driver/, memory/, lease/, hooks/): each includes its own folder,
    the folders below it and the headers at shim/'s root, never a folder above it.
Exit status 0 when all hold, 1 with one line per problem ("file:line: ...") otherwise.
Usage: scripts/check_layers.py [REPO_ROOT]
"""
import os
import re
import sys

DAEMON_USES = {"base", "model", "policy", "store", "ipc", "runner"}
# The daemon's wings, bottom up: each may include the wings before it, never one after.
DAEMON_WINGS = ["daemon/state", "daemon/gpu", "daemon/checkpoint", "daemon/jobs",
                "daemon/observe", "daemon/server"]
ALLOWED = {
    "base": set(),
    "model": {"base"},
    "policy": {"base", "model"},
    "store": {"base", "model"},
    "ipc": {"base", "model", "store", "policy"},
    "runner": {"base", "model", "store", "ipc"},
    **{wing: DAEMON_USES | set(DAEMON_WINGS[:i]) for i, wing in enumerate(DAEMON_WINGS)},
    "cli": DAEMON_USES | set(DAEMON_WINGS),
}
# The shim's folders, bottom up: each may include the folders before it, never one after. The
# headers at shim/'s root (mutex.h, shim_log.h, thread_annotations.h) are everyone's.
SHIM_FOLDERS = ["driver", "memory", "lease", "hooks"]
# Policy decides; it does not touch files, sockets, processes, threads, clocks of its own or logs.
IO_HEADERS = {
    "fstream", "iostream", "cstdio", "stdio.h", "filesystem", "ctime", "time.h", "thread",
    "mutex", "shared_mutex", "condition_variable", "future", "random", "csignal", "signal.h",
    "unistd.h", "fcntl.h", "poll.h", "dirent.h", "dlfcn.h", "pthread.h", "pwd.h", "grp.h",
    "spdlog/spdlog.h", "sqlite3.h",
}
IO_PREFIXES = ("sys/", "spdlog/", "linux/", "netinet/", "arpa/")
# A clock read or the environment inside policy: the caller's to give.
POLICY_CALLS = re.compile(r"\b(steady_clock|system_clock|high_resolution_clock)::now\b|"
                          r"\b(getenv|clock_gettime|gettimeofday)\s*\(")

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


def resolve(path, kind, name, include_dirs):
    """The repository file `#include` `kind` `name` in `path` reaches, or None (a system or
    library header)."""
    candidates = [os.path.join(os.path.dirname(path), name)] if kind == '"' else []
    candidates += [os.path.join(d, name) for d in include_dirs]
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(c):
            return c
    return None


def layer_of(parts):
    """The layer of a file src/<parts>: the longest folder of ALLOWED it is in, else its first
    folder (which is no layer), else None (a file of src/ itself)."""
    for n in range(len(parts) - 1, 0, -1):
        if "/".join(parts[:n]) in ALLOWED:
            return "/".join(parts[:n])
    return parts[0] if len(parts) > 1 else None


def place(root, target):
    """("src", layer), ("shim", folder or ""), ("include", sub) or ("other", rel) of `target`."""
    rel = os.path.relpath(target, root).split(os.sep)
    if rel[0] == "src" and len(rel) > 2:
        return "src", layer_of(rel[1:])
    if rel[0] == "shim":
        return "shim", rel[1] if len(rel) > 2 else ""
    if rel[0] == "include" and len(rel) > 2:
        return "include", rel[1]
    return "other", "/".join(rel)


def spelled_as_reached(kind, name, target, include_dirs):
    """Whether a project header is named as its include path names it: quoted, no "..", the
    path below one include directory."""
    if kind != '"' or ".." in name.split("/"):
        return False
    return any(os.path.normpath(os.path.join(d, name)) == target for d in include_dirs)


def check_src(root, problems):
    src = os.path.join(root, "src")
    dirs = [src, os.path.join(root, "include")]
    for path in sources(src):
        rel = os.path.relpath(path, src)
        layer = layer_of(rel.split(os.sep))
        if layer not in ALLOWED:
            problems.append("src/%s: a file outside the layers %s" % (rel, sorted(ALLOWED)))
            continue
        for n, kind, name in includes(path):
            where = "src/%s:%d" % (rel, n)
            target = resolve(path, kind, name, dirs)
            if target is None:
                if layer == "policy" and name != "sys/types.h" and (
                        name in IO_HEADERS or name.startswith(IO_PREFIXES)):
                    problems.append("%s: policy does no I/O, yet includes <%s>" % (where, name))
                continue
            where_to, sub = place(root, target)
            if not spelled_as_reached(kind, name, target, dirs):
                problems.append('%s: name "%s" as its folder and file, quoted (it is %s)' % (
                    where, name, os.path.relpath(target, root)))
            allowed = {layer} | ALLOWED[layer]
            if (where_to == "src" and sub not in allowed) or \
                    (where_to == "include" and sub != "gshare") or where_to in ("shim", "other"):
                problems.append('%s: %s may not include %s (it may use %s and include/gshare)' % (
                    where, layer, os.path.relpath(target, root), ", ".join(sorted(allowed))))
        if layer == "policy":
            with open(path, errors="replace") as f:
                for n, line in enumerate(f, 1):
                    if POLICY_CALLS.search(line.split("//")[0]):
                        problems.append("src/%s:%d: policy reads no clock or environment of its "
                                        "own: %s" % (rel, n, line.strip()))


def check_shim(root, problems):
    shim = os.path.join(root, "shim")
    dirs = [shim, os.path.join(root, "include")]
    for path in sources(shim):
        rel = os.path.relpath(path, shim)
        parts = rel.split(os.sep)
        folder = parts[0] if len(parts) > 1 else ""
        if folder and folder not in SHIM_FOLDERS:
            problems.append("shim/%s: a file outside the shim's folders %s" % (rel, SHIM_FOLDERS))
            continue
        for n, kind, name in includes(path):
            target = resolve(path, kind, name, dirs)
            if target is None:
                continue
            where_to, sub = place(root, target)
            if where_to == "include" and sub == "gshare" or where_to == "shim":
                if not spelled_as_reached(kind, name, target, dirs):
                    problems.append('shim/%s:%d: name "%s" as its folder and file, quoted (it is '
                                    '%s)' % (rel, n, name, os.path.relpath(target, root)))
                if where_to == "shim" and sub in SHIM_FOLDERS and (
                        not folder or SHIM_FOLDERS.index(sub) > SHIM_FOLDERS.index(folder)):
                    problems.append("shim/%s:%d: shim/%s may not include %s (a folder above "
                                    "it; bottom up: %s)" % (rel, n, folder or ".",
                                                            os.path.relpath(target, root),
                                                            ", ".join(SHIM_FOLDERS)))
                continue
            problems.append("shim/%s:%d: the shim includes only shim/ and include/gshare/, not %s"
                            % (rel, n, os.path.relpath(target, root)))


def check(root):
    problems = []
    check_src(root, problems)
    check_shim(root, problems)
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(os.path.abspath(root))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
