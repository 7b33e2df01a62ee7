#!/usr/bin/env bash
# Issue 43's item 3 at 84f538e: call F's script, cases alone, gsmps and gsiso (the service asks
# for isolation), three rounds with seeds 9-11.
ROUNDS=3 NOROOM_SEED0=8 CASES="alone gsmps gsiso" exec bash docs/raw/items-2026-12-03b/callF.sh
