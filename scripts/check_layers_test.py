#!/usr/bin/env python3
"""The layer check's own test: a small tree that keeps every rule passes, and one mutant per
rule (an include written every way the compiler accepts) fails it, each with its own problem
line. Usage: scripts/check_layers_test.py"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_layers  # noqa: E402

CLEAN = {
    "include/gshare/protocol.h": "#pragma once\n",
    "src/base/status.h": "#pragma once\n#include <string>\n",
    "src/policy/arbiter.h": '#pragma once\n#include <chrono>\n#include <sys/types.h>\n'
                            '#include "base/status.h"\n',
    "src/policy/arbiter.cc": '#include "policy/arbiter.h"\n// steady_clock::now() in a comment\n',
    "src/daemon/state/job_table.h": '#pragma once\n#include "policy/arbiter.h"\n',
    "src/daemon/gpu/lease_outbox.h": '#pragma once\n#include "daemon/state/job_table.h"\n',
    "src/daemon/jobs/job_lifecycle.h": '#pragma once\n#include "daemon/gpu/lease_outbox.h"\n'
                                       '#include "daemon/state/job_table.h"\n',
    "src/daemon/server/daemon.h": '#pragma once\n#include <spdlog/spdlog.h>\n'
                                  '#include "daemon/jobs/job_lifecycle.h"\n'
                                  '#include "gshare/protocol.h"\n',
    "src/cli/cmd_daemon.cc": '#include "daemon/server/daemon.h"\n#include "daemon/state/job_table.h"\n',
    "shim/mutex.h": "#pragma once\n",
    "shim/driver/real_driver.h": '#pragma once\n#include "mutex.h"\n',
    "shim/memory/swap_space.h": '#pragma once\n#include "driver/real_driver.h"\n',
    "shim/lease/lease.h": '#pragma once\n#include "mutex.h"\n#include "gshare/protocol.h"\n'
                          '#include "memory/swap_space.h"\n',
    "shim/hooks/hooks.cc": '#include "lease/lease.h"\n#include "driver/real_driver.h"\n'
                           '#include <dlfcn.h>\n',
    "test/helper.h": "#pragma once\n",
}

# (file, line added, what the problem line must contain)
MUTANTS = [
    ("src/base/status.h", '#include "policy/arbiter.h"', "base may not include src/policy"),
    ("src/base/status.h", "#include <daemon/server/daemon.h>", "base may not include src/daemon"),
    ("src/policy/arbiter.h", '#include "base/../daemon/server/daemon.h"', "policy may not include"),
    ("src/policy/arbiter.h", '#include "../daemon/server/daemon.h"', "policy may not include"),
    ("src/policy/arbiter.h", '#include "arbiter.h"', "quoted"),
    ("src/policy/arbiter.h", "#include <filesystem>", "policy does no I/O"),
    ("src/policy/arbiter.h", "#include <sys/socket.h>", "policy does no I/O"),
    ("src/policy/arbiter.h", "#include <spdlog/spdlog.h>", "policy does no I/O"),
    ("src/policy/arbiter.cc", "auto t = std::chrono::steady_clock::now();", "no clock"),
    ("src/policy/arbiter.cc", 'const char* e = getenv("X");', "no clock or environment"),
    ("src/daemon/server/daemon.h", '#include "../../../test/helper.h"',
     "daemon/server may not include test"),
    ("src/daemon/server/daemon.h", '#include "../../../shim/mutex.h"',
     "daemon/server may not include shim"),
    # The daemon's wings: a lower one includes no higher one, however it is spelled.
    ("src/daemon/state/job_table.h", '#include "daemon/server/daemon.h"',
     "daemon/state may not include src/daemon/server"),
    ("src/daemon/gpu/lease_outbox.h", '#include "daemon/jobs/job_lifecycle.h"',
     "daemon/gpu may not include src/daemon/jobs"),
    ("src/daemon/state/job_table.h", '#include "../gpu/lease_outbox.h"',
     "daemon/state may not include src/daemon/gpu"),
    ("src/daemon/gpu/lease_outbox.h", "#include <daemon/jobs/job_lifecycle.h>",
     "daemon/gpu may not include src/daemon/jobs"),
    ("src/daemon/stray.h", "#pragma once", "outside the layers"),  # in no wing
    ("shim/hooks/hooks.cc", '#include "lease/../../src/base/status.h"', "the shim includes only"),
    ("shim/hooks/hooks.cc", "#include <base/status.h>", None),  # not on the shim's path: a system
    ("shim/lease/lease.h", '#include "../../src/daemon/server/daemon.h"',
     "the shim includes only"),
    ("src/unknown/x.h", "#pragma once", "outside the layers"),
    # The shim's folders: a lower one includes no higher one, however it is spelled.
    ("shim/memory/swap_space.h", '#include "lease/lease.h"', "shim/memory may not include"),
    ("shim/driver/real_driver.h", '#include "memory/swap_space.h"',
     "shim/driver may not include"),
    ("shim/driver/real_driver.h", '#include "../hooks/hooks.cc"', "shim/driver may not include"),
    ("shim/lease/lease.h", "#include <hooks/hooks.cc>", "shim/lease may not include"),
    ("shim/mutex.h", '#include "lease/lease.h"', "shim/. may not include"),
    ("shim/stray/x.h", "#pragma once", "outside the shim's folders"),
]


def write_tree(root, extra=None):
    files = dict(CLEAN)
    if extra:
        path, line = extra
        files[path] = files.get(path, "") + line + "\n"
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


class LayerCheckTest(unittest.TestCase):
    def test_the_clean_tree_passes(self):
        with tempfile.TemporaryDirectory() as root:
            write_tree(root)
            self.assertEqual(check_layers.check(root), [])

    def test_each_mutant_fails_it(self):
        for path, line, want in MUTANTS:
            with self.subTest(path=path, line=line), tempfile.TemporaryDirectory() as root:
                write_tree(root, (path, line))
                problems = check_layers.check(root)
                if want is None:
                    self.assertEqual(problems, [])
                    continue
                self.assertTrue(problems, "not caught")
                self.assertTrue(any(want in p for p in problems), problems)

    def test_the_repository_passes(self):
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        self.assertEqual(check_layers.check(os.path.abspath(root)), [])


if __name__ == "__main__":
    unittest.main()
