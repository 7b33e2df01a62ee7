#!/usr/bin/env bash
# Issue 43's item 3 at 84f538e: call F's script (the no-room LLM service, gshare's default
# gsmps beside alone, the training arriving at its first CUDA call 6 s in), five more rounds
# with seeds 4-8, so that with call F's seeds 1-3 the pooled p99 rests on eight rounds.
ROUNDS=5 NOROOM_SEED0=3 exec bash docs/raw/items-2026-12-03b/callF.sh
