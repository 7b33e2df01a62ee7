"""Runs part of one e2e test file, so that ctest can run a long file's parts side by side
(test/e2e/CMakeLists.txt, E2E_PARTS).

  python3 run_part.py MODULE [-k PATTERN]... [-x PATTERN]...

runs the tests of MODULE (test_foo) whose id contains one of the -k patterns (every test when
there is none) and none of the -x patterns; patterns are substrings of the test's id, as for
`python3 -m unittest -k`. A selection that matches no test is an error: a part that runs
nothing would pass whatever the file holds. With GSHARE_FAIL_ON_SKIP=1 (CI: scripts/test.sh
installs every dependency, so a skip there means something broke), a skipped test fails the run
unless expected_skips.txt beside this file names it."""
import argparse
import os
import sys
import unittest

EXPECTED_SKIPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected_skips.txt")


def expected_skips():
    """The test ids expected_skips.txt names (one per line, "# reason" comments)."""
    with open(EXPECTED_SKIPS) as f:
        return {line.split("#")[0].strip() for line in f if line.split("#")[0].strip()}


def tests_of(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from tests_of(t)
        else:
            yield t


def main():
    p = argparse.ArgumentParser()
    p.add_argument("module")
    p.add_argument("-k", action="append", default=[], help="run the tests whose id contains this")
    p.add_argument("-x", action="append", default=[], help="leave out the tests whose id contains this")
    args = p.parse_args()
    loaded = unittest.defaultTestLoader.loadTestsFromName(args.module)
    chosen = [t for t in tests_of(loaded)
              if (not args.k or any(k in t.id() for k in args.k)) and not any(x in t.id() for x in args.x)]
    if not chosen:
        print("run_part.py: no test of %s matches -k %s -x %s" % (args.module, args.k, args.x),
              file=sys.stderr)
        return 2
    result = unittest.TextTestRunner(verbosity=2).run(unittest.TestSuite(chosen))
    if not result.wasSuccessful():
        return 1
    if os.environ.get("GSHARE_FAIL_ON_SKIP") == "1":
        unexpected = [(t.id(), why) for t, why in result.skipped if t.id() not in expected_skips()]
        for test_id, why in unexpected:
            print("run_part.py: %s was skipped (%s); not in expected_skips.txt" % (test_id, why),
                  file=sys.stderr)
        if unexpected:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
