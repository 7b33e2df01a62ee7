#!/usr/bin/env bash
# Issue 45 item 1, an LLM service's start-up as vLLM does it, under churn: while other jobs
# start, stop and swap on the GPU, the free memory a starting service is told never rises
# across its profiling window, and its KV pool fits what it is told. The service is
# test/bench/llm_service.py: weights, a free-memory read, a profiling forward, a second read
# (`free_rose`; --strict exits 3 when it rose), a KV pool of util x total - peak, CUDA graphs,
# then 5 s of serving.
#
#   test/gpu/startup_churn.sh GSHARE_DIR       (GSHARE_DIR holds gshare and libgshare.so)
#
# Steps (STEPS, default "bare churn": either or both, in this order):
#   bare:  llm_service.py once, no gshare and no churn (util BARE_UTIL, default the first of
#          UTILS): the reference for free memory, pool and TTFT.
#   churn: a private daemon (own socket and state under a scratch folder, quantum QUANTUM,
#          [memory] engine swap and host_budget HOST_BUDGET; stopped at the end, also on error
#          or signal). In the background for the whole step, the churn: short trainings
#          (test/bench/mem_train.py --gib G --target-seconds 3..12), `gshare run -J churnN` each,
#          G cycling through CHURN_GIB, at most CHURN_MAX (2) at a time, started 1.0-4.0 s
#          apart (bash RANDOM seeded with CHURN_SEED, so the sizes, lengths and gaps repeat).
#          Once two have started and 10 s have passed, in the foreground, STARTS services one
#          after the other, each until it ends: `gshare run -p SVC_PRIORITY -J svcN --
#          llm_service.py --seconds 5 --rate 4 --util U --strict --out svcN.ttft`, U cycling
#          through UTILS. `gshare status --json` once a second into status.jsonl, which also
#          drives a host-memory guard (below).
# Sizes on one H200 (the driver's total 139.8 GiB, ~125 GiB of host RAM), the defaults:
#   service: util x total less the profiling activations (weights 10.8 GiB + KV pool), plus
#            graphs and its context: ~42 GiB at 0.3, ~70 GiB at 0.5;
#   churn:   G + ~0.8 GiB (context) each, G in 51..54, so any two running at once take
#            ~104..109 GiB: with a 0.3 service ~5-10 GiB more than the GPU has, with a 0.5
#            service ~33-38 GiB more; one training beside any service fits (shared mode).
#            Swapping is forced whenever two trainings run (and only then).
#   host:    swapped-out (and staged) data is bounded by the daemon's host_budget (HOST_BUDGET,
#            44GiB: the largest overflow, ~38 GiB, plus a margin, so that no grant or waiting
#            allocation of a service waits for the budget). Pinned host pools outlive the data
#            they held (a process keeps its pool until it exits), so each process's pool is at
#            most the most it ever had on the host, <= host_budget. The service runs above the
#            trainings (SVC_PRIORITY 10): its memory is never evicted, only the two trainings'
#            is, so the pools stay within ~2 x 38 GiB (at most 2 x 44). With SVC_PRIORITY=0 the
#            service swaps too (a harder start-up: its weights may go to host memory between
#            its two reads), and three pools may reach ~3 x 38 GiB: the guard is then what
#            holds host memory down. Other sizes: keep (largest pair + service - 139.8) under
#            HOST_BUDGET and 2 x HOST_BUDGET under ~90 GiB.
#   guard:   when the jobs' pinned host pools together pass HOST_GUARD_GIB (85) or the host's
#            MemAvailable falls below HOST_FLOOR_GIB (16), the churn is stopped (its jobs
#            killed, none started again), the remaining starts are skipped and the run fails.
# Env:
#   OUT            results go to $OUT/startup_churn/ (default ./out)
#   PYTHON         interpreter with torch (default python3)
#   STEPS          "bare churn" (default), "bare" or "churn"; a churn-only run keeps the
#                  bare.* files of an earlier run in the same OUT
#   STARTS         service start-ups under churn (default 6)
#   UTILS          the services' --util, cycled (default "0.3 0.5")
#   BARE_UTIL      the bare run's --util (default the first of UTILS)
#   CHURN_GIB      the trainings' --gib, cycled (default "52 54 51 53"; see Sizes)
#   CHURN_MAX      trainings running at once (default 2)
#   CHURN_SEED     the churn's RANDOM seed (default 45)
#   SVC_PRIORITY   the services' -p (default 10; 0: same priority as the trainings)
#   GPU_OPT        options placing every job (e.g. "--gpu 0" on a machine of several GPUs,
#                  so that they all share one; default none)
#   QUANTUM        the lease's quantum (default 5s: several handoffs per start-up)
#   HOST_BUDGET    [memory] host_budget of the daemon (default 44GiB)
#   HOST_GUARD_GIB, HOST_FLOOR_GIB   the host-memory guard (defaults 85, 16)
#   RUN_TIMEOUT    seconds allowed to each service and each training (default 240)
# Output in $OUT/startup_churn/: summary.txt (and stdout): one line per start-up
#   start=<i|bare> util=<u> rc=<n> free_rose=<true|false|unknown> free_before_gib=<x>
#   free_after_gib=<x> pool_gib=<KV pool> told_total_gib=<total it was told>
#   churn_jobs_running=<trainings started and not ended when it started> ttft_p99_ms=<x>
#   weights_gib= slots= graphs= pool_fits=<pool <= free_after> oom=<bool> churn_events=<churn
#   starts and ends between its launch and its first request> startup_s=<launch to first
#   request> wall_s= result=<ok|free_rose|oom|timeout|exitN|no_result|pool_exceeds_free>
# (`-` where a value is missing: with rc 3 the figures come from its stderr line and pool_gib
# is the pool it would have made), then
#   totals starts=<n> free_rose=<n> failures=<n> bare=<result|not_run> churn_started=<n>
#   churn_ended=<n> churn_failed=<ended with a status other than 0> churn_killed=<ended by this
#   script> swapped_peak_gib=<x> pinned_peak_gib=<x> mem_available_min_gib=<x>
#   exclusive_samples=<a>/<b> host_guard=<ok|tripped> verdict=<PASS|FAIL>
# and bare.{out,err,ttft}, svcN.{out,err,ttft}, churn/churnN.{out,err}, churn.log (`churnN
# start|end|killed <epoch> ...`), times.txt, status.jsonl, status_end.json, config.toml,
# daemon.log.
# Cost (an estimate, not measured): the bare run ~20-30 s (import, 10.8 GiB of weights, the
# pool, 6 graphs, 8 warm-up requests, the 5 s window); under churn each start-up ~25-40 s (the
# trainings' evictions for its pool, the quantum when SVC_PRIORITY=0); daemon, 10 s churn lead
# and teardown ~20 s: ~3-4.5 min for the defaults, ~2.5 min with STARTS=4.
# Exit: 0 when no start-up (bare included) saw its free memory rise and none failed, and the
# churn started and the guard did not trip; 1 otherwise; 2 on usage errors.
set -uo pipefail
read -r -a gpu_opt <<<"${GPU_OPT:-}"

me=startup_churn
# shellcheck source=../bench/mem_common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../bench/mem_common.sh"
mem_setup "$@"

usage_err() { say "$*"; exit 2; }
is_num() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$|^\.[0-9]+$ ]]; }

steps_run=" ${STEPS:-bare churn} "
for s in $steps_run; do
  [[ $s == bare || $s == churn ]] || usage_err "unknown step '$s' in STEPS (bare, churn)"
done
starts=${STARTS:-6}
[[ $starts =~ ^[1-9][0-9]*$ ]] || usage_err "STARTS must be a whole number >= 1, not '$starts'"
read -r -a utils <<< "${UTILS:-0.3 0.5}"
((${#utils[@]})) || usage_err "UTILS is empty"
for u in "${utils[@]}" "${BARE_UTIL:-${utils[0]}}"; do
  if ! is_num "$u" || ! awk -v u="$u" 'BEGIN { exit !(u > 0 && u < 1) }'; then
    usage_err "UTILS and BARE_UTIL: numbers between 0 and 1, not '$u'"
  fi
done
bare_util=${BARE_UTIL:-${utils[0]}}
read -r -a churn_gib <<< "${CHURN_GIB:-52 54 51 53}"
((${#churn_gib[@]})) || usage_err "CHURN_GIB is empty"
for g in "${churn_gib[@]}"; do
  if ! is_num "$g" || ! awk -v g="$g" 'BEGIN { exit !(g > 0) }'; then
    usage_err "CHURN_GIB: GiB > 0, not '$g'"
  fi
done
churn_max=${CHURN_MAX:-2}
[[ $churn_max =~ ^[1-9][0-9]*$ ]] || usage_err "CHURN_MAX must be a whole number >= 1"
churn_seed=${CHURN_SEED:-45}
[[ $churn_seed =~ ^[0-9]+$ ]] || usage_err "CHURN_SEED must be a whole number"
svc_prio=${SVC_PRIORITY:-10}
if ! [[ $svc_prio =~ ^-?[0-9]{1,4}$ ]] || ((svc_prio < -1000 || svc_prio > 1000)); then
  usage_err "SVC_PRIORITY must be a whole number in -1000..1000"
fi
quantum=${QUANTUM:-5s}
HOST_BUDGET=${HOST_BUDGET:-44GiB}   # write_config puts it in [memory]
guard_gib=${HOST_GUARD_GIB:-85}
floor_gib=${HOST_FLOOR_GIB:-16}
if ! is_num "$guard_gib" || ! is_num "$floor_gib"; then
  usage_err "HOST_GUARD_GIB and HOST_FLOOR_GIB must be numbers"
fi
tmo=${RUN_TIMEOUT:-240}
[[ $tmo =~ ^[1-9][0-9]*$ ]] || usage_err "RUN_TIMEOUT must be whole seconds >= 1"
svc_args=(--seconds 5 --rate 4 --strict)

mkdir -p "${OUT:-./out}/startup_churn" || exit 2
out="$(cd "${OUT:-./out}/startup_churn" && pwd)" || exit 2
if [[ $steps_run == *" bare "* ]]; then
  rm -rf "${out:?}"/*
else
  find "$out" -mindepth 1 -maxdepth 1 ! -name 'bare.*' -exec rm -rf {} +
fi
summary="$out/summary.txt"
times="$out/times.txt"
clog="$out/churn.log"
cdir="$out/churn"
mkdir -p "$cdir"
: >"$clog"
echo "# key epoch [...]" >"$times"

churn_pid="" guard_pid="" cfg=""
# On any exit: the churn (it kills and logs its trainings, each under timeout -k), the poller
# and a service still running get TERM; then the daemon stops, its log is kept, and
# mem_cleanup removes the scratch folder.
# shellcheck disable=SC2317  # run by the EXIT trap
sc_exit() {
  trap - EXIT
  trap "" TERM INT   # a second signal (an outer timeout signals the group too) must not cut this short
  local p
  for p in $churn_pid $guard_pid $fg_pid; do kill -TERM "$p" 2>/dev/null; done
  for p in $churn_pid $guard_pid $fg_pid; do wait "$p" 2>/dev/null; done
  churn_pid="" guard_pid="" fg_pid=""
  daemon_down
  [[ -n $cfg ]] && cp "$work/state/daemon.log" "$out/daemon.log" 2>/dev/null
  mem_cleanup
}
trap sc_exit EXIT

# Helpers: startup_churn_parse.py reads one service run, startup_churn_poll.py one status sample.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

{
  echo "# startup_churn.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) gshare=$gshare"
  echo "# gpu: $(gpu_line)"
  echo "# steps=${steps_run# } starts=$starts utils=${utils[*]} bare_util=$bare_util churn_gib=${churn_gib[*]} churn_max=$churn_max seed=$churn_seed svc_priority=$svc_prio quantum=$quantum host_budget=$HOST_BUDGET guard=${guard_gib}GiB floor=${floor_gib}GiB"
  echo "# host: $(awk '/^MemTotal:|^MemAvailable:/ { printf "%s %.1f GiB ", $1, $2 / 1048576 }' /proc/meminfo)"
} >"$summary"
used_mib=$(timeout 20 nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1)
[[ $used_mib =~ ^[0-9]+$ ]] && ((used_mib > 2048)) &&
  say "warning: the GPU already has $used_mib MiB in use (other processes distort the figures)"

n_rose=0 n_fail=0 n_starts=0 bare_result=not_run last_result=""

# result_line LABEL UTIL RC OUT ERR RUNNING EVENTS T0 T1: the start-up's summary line; counts it.
result_line() {
  local label=$1 u=$2 rc=$3 o=$4 e=$5 running=$6 events=$7 t0=$8 t1=$9 k v line
  local -A f=()
  while IFS='=' read -r k v; do
    [[ -n $k ]] && f[$k]=$v
  done < <("$python" "$here/startup_churn_parse.py" "$o" "$e" "$rc" "$t0" 2>/dev/null)
  line="start=$label util=$u rc=$rc free_rose=${f[free_rose]:--}"
  for k in free_before_gib free_after_gib pool_gib told_total_gib; do line+=" $k=${f[$k]:--}"; done
  line+=" churn_jobs_running=$running ttft_p99_ms=${f[ttft_p99_ms]:--}"
  for k in weights_gib slots graphs pool_fits oom; do line+=" $k=${f[$k]:--}"; done
  line+=" churn_events=$events startup_s=${f[startup_s]:--}"
  line+=" wall_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') result=${f[result]:-unparsed}"
  echo "$line" | tee -a "$summary"
  last_result=${f[result]:-unparsed}
  case $last_result in
    ok) ;;
    free_rose) n_rose=$((n_rose + 1)); say "start $label: free memory rose while profiling" ;;
    *)
      n_fail=$((n_fail + 1))
      say "start $label: $last_result (rc $rc)"
      tail -4 "$e" 2>/dev/null | sed 's/^/  | /' >&2
      ;;
  esac
}

# The churn's log (churn.log): started and not ended; starts and ends within [A, B].
churn_running() { awk '$2 == "start" { n++ } $2 == "end" || $2 == "killed" { n-- } END { print n + 0 }' "$clog"; }
churn_events() { awk -v a="$1" -v b="$2" '$3 + 0 >= a + 0 && $3 + 0 <= b + 0 { n++ } END { print n + 0 }' "$clog"; }

# churn_loop (a background subshell): trainings under `gshare run`, at most churn_max at once,
# until TERM (or the guard's file): then its trainings are killed and logged.
churn_logged() {  # PID RC KIND: logs the end of the training PID, forgets it
  local i
  for i in "${!c_pids[@]}"; do
    if [[ ${c_pids[$i]} == "$1" ]]; then
      echo "${c_names[$i]} $3 $(now) $2" >>"$clog"
      unset 'c_pids[i]' 'c_names[i]'
    fi
  done
  c_pids=("${c_pids[@]}")
  c_names=("${c_names[@]}")
}
churn_reap() {  # logs the trainings that ended by themselves
  local p rc
  for p in "${c_pids[@]}"; do
    if ! kill -0 "$p" 2>/dev/null; then
      wait "$p"
      rc=$?
      churn_logged "$p" "$rc" end
    fi
  done
}
churn_stop() {
  trap "" TERM INT
  local p rc
  churn_reap
  for p in "${c_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${c_pids[@]}"; do
    wait "$p"   # bounded: each runs under timeout -k 10, which passes the TERM on
    rc=$?
    churn_logged "$p" "$rc" killed
  done
  exit 0
}
churn_loop() {
  trap churn_stop TERM INT
  RANDOM=$churn_seed
  c_pids=() c_names=()
  local n=0 gib secs d s w rc
  while :; do
    churn_reap
    [[ -e $work/guard ]] && churn_stop
    if ((${#c_pids[@]} >= churn_max)); then
      w=""
      wait -n -p w "${c_pids[@]}"
      rc=$?
      [[ -n $w ]] && churn_logged "$w" "$rc" end
      continue
    fi
    n=$((n + 1))
    gib=${churn_gib[(n - 1) % ${#churn_gib[@]}]}
    secs=$((3 + RANDOM % 10))
    timeout -k 10 "$tmo" "$gshare" --config "$cfg" run "${gpu_opt[@]}" -J "churn$n" -- \
      "$python" "$bench/mem_train.py" --gib "$gib" --target-seconds "$secs" --seed "$n" \
      --log-every 5 >"$cdir/churn$n.out" 2>"$cdir/churn$n.err" &
    c_pids+=("$!")
    c_names+=("churn$n")
    echo "churn$n start $(now) gib=$gib target_s=$secs" >>"$clog"
    d=$((10 + RANDOM % 31))   # tenths of a second: 1.0 .. 4.0 s
    sleep "$((d / 10)).$((d % 10))" &
    s=$!
    while :; do   # the gap, logging each training that ends in it when it ends
      w=""
      wait -n -p w "${c_pids[@]}" "$s"
      rc=$?
      [[ -z $w || $w == "$s" ]] && break
      churn_logged "$w" "$rc" end
    done
  done
}

# guard_start: `status --json` once a second into status.jsonl; on a trip of the host guard,
# writes $work/guard (its reason) and stops the churn.
guard_start() {
  (
    trap 'exit 0' TERM
    tripped=""
    while :; do
      verdict=$(status_json | "$python" "$here/startup_churn_poll.py" "$out/status.jsonl" "$work/peaks" \
        "$guard_gib" "$floor_gib" 2>/dev/null)
      if [[ -z $tripped && $verdict == trip* ]]; then
        tripped=1
        echo "${verdict#trip }" >"$work/guard"
        say "host guard: ${verdict#trip }: stopping the churn"
        kill -TERM "$churn_pid" 2>/dev/null
      fi
      sleep 1 &
      wait "$!"
    done
  ) &
  guard_pid=$!
}

if [[ $steps_run == *" bare "* ]]; then
  say "bare: llm_service.py --util $bare_util, no gshare, no churn"
  t0=$(now)
  echo "bare_start $t0" >>"$times"
  bounded "$tmo" "$python" "$bench/llm_service.py" "${svc_args[@]}" --util "$bare_util" \
    --out "$out/bare.ttft" >"$out/bare.out" 2>"$out/bare.err"
  rc=$?
  t1=$(now)
  echo "bare_end $t1 $rc" >>"$times"
  result_line bare "$bare_util" "$rc" "$out/bare.out" "$out/bare.err" 0 0 "$t0" "$t1"
  bare_result=$last_result
fi

churn_started=0 churn_ended=0 churn_failed=0 churn_killed=0 guard=ok peaks="- - - - -"
if [[ $steps_run == *" churn "* ]]; then
  cfg="$work/config.toml"
  ENGINE=swap write_config "$cfg" "$work" "$quantum"
  cp "$cfg" "$out/config.toml"
  daemon_up "$cfg" || exit 1
  say "churn: trainings of ${churn_gib[*]} GiB, at most $churn_max at once (seed $churn_seed)"
  echo "churn_start $(now)" >>"$times"
  churn_loop &
  churn_pid=$!
  guard_start
  t_lead=$SECONDS
  while (($(awk '$2 == "start"' "$clog" | wc -l) < 2 || SECONDS - t_lead < 10)) &&
        ((SECONDS - t_lead < 60)); do
    [[ -e $work/guard ]] && break
    kill -0 "$churn_pid" 2>/dev/null || { say "the churn loop ended early"; break; }
    sleep 0.5
  done
  for ((i = 1; i <= starts; i++)); do
    if [[ -e $work/guard ]]; then
      say "host guard tripped ($(cat "$work/guard")): the remaining start-ups are skipped"
      break
    fi
    u=${utils[(i - 1) % ${#utils[@]}]}
    running=$(churn_running)
    say "start $i: llm_service.py --util $u under gshare, $running training(s) running"
    t0=$(now)
    echo "svc${i}_start $t0 util=$u churn_running=$running" >>"$times"
    bounded "$tmo" "$gshare" --config "$cfg" run "${gpu_opt[@]}" -p "$svc_prio" -J "svc$i" -- \
      "$python" "$bench/llm_service.py" "${svc_args[@]}" --util "$u" --out "$out/svc$i.ttft" \
      >"$out/svc$i.out" 2>"$out/svc$i.err"
    rc=$?
    t1=$(now)
    echo "svc${i}_end $t1 $rc" >>"$times"
    # Churn starts and ends between the launch and the first request (the whole start-up).
    ws=$(awk '$1 == "window_start" { print $2; exit }' "$out/svc$i.out" 2>/dev/null)
    events=$(churn_events "$t0" "${ws:-$t1}")
    n_starts=$((n_starts + 1))
    result_line "$i" "$u" "$rc" "$out/svc$i.out" "$out/svc$i.err" "$running" "$events" "$t0" "$t1"
  done
  status_json >"$out/status_end.json"
  kill -TERM "$churn_pid" 2>/dev/null
  wait "$churn_pid" 2>/dev/null
  churn_pid=""
  kill -TERM "$guard_pid" 2>/dev/null
  wait "$guard_pid" 2>/dev/null
  guard_pid=""
  echo "churn_stop $(now)" >>"$times"
  read -r churn_started churn_ended churn_failed churn_killed < <(awk '
    $2 == "start" { s++ } $2 == "end" { e++; if ($4 != 0) f++ } $2 == "killed" { k++ }
    END { print s + 0, e + 0, f + 0, k + 0 }' "$clog")
  [[ -e $work/guard ]] && guard="tripped"
  [[ -s $work/peaks ]] && peaks=$(cat "$work/peaks")
fi

read -r p_swapped p_pinned p_excl p_samples p_avail <<< "$peaks"
fmt() { awk -v x="$1" 'BEGIN { if (x == "-" || x == "inf") print "-"; else printf "%.1f", x }'; }
verdict=PASS
((n_rose == 0 && n_fail == 0)) || verdict=FAIL
[[ $guard == ok ]] || verdict=FAIL
[[ $steps_run == *" churn "* ]] && ((churn_started == 0)) && verdict=FAIL
echo "totals starts=$n_starts free_rose=$n_rose failures=$n_fail bare=$bare_result" \
  "churn_started=$churn_started churn_ended=$churn_ended churn_failed=$churn_failed" \
  "churn_killed=$churn_killed swapped_peak_gib=$(fmt "$p_swapped") pinned_peak_gib=$(fmt "$p_pinned")" \
  "mem_available_min_gib=$(fmt "$p_avail") exclusive_samples=$p_excl/$p_samples host_guard=$guard" \
  "verdict=$verdict" | tee -a "$summary"
if [[ $steps_run == *" churn "* ]]; then
  ((churn_started == 0)) && say "the churn started no training"
  ((churn_failed > 0)) && say "warning: $churn_failed training(s) of the churn failed (churn/*.err)"
  awk -v x="$p_swapped" 'BEGIN { exit !(x == "-" || x + 0 < 0.01) }' &&
    say "warning: no sample showed swapped-out memory (did the trainings overflow the GPU?)"
fi
[[ $guard == ok ]] || say "host guard: $(cat "$work/guard" 2>/dev/null)"
say "results in $out"
[[ $verdict == PASS ]] || exit 1
exit 0
