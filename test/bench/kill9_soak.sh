#!/usr/bin/env bash
# The kill -9 soak of issue 19 at full size: 1,000 jobs submitted (30 % held), released and
# now and then cancelled while the daemon is killed with SIGKILL 20 times at random moments;
# then no job may be lost, run twice or duplicated, every state must agree with the runs the
# jobs themselves counted, and the database must pass PRAGMA integrity_check.
# Usage: test/bench/kill9_soak.sh [BUILD_DIR] (default build). Prints the seed, the states and
# the number of runs; GSHARE_SOAK_SEED replays a run. Needs no GPU (the fake driver is not
# even loaded: the jobs are shell commands).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${1:-build}")
cd test/e2e
GSHARE_BUILD=$build GSHARE_SOAK_JOBS=${GSHARE_SOAK_JOBS:-1000} GSHARE_SOAK_KILLS=${GSHARE_SOAK_KILLS:-20} \
  PYTHONDONTWRITEBYTECODE=1 python3 -m unittest -v test_kill9_soak.py
