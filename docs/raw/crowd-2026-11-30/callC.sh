#!/usr/bin/env bash
# Call C: call B's eight-training cases in the reverse order (every training capped, the
# crowded ones capped, gshare's default), then the ResNet service beside three and beside one
# training under gshare's default (share_items.sh service3 service1).
CASES8="gsmpscap gsmpscrowd gsmps" SETS="service3 service1" \
  bash "$(dirname "${BASH_SOURCE[0]}")/callB.sh"
