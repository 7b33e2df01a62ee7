#!/usr/bin/env bash
# Issue 43's item 3: call F's script, cases alone, gsmps and gslowiso (the service an MPS
# client, the arriving training asking for isolation: outside MPS while it waits for room),
# three rounds with seeds 12-14.
ROUNDS=3 NOROOM_SEED0=11 CASES="alone gsmps gslowiso" exec bash docs/raw/items-2026-12-03b/callF.sh
