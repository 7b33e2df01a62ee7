#!/usr/bin/env bash
# Call D: the ResNet service beside eight trainings under gshare's default and with every
# training capped at 15 % (batch_cap "always", one point more on the cap's curve), then the
# idle 70 GiB notebook with a 74 GiB training arriving (item 4, share_items.sh notebook).
CASES8="gsmps gsmpscap" SETS="notebook" CAP_PCT=15 \
  bash "$(dirname "${BASH_SOURCE[0]}")/callB.sh"
