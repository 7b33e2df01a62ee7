#!/usr/bin/env bash
# The measurements of "share, don't idle" (docs/benchmarks.md, the sections on issue 43's
# items), each a named set that runs one benchmark script with the settings its rows were
# measured at. Sets run one after another, each under its own time limit, into $OUT/<set>/;
# their result lines are gathered in $OUT/summary.txt, and with PACK=1 (default) the folders are
# packed into $OUT/raw.tgz and removed, so that a GPU machine's call returns few files.
#
#   test/bench/share_items.sh GSHARE_DIR SET...      (GSHARE_DIR holds gshare and libgshare.so)
#
# SETs (limit):
#   pair (300 s)       the fitting pair (GPT-2 + ResNet-50) under gshare's MPS backend, under MPS
#                      and time-sliced: makespans (share_paths.sh PARTS=pair)
#   pairprep (300 s)   the same from a common start: each job builds its model on the CPU
#                      first, and the makespans count from the go given once both are ready
#                      (share_paths.sh PAIR_PREPARED=1), leaving their Python start-up out
#   serviceN (90 s for N = 1, 100 for 3, 130 for 8)   the ResNet service (batch 12, ~50 % duty)
#                      beside N trainings under gshare at the default SM partition, the
#                      trainings stopped and continued every 3 s through a 30 s window: p99
#                      beside them ÷ alone and the rate they kept (share_paths.sh, `phases`)
#   peersN (140 s for N = 1, 170 otherwise)   the same beside N trainings time-sliced and under
#                      MPS (client priority 1, active threads CAP_PCT, default 25 %)
#   llmN (330 s)       the LLM decode service (Llama-7B shape, CUDA graphs, KV pool at half the
#                      GPU, Poisson requests at 2.5/s, 30 s window) beside N GPT-2 trainings
#                      stopped and continued every 3 s; LLM_CASES picks the cases (default
#                      "alone bare mpscap gsmps gsiso": alone, time-sliced, MPS with the
#                      trainings at client priority 1 and CAP_PCT, gshare's default, the
#                      service isolated); a case that would start after 250 s is skipped
#   arrive1 (260 s)    the ResNet service alone, then with one training arriving 10 s into its
#                      45 s window and running 12 s past it, under gshare with batch_cap's
#                      default ("never": the SM partition) and with "beside_service" (capped
#                      at CAP_PCT % of the threads for its life): the service's p99 before the
#                      arrival and beside the running training, the training's rate beside it
#                      and after it (train_steps_per_s_after)
#   noroom (240 s)     the LLM service whose KV pool leaves no room (92 % of the GPU), one
#                      training arriving 6 s into its 25 s window: TTFT/TPOT p99 and the
#                      daemon's handoff and completion lines, and each case's requests paired
#                      with the same requests alone (llm_pairs.py); NOROOM_CASES picks the
#                      service's cases (default "alone gsmps"; gsiso: the service asks for
#                      isolation; gslowiso: the training does, the service an MPS client;
#                      gsisosolo: as gsiso with no training, its control; bare: the
#                      training arrives without gshare and fails at its first allocation that
#                      finds no room; cpustart: it sees no GPU, so only its start on the CPU
#                      runs beside the service); NOROOM_ROUNDS=R (default
#                      1) runs the set R times, round k's requests drawn from seed k (seed
#                      NOROOM_SEED0+k with NOROOM_SEED0=N, default 0, so that later calls
#                      draw other arrivals), and adds each case's pooled line: TTFT p99 over all rounds' requests ÷ alone's,
#                      with a bootstrap interval (llm_pairs.py --pool)
#   notebook (230 s)   an idle 70 GiB notebook and a 74 GiB training arriving (alone, then under
#                      gshare), each training step traced (notebook.sh TRAIN_TRACE=1)
#   startup (150 s)    a 74 GiB probe's start-up, free of the 74 GiB and exit, bare and under
#                      gshare, three rounds (mem_startup.sh: pre=, free= and post=)
#   floor (150 s)      the LLM decode service (rate 2.5/s, 20 s) alone, bare and under gshare
#                      as its server's MPS client with nothing beside it (priority.sh `alone`
#                      and `gshare0`): the TTFT and TPOT that being an MPS client costs; with
#                      LLM_ARGS=--eager, the same without CUDA graphs
#   alone60 (120 s)    the ResNet service (batch 12) alone, bare, for 60 s, its CPU sampled:
#                      whether its stretches of slow requests come without gshare too
#   decodeprof (330 s) one decode step of the LLM service's model at 1, 8 and 32 lanes, bare,
#                      as a client of a private MPS and of gshare's: time per step and the
#                      kernels whose GPU time grew against bare (mps_floor.sh, SHAPES decode:B)
# Any knob of the scripts passes through the environment (CAP_PCT, SM_PCT, HOST_WARM_GIB, ...).
# Needs the GPU machine; PATH must reach a python with torch (PYTHON otherwise).
# Output: $OUT/summary.txt (`<set> rc=<rc> <seconds>s`, then the set's result lines),
# $OUT/<set>.log (its script's output), $OUT/raw.tgz.
# Exit: 0 when every set's script exited 0; 1 otherwise; 2 on usage errors.
set -uo pipefail

if [[ $# -lt 2 || "$1" == -h || "$1" == --help ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 2
fi
dir=$1
shift
bench="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
R="$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)"
summary="$R/summary.txt"
export PYTHONUNBUFFERED=1

# service_args N: env_args (the caller's) = the settings of every service set beside N trainings.
service_args() {
  env_args=(PARTS=service SERVICE_BATCH=12 TRAININGS="$1" PAUSE_PERIOD=3 SERVICE_SECONDS=30)
}

# run_set SET (a name checked below): the script, limit and settings of SET; prints nothing,
# appends to the summary.
run_set() {
  local set=$1 limit script n pick='^(service|phases)'
  local -a env_args
  case $set in
    pair) limit=300 script=share_paths.sh env_args=(PARTS=pair PAIR_CASES="gsmps mps bare")
      pick='^pair |^(gsmps|mps|bare) +makespan' ;;
    pairprep) limit=300 script=share_paths.sh
      env_args=(PARTS=pair PAIR_PREPARED=1 PAIR_CASES="gsmps mps bare")
      pick='^pair |^(gsmps|mps|bare) +makespan' ;;
    service[0-9]*)
      n=${set#service}
      limit=$((n <= 1 ? 90 : n <= 3 ? 100 : 130)) script=share_paths.sh
      service_args "$n"
      env_args+=(SERVICE_CASES=gsmps) ;;
    peers[0-9]*)
      n=${set#peers}
      limit=$((n <= 1 ? 140 : 170)) script=share_paths.sh
      service_args "$n"
      env_args+=(SERVICE_CASES="bare mpscap" CAP_PCT="${CAP_PCT:-25}") ;;
    arrive1) limit=260 script=share_paths.sh pick='^service'
      env_args=(PARTS=service SERVICE_BATCH=12 TRAININGS=1 ARRIVE_AFTER=10 AFTER_SECONDS=12
        SERVICE_SECONDS=45 SERVICE_CASES="alone gsmps gsmpsbeside" CAP_PCT="${CAP_PCT:-25}") ;;
    llm[0-9]*)
      n=${set#llm}
      limit=330 script=share_paths.sh
      env_args=(SERVICE=llm LLM_RATE=2.5 SERVICE_SECONDS=30 PAUSE_PERIOD=3 PARTS=service
        TRAININGS="$n" SERVICE_CASES="${LLM_CASES:-alone bare mpscap gsmps gsiso}"
        CAP_PCT="${CAP_PCT:-25}" DEADLINE=250) ;;
    noroom) limit=240 script=share_paths.sh pick='^(service|phases|llm)'
      env_args=(SERVICE=llm LLM_RATE=2.5 LLM_UTIL=0.92 ARRIVE_AFTER=6 AFTER_SECONDS=12
        SERVICE_SECONDS=25 PARTS=service TRAININGS=1 SERVICE_CASES="${NOROOM_CASES:-alone gsmps}") ;;
    notebook) limit=230 script=notebook.sh pick='^(result|losses)'
      env_args=(NB_GIB=70 TRAIN_GIB=74 CASES="alone gshare" HOST_WARM_GIB="${HOST_WARM_GIB:-100}"
        TRAIN_TRACE=1) ;;
    startup) limit=150 script=mem_startup.sh pick='^round='
      env_args=(GIB=74 ROUNDS=3 CASES="bare_solo gshare_solo") ;;
    floor) limit=150 script=priority.sh pick='^case='
      env_args=(SERVICE=llm LLM_RATE=2.5 LLM_UTIL=0.5 SERVICE_SECONDS=20 CASES="alone gshare0"
        MPS_MODE=auto) ;;
    alone60) limit=120 script=priority.sh pick='^case='
      env_args=(SERVICE_BATCH=12 SERVICE_SECONDS=60 CASES=alone) ;;
    decodeprof) limit=330 script=mps_floor.sh pick='^(case=|compare |kernel=|total )'
      env_args=(SHAPES="decode:1 decode:8 decode:32" CASES="bare mps gsmps" REPLAYS=200) ;;
  esac
  # Rounds (noroom with NOROOM_ROUNDS > 1): round k's service draws its arrivals from seed k,
  # into $R/$set/r<k>/ and $R/$set.r<k>.log; each round under the set's limit.
  local rounds=1 k t0=$SECONDS rc=0 one seed0=${NOROOM_SEED0:-0}
  local -a outs=("$R/$set") logs=("$R/$set.log")
  if [[ $set == noroom && ${NOROOM_ROUNDS:-1} -gt 1 ]]; then
    rounds=$NOROOM_ROUNDS outs=() logs=()
    for ((k = 1; k <= rounds; k++)); do
      outs+=("$R/$set/r$k") logs+=("$R/$set.r$k.log")
    done
  fi
  for ((k = 0; k < rounds; k++)); do
    local -a round_env=()
    ((rounds > 1)) && round_env=(LLM_ARGS="--seed $((k + 1 + seed0)) ${LLM_ARGS:-}")
    env "${env_args[@]}" "${round_env[@]}" OUT="${outs[k]}" timeout -k 10 "$limit" \
      bash "$bench/$script" "$dir" >"${logs[k]}" 2>&1
    one=$?
    ((one != 0)) && rc=$one
  done
  {
    echo "$set rc=$rc $((SECONDS - t0))s"
    ((rounds > 1)) && echo "$set rounds=$rounds seeds=$((seed0 + 1))-$((seed0 + rounds))"
    grep -hE "$pick" "${logs[@]}"
    # The service's own count of the times it fell behind its arrivals, how long it was behind
    # in all and how many backlogs lasted the rule's 0.5 s cap (its census), and the daemon's
    # handoffs and completions in the no-room case.
    find "$R/$set" -name 'service_census.*' \( -path '*gsmps*' -o -path '*gslowiso*' \) -exec grep -h '#behind' {} + 2>/dev/null |
      sed "s/^/$set service /"
    # The trainings' census summed per case (the folder above the census files): refused
    # beside turns, waits for a service that fell behind, submissions sent to the partition.
    find "$R/$set" -name 'census.*' -exec grep -HE '^#(beside_denied|behind|narrowed) ' {} + \
      2>/dev/null | awk -v set="$set" '{ split($1, f, ":"); n = split(f[1], p, "/")
        s[set " " p[n - 1] " trainings " f[2]] += $2 } END { for (k in s) print k, s[k] }' | sort
    if [[ $set == noroom ]]; then
      for c in gsmps gsiso gslowiso; do
        find "$R/$set" -name daemon.log -path "*$c*" \
          -exec grep -hE 'handoff|COMPLETED|bound' {} + 2>/dev/null | sed "s/^/$c /"
      done
    fi
    if [[ $set == noroom || $set == llm* ]]; then
      # Request by request against the service alone (same arrivals): the TTFT p99 of ~55
      # requests is close to the slowest one; the paired medians say whether all got slower.
      local -a details=() pool=()
      local base d o spans=0,6,12,18,30  # the training arrives at 6 s (noroom)
      [[ $set == llm* ]] && spans=0,30    # the trainings in turns through the window
      for o in "${outs[@]}"; do
        mapfile -t details < <(find "$o" -name detail.txt | sort)
        base=""
        for d in "${details[@]}"; do [[ $d == */alone/* ]] && base=$d; done
        for d in "${details[@]}"; do
          if [[ -n $base && $d != "$base" ]]; then
            "${PYTHON:-python3}" "$bench/llm_pairs.py" "$base" "$d" --spans "$spans" 2>&1 |
              sed "s|$R/$set/||"
            pool+=("$base" "$d")
          fi
        done
      done
      # Every round's (alone, case) pairs pooled, per case (the case's folder name).
      if ((rounds > 1)); then
        local c
        for c in $(printf '%s\n' "${pool[@]}" | sed -n 's|.*/service/\([^/]*\)/.*|\1|p' |
          grep -vx alone | sort -u); do
          local -a mine=()
          for ((k = 0; k < ${#pool[@]}; k += 2)); do
            [[ ${pool[k + 1]} == */service/$c/* ]] && mine+=("${pool[k]}" "${pool[k + 1]}")
          done
          "${PYTHON:-python3}" "$bench/llm_pairs.py" --pool "${mine[@]}" 2>&1 | sed "s/^/$c /"
        done
      fi
    fi
    if [[ $set == notebook ]]; then
      for c in alone gshare; do
        grep -hE 'trace (start|ready|done)|trace gpu 0 ' "$R/$set/${c}_train.err" 2>/dev/null |
          sed "s/^/$c /"
      done
    fi
  } >>"$summary"
  return "$rc"
}

for set in "$@"; do
  case $set in
    pair | pairprep | service[0-9]* | peers[0-9]* | llm[0-9]* | arrive1 | noroom | notebook | startup | \
      floor | alone60 | decodeprof) ;;
    *) echo "share_items: unknown set $set (see --help)" >&2; exit 2 ;;
  esac
done
fails=0
for set in "$@"; do
  run_set "$set" || fails=$((fails + 1))
done
if [[ ${PACK:-1} == 1 ]]; then
  tar czf "$R/raw.tgz" -C "$R" "$@" 2>/dev/null && (cd "$R" && rm -rf -- "$@")
fi
((fails == 0))
