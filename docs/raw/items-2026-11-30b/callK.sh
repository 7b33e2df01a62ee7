#!/usr/bin/env bash
# Call K (7501aca): item 1 beside one and three trainings at the 70 % default,
# through the measurement sets' script.
export PATH=/opt/torch/.venv/bin:$PATH:/usr/local/nvidia/bin
OUT=$OUT timeout 200 bash test/bench/share_items.sh dist service1 service3
