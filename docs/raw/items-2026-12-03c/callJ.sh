#!/usr/bin/env bash
# Issue 43's item 3: call F's script with the training's SM partition off (gsmpswide:
# GSHARE_PRIORITY_SM_PCT=0, no green context), seeds 4-5 as calls G and I: is the service's
# slower decode step after the arrival (paired TPOT +7 % in calls F-I) the partition's?
ROUNDS=2 NOROOM_SEED0=3 CASES="alone gsmpswide" exec bash docs/raw/items-2026-12-03b/callF.sh
