#!/usr/bin/env bash
# Issue 43's item 3: call F's script (alone, gsmps; seeds 4-6 as call G's rounds 1-3) with a
# shim whose swap-in, once its wait for room stalls, retries its allocation every 100 ms
# instead of every 8 ms (RoomWait::kStalledPauseNs): does the training's retrying, through the
# MPS server the service uses too, cost the service's decode steps after the arrival?
ROUNDS=3 NOROOM_SEED0=3 exec bash docs/raw/items-2026-12-03b/callF.sh
