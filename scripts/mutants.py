#!/usr/bin/env python3
"""A mutation pass over the daemon's policy, authorization, queue and store and the shim's lanes:
each mutant below changes one place of the source (a text replaced exactly once), the unit tests
are rebuilt and run, and the mutant is caught when they fail. A mutant of shim code that only a
process under the fake driver reaches names an end-to-end test instead (a test/e2e file and a
-k substring): the whole tree is rebuilt and that test run (test/e2e/run_part.py). The source is
restored after each, also on Ctrl-C. Prints a Markdown table (docs/benchmarks.md keeps the last
one).

  scripts/mutants.py BUILD_DIR [-k SUBSTRING]...
  scripts/mutants.py --check

BUILD_DIR: a configured build of this tree (e.g. build/, `cmake -S . -B build -G Ninja`).
-k: run only the mutants whose id or file contains one of the substrings.
--check: build and run nothing; exit 1, naming each, when a mutant's text is not in its file
exactly once (the source moved on under it), 0 otherwise (scripts/test.sh runs it)."""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

# (id, file, text, replacement, what it breaks[, (e2e file, -k substring)])
MUTANTS = [
    ("ledger-suspended", "src/policy/memory_ledger.cc",
     "    if (suspended_.count(e.job) != 0) continue;", "",
     "a suspended job is an eviction victim"),
    ("ledger-demand", "src/policy/memory_ledger.cc",
     "      missing += r.demand;", "",
     "a waiting allocation's demand left out of the room made"),
    ("ledger-lru", "src/policy/memory_ledger.cc", "a.last < b.last", "a.last > b.last",
     "most recently run evicted first"),
    ("grant-order-priority", "src/policy/grant_order.cc",
     "return ja.priority > jb.priority;", "return ja.priority < jb.priority;",
     "lower priority granted first"),
    ("admission-per-user", "src/policy/admission.cc",
     "user_running >= limits.max_running_per_user", "user_running > limits.max_running_per_user",
     "max_running_per_user off by one"),
    ("access-ceiling", "src/policy/access.cc", "std::max(", "std::min(",
     "a ceiling of several entries is their lowest"),
    ("submit-ceiling", "src/daemon/jobs/job_requests.cc",
     "  if (st.ok()) st = access_.CheckPriority(c, r.priority);\n"
     "  if (!st.ok()) return reply_(c, ErrorReply(st.message()));\n"
     "  JobPayload payload;",
     "  if (!st.ok()) return reply_(c, ErrorReply(st.message()));\n"
     "  JobPayload payload;",
     "no priority ceiling at submit"),
    ("run-ceiling", "src/daemon/jobs/job_requests.cc",
     "  if (st.ok()) st = access_.CheckPriority(c, r.priority);\n"
     "  if (!st.ok()) return reply_(c, ErrorReply(st.message()));\n"
     "  r.uid = c.uid;",
     "  if (!st.ok()) return reply_(c, ErrorReply(st.message()));\n"
     "  r.uid = c.uid;",
     "no priority ceiling at `gshare run`'s registration"),
    ("set-priority-ceiling", "src/daemon/jobs/job_control.cc",
     "if (st.ok() && action == \"set-priority\") st = p_.access.CheckPriority(c, request.priority);",
     "",
     "no priority ceiling at set-priority (and update -p)"),
    ("run-end-forged", "src/daemon/jobs/job_requests.cc",
     "access_.MayRun(c, r.uid, r.token, parsed->token, id)", "Status::Ok()",
     "anyone may end a re-adopted job (issue 42's hole)"),
    ("may-run-any-uid", "src/daemon/state/access_guard.cc",
     "(c.uid == owner || c.uid == 0) &&", "",
     "another user with the job's token may report its end"),
    ("attach-any-uid", "src/daemon/jobs/job_requests.cc",
     " ||\n      (c.uid != it->second->record.uid && c.uid != 0)) {", ") {",
     "a supervisor attaches as any uid"),
    ("router-senders", "src/daemon/server/request_router.cc",
     "if ((rule->senders & SenderOf(c.kind)) == 0) {", "if (false) {",
     "a shim or runner connection may turn into a CLI one"),
    ("router-admin", "src/daemon/server/request_router.cc",
     "(rule->authority == Authority::kAdmin && !parts_.access.IsAdmin(c))", "false",
     "admin-only requests from anyone"),
    ("control-owner", "src/daemon/state/access_guard.cc",
     "if (!owner || MaySteer(rules_, Who(c), *owner)) return Status::Ok();",
     "return Status::Ok();", "anyone steers anyone's job"),
    ("hide-details", "src/daemon/state/access_guard.cc",
     "  if (MaySteer(rules_, Who(c), uid->get<uint32_t>())) return;", "  return;",
     "another user's command and cwd shown"),
    ("queue-dirty", "src/daemon/jobs/batch_queue.cc",
     "  if (IsFinal(state)) final_states_[id] = state;\n  dirty_ = true;",
     "  if (IsFinal(state)) final_states_[id] = state;", "an ended job does not wake the queue"),
    ("row-slurm-step", "src/model/job_fields.h",
     '  X(slurm_step,       "slurm_step",       "slurm_step",       kSlurm,     false) \\\n', "",
     "slurm_step's row left out of the field table (a field added without its row)"),
    ("row-held", "src/store/job_row.cc", "*out = sqlite3_column_int(stmt, col) != 0;",
     "*out = false;", "a bool column (held) read as false"),
    ("row-optional", "src/store/job_row.cc", "*out = ColumnOptional<T>(stmt, col);",
     "*out = std::nullopt;", "optional columns (times, exit, pids) read as NULL"),
    ("row-argv", "src/store/job_row.cc",
     'if (!arg.is_string()) return Status::Error("argv holds a non-string");',
     "if (false) return Status::Ok();", "a non-string argv throws out of the store"),
    ("json-array-null", "src/ipc/job_json.cc",
     "case JobFieldShown::kArrayTask: return r.IsArrayTask();",
     "case JobFieldShown::kArrayTask: return true;", "a job that is no array task gets 0 array fields, not null"),
    ("client-reply-bound", "src/ipc/frame_io.cc", "proto::CheckHeader(h, max_payload);",
     "proto::CheckHeader(h, UINT32_MAX);", "a client reads a reply of any length"),
    ("pool-query-proof", "src/daemon/gpu/shim_sessions.cc",
     "const int fd = ProvesJob(c, q.job_id, q.token) && t_.send_fd &&",
     "const int fd = t_.send_fd &&",
     "a host pool to a query that does not prove its job"),
    ("pool-query-uid", "src/daemon/gpu/shim_sessions.cc", "? p_.pools.For(c.uid)",
     "? p_.pools.For(0)", "one host pool for every user"),
    ("ledger-shared-once", "src/policy/memory_ledger_host.cc",
     "  if (!all_users) return n + SharedPoolFree(uid);", "  if (!all_users) return n;",
     "a user's shared pool left out of their host budget"),
    ("shared-pool-owner", "shim/memory/shared_pool.cc", "    if (hdr_->owner[u] == me) {",
     "    if (hdr_->owner[u] != 0) {", "a process frees another's extents"),
    ("shared-pool-reclaim", "shim/memory/shared_pool.cc",
     "    if (s != slot_ && hdr_->slots[s].pid != 0 && !SlotAliveLocked(s)) freed += FreeSlotLocked(s);",
     "", "a gone process's extents never come back"),
    ("mps-isolation", "src/policy/mps_choice.cc", "  if (job.isolation) {",
     "  if (false) {", "a job asking for isolation becomes an MPS client"),
    ("mps-opt-out-off", "include/gshare/job_env.h", " || v == \"off\"", "",
     "GSHARE_MPS=off does not ask for isolation"),
    ("mps-opt-out-late-any", "shim/lease/lease_client.cc",
     "!said_mps_opt_out && ConcurrentLanes() && opt_out", "!said_mps_opt_out && opt_out",
     "a job launched outside MPS is told its GSHARE_MPS=0 came too late",
     ("test_mps_backend", "isolation_asked")),
    ("mps-outside-kept", "src/daemon/gpu/mps_servers.cc",
     "  std::erase_if(outside_, [this](const auto& o) { return !live_(o.first); });\n", "",
     "status lists ended jobs as running outside MPS"),
    ("mps-outside-after-client", "src/daemon/gpu/mps_servers.cc", "  outside_.erase(r.id);\n", "",
     "a job that became a client is still listed as outside MPS"),
    ("mps-arrival-equal", "src/policy/mps_choice.cc",
     "*arrival.top_priority <= arrival.priority", "*arrival.top_priority < arrival.priority",
     "a client of equal priority keeps an arriving job outside MPS"),
    ("mps-arrival-env-kept", "shim/lease/mps_arrival.cc", "      unsetenv(name);\n", "",
     "a job the daemon keeps outside MPS at its arrival still reaches the MPS server",
     ("test_mps_backend", "arriving_without_room")),
    ("mps-arrival-unproven", "src/daemon/gpu/shim_sessions.cc",
     "  if (ProvesJob(c, q.job_id, q.token)) {\n    m.known = 1;",
     "  if (true) {\n    m.known = 1;",
     "anyone who names a job can keep it outside MPS"),
    ("mps-arrival-unproven-system", "src/daemon/gpu/shim_sessions.cc",
     "  if (ProvesJob(c, q.job_id, q.token)) {\n    m.known = 1;",
     "  if (true) {\n    m.known = 1;",
     "another Unix user's forged query keeps a job outside MPS on the system daemon",
     ("test_forged_frames", "move_a_job_out_of_mps")),
    ("mps-arrival-joined-forgotten", "src/daemon/gpu/shim_sessions.cc",
     "  } else if (place && place->joined) {", "  } else if (false) {",
     "a job's later process leaves MPS while its first one is a client",
     ("test_mps_backend", "arriving_without_room")),
    ("mps-arrival-outside-forgotten", "src/daemon/gpu/shim_sessions.cc",
     "  if (!place && m.known == 1 && p_.mps.Outside(", "  if (false && p_.mps.Outside(",
     "a job's later process joins MPS while its first one stayed outside",
     ("test_mps_backend", "arriving_without_room")),
    ("mps-arrival-no-wait", "src/daemon/gpu/shim_sessions.cc",
     "    if (may_wait && !decide_now && waited < std::chrono::seconds(mps.join_wait_seconds)) {",
     "    if (false) {",
     "a job arriving without room runs outside at once instead of waiting for room to join",
     ("test_mps_backend", "arriving_without_room")),
    ("mps-arrival-wait-unbounded", "src/daemon/gpu/shim_sessions.cc",
     "    if (may_wait && !decide_now && waited < std::chrono::seconds(mps.join_wait_seconds)) {",
     "    if (may_wait && !decide_now) {",
     "a job arriving without room waits past [mps] join_wait_seconds",
     ("test_mps_backend", "arriving_without_room")),
    ("mps-arrival-shim-no-retry", "shim/lease/mps_arrival.cc",
     "    if (answer != proto::kMpsJoinWait) {", "    if (true) {",
     "the shim takes the daemon's \"not yet\" for a join and reaches the server without room",
     ("test_mps_backend", "arriving_without_room")),
    ("mps-arrival-signal-ignored", "shim/lease/mps_arrival.cc",
     "    decide_now = ppoll(nullptr, 0, &pause, &old) < 0 && errno == EINTR;",
     "    decide_now = ppoll(nullptr, 0, &pause, &old) < 0 && false;",
     "a signal the job catches does not end its wait for room (Ctrl-C waits up to a minute)",
     ("test_mps_backend", "waits_to_join")),
    ("mps-arrival-signal-kept-blocked", "shim/lease/mps_arrival.cc",
     "    decide_now = ppoll(nullptr, 0, &pause, &old) < 0 && errno == EINTR;",
     "    decide_now = ppoll(nullptr, 0, &pause, nullptr) < 0 && errno == EINTR;",
     "the wait keeps the job's signals blocked through its pauses: a caught Ctrl-C never ends it",
     ("test_mps_backend", "arriving_without_room")),
    ("shim-thread-takes-signals", "shim/shim_thread.h",
     "  pthread_sigmask(SIG_SETMASK, &blocked, &old);",
     "  pthread_sigmask(SIG_BLOCK, nullptr, &old);",
     "the shim's threads take the application's signals (its Ctrl-C handled on a lease thread)",
     ("test_priority_lanes", "shims_threads")),
    ("mps-arrival-decide-now-ignored", "src/daemon/gpu/shim_sessions.cc",
     "    if (may_wait && !decide_now && waited < std::chrono::seconds(mps.join_wait_seconds)) {",
     "    if (may_wait && waited < std::chrono::seconds(mps.join_wait_seconds)) {",
     "the daemon keeps a job that stopped waiting listed as waiting instead of outside",
     ("test_mps_backend", "waits_to_join")),
    ("queue-mps-room-lost", "src/cli/daemon_glance.cc",
     "    for (int64_t id : MpsArrivingJobs(reply.value())) leases[id].mps_arriving = true;",
     "    for (int64_t id : MpsArrivingJobs(reply.value())) leases[id].mps_arriving = false;",
     "queue shows no REASON for a job that waits for room to join an MPS server",
     ("test_mps_backend", "waits_to_join")),
    ("mps-gang", "src/policy/mps_choice.cc", "  } else if (job.gpus != 1) {",
     "  } else if (false) {", "a job of several GPUs becomes an MPS client of one GPU's server"),
    ("batch-cap-beside-always", "src/policy/mps_choice.cc",
     "(settings.cap == BatchCap::kBesideService && gpu.above_batch_client)",
     "settings.cap == BatchCap::kBesideService",
     "beside_service caps a batch job with no service on its GPU"),
    ("batch-cap-default", "src/base/config.h", 'std::string batch_cap = "auto";',
     'std::string batch_cap = "beside_service";',
     "the default caps a batch job that starts beside a service again"),
    ("batch-cap-auto-old-driver", "src/policy/mps_choice.cc",
     "*cuda_driver_version < kGreenContextsCudaVersion", "*cuda_driver_version < 0",
     "auto caps nothing on a driver without green contexts"),
    ("run-isolation-parse", "src/ipc/requests.cc", "    r.job.mps_isolation = it->get<bool>();",
     "", "gshare run's isolation never reaches the daemon"),
    ("past-clock-ahead", "src/base/begin_time.cc",
     "if (dir == Toward::kAhead ? at >= now : at <= now) return at;",
     "if (at >= now) return at;", "a past time's clock (acct --since 12:00) resolves ahead"),
    ("past-yesterday", "src/base/begin_time.cc",
     "if (next_day) day = back ? PreviousDay(*day) : NextDay(*day);",
     "if (next_day) day = NextDay(*day);", "yesterday is tomorrow"),
    ("backlog-period", "shim/lease/backlog_watch.h", "now_ns - last > kLongMul * period",
     "now_ns - last > 100 * kLongMul * period", "a backlog is seen only after 300 periods"),
    ("backlog-wait-release", "shim/lease/priority_lane.cc",
     "if (!HigherBusy(device) || ConcurrentOn(device)) break;",
     "if (!HigherBusy(device)) break;",
     "a client waiting beside a fallen-behind service stays stopped past the backlog's cap",
     ("test_mps_backend", "fell_behind")),
    ("backlog-mark-ignored", "shim/lease/priority_lane.h",
     " ||\n      (mask & slot->behind_seats.load(std::memory_order_relaxed)) != 0) {", ") {",
     "a client runs beside a service that fell behind its arrivals",
     ("test_mps_backend", "fell_behind")),
    ("backlog-cap", "shim/lease/backlog_watch.h",
     "kMaxBehindNs = 500'000'000;", "kMaxBehindNs = 5'000'000'000;",
     "a backlog is the service's new pace only after 5 s (its unit test reads the constant)",
     ("test_mps_backend", "fell_behind")),
    ("census-behind-capped", "shim/lease/priority_lane.cc",
     "const bool capped = now - since >= BacklogWatch::kMaxBehindNs;", "const bool capped = false;",
     "the census never counts or lists a backlog that lasted the cap",
     ("test_mps_backend", "fell_behind")),
    ("narrow-depth-ignored", "shim/lease/sm_partition.cc",
     "  if (depth == 0) return Narrowed{stream, c->green, c->back};",
     "  if (true) return Narrowed{stream, c->green, c->back};",
     "GSHARE_PRIORITY_NARROW_DEPTH is read but a stream's launches on the partition never wait",
     ("test_mps_backend", "depth_bound")),
    ("census-behind-event-span", "shim/lease/priority_lane.cc",
     "LogBehindEvent(l, 'm', now, last_real > 0 ? now - last_real : 0);",
     "LogBehindEvent(l, 'm', now, 0);",
     "the census lists a backlog's mark without how long the job went without a real gap",
     ("test_mps_backend", "fell_behind")),
    ("mps-seats-ignored", "shim/lease/priority_lane.h",
     "(mask & ~slot->mps_seats.load(std::memory_order_relaxed)) != 0 ||", "false ||",
     "a client runs beside a higher job outside MPS (time-sliced with it: takes its slices)",
     ("test_mps_backend", "outside_mps")),
    ("beside-turns-ignored", "shim/lease/priority_lane.h",
     "  if (TakeBesideTurnOn(device)) return true;\n",
     "  return true;\n",
     "every MPS client runs beside a busy service whatever GSHARE_PRIORITY_BESIDE bounds",
     ("test_mps_backend", "beside_turns")),
    ("beside-turns-kept", "shim/lease/priority_lane.cc",
     "    EndBesideTurns(*slot);\n", "",
     "the turns to run beside a busy service are never taken anew after its gaps",
     ("test_mps_backend", "beside_turns")),
    ("beside-turns-default", "shim/lease/beside_turns.h",
     "inline constexpr int kDefaultBesideTurns = 1;",
     "inline constexpr int kDefaultBesideTurns = 0;",
     "every MPS client runs beside a busy service by default, not the measured one at a time",
     ("test_mps_backend", "beside_turns")),
    ("beside-denied-per-look", "shim/lease/priority_lane.cc",
     "    if (!HigherBusy(device) || ConcurrentOn(device)) break;\n",
     "    bool nt = false;\n    if (!HigherBusy(device) || ConcurrentOn(device, &nt)) break;\n"
     "    if (nt && g_census_on) g_census_beside_denied.fetch_add(1);\n",
     "the census counts a refused turn at every look of a waiting client's loop, not once a wait",
     ("test_mps_backend", "beside_turns")),
    ("lanes-never-wait", "shim/lease/priority_lane.cc",
     "  if (!HigherBusy(device)) return;\n  // Once per wait", "  return;\n  // Once per wait",
     "a lower job outside MPS never waits for a busy higher one",
     ("test_priority_lanes", "fills_the_gaps_only")),
    ("sm-partition-default", "shim/lease/sm_partition.h",
     "inline constexpr int kDefaultBusySmPct = 70;", "inline constexpr int kDefaultBusySmPct = 50;",
     "the SM partition's default share is not the measured 70 %",
     ("test_mps_backend", "busy_higher_job")),
    ("wide-bound-shared", "shim/lease/priority_window.h",
     "kWideIdleNs / sharers", "kWideIdleNs",
     "each client queues the whole wide bound"),
    ("pin-ahead-full-blocks", "shim/memory/shared_pool.cc",
     "!skip[b] && FreeUnitsLocked(b) > 0) found = b;", "!skip[b]) found = b;",
     "a holder's pin-ahead pins blocks full of other processes' units"),
    ("restore-footprint", "src/daemon/checkpoint/checkpoint_coordinator.cc",
     "need = std::max(need, footprint->second.bytes);", "(void)footprint;",
     "a restore waits only for the reported memory, not what its checkpoint freed"),
    ("checkpoint-freed-dropped", "src/daemon/checkpoint/checkpoint_engine.cc",
     "    coordinator_.Checkpointed(cc, r.freed_bytes);\n", "",
     "what a checkpoint freed never reaches its restore's room check"),
    ("restore-noroom-keeps-footprint", "src/daemon/checkpoint/checkpoint_engine.cc",
     "    coordinator_.NoRoom(cc.conn);\n", "",
     "a restore that found no room for its footprint waits for it again"),
    ("restore-retries-never-reset", "src/daemon/checkpoint/checkpoint_engine.cc",
     "  restore_failures_.erase(cc.conn);\n", "",
     "failed restores count across successful ones"),
    ("handoff-checkpoints", "src/daemon/gpu/handoff_log.cc",
     "    it->second.open->checkpoint_ms += ms;\n", "",
     "a handoff's checkpoints fall into other"),
    ("handoff-room-wait", "src/daemon/gpu/handoff_log.cc",
     "                                    h.room_wait_ms + kBoundSlackMs;",
     "                                    kBoundSlackMs;",
     "a swap-in's wait for another job's memory counts against the handoff's bound"),
    ("swapin-room-wait-unmeasured", "shim/memory/swap_moves.cc",
     "        if (need != nullptr) need->room_wait_ns += MonoNowNs() - wait_from;\n", "",
     "a swap-in's wait for room is not measured", ("test_memory_swap", "ledger_cannot_see")),
    ("swapin-no-room-forgets-wait", "shim/memory/swap_moves.cc",
     "  need->missing = missing;\n", "  *need = {};\n  need->missing = missing;\n",
     "a swap-in that found no room forgets how long it waited for it",
     ("test_memory_swap", "failed_swap_in")),
    ("room-wait-no-backoff", "shim/memory/room_wait.h",
     "    if (quiet < kQuickNs) return floor_ns;", "    return floor_ns;",
     "a swap-in waiting out a higher job's memory retries its allocation every millisecond"),
    ("resident-ordinary-drained", "src/policy/arbiter_shared.cc",
     "    if (AdoptFormerResident(gpu, lease, job, now, out)) continue;\n", "",
     "a resident made ordinary with no turn held is dropped and drains for nothing"),
    ("residents-asking-only", "src/policy/sharing_mode.cc",
     "    if (!c.suspended) on.insert(c.job);\n", "",
     "a service that let its lease go between requests is no resident"),
    ("queue-order-no-snapshot", "src/store/job_store_list.cc",
     "own_snapshot = sqlite3_get_autocommit(db_) != 0;", "own_snapshot = false;",
     "the queue's passes read the database as it changes between them"),
    ("cli-completion-alone", "src/cli/commands.cc", "AddCompletionCommand, true}",
     "AddCompletionCommand}", "the completion script is made from its own command alone",
     ("test_cli_extras", "completion")),
    ("forged-end-attached", "src/daemon/jobs/job_requests.cc",
     "  if (!it->second->orphan) {\n", "  if (false) {\n",
     "another connection ends a job whose runner is connected"),
]


def run(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)


def first_failure(output):
    """The name of the first test case with an error (doctest prints its header before)."""
    case = ""
    for line in output.splitlines():
        if "TEST CASE:" in line:
            case = line.split("TEST CASE:", 1)[1].strip()
        elif "ERROR:" in line:
            return case
    return ""


def try_e2e(build, e2e):
    """Rebuilds the tree and runs one end-to-end test; (result, why)."""
    b = run(["cmake", "--build", build])
    if b.returncode != 0:
        return "caught", "the build fails"
    env = dict(os.environ, GSHARE_BUILD=build)
    t = run([sys.executable, os.path.join("test", "e2e", "run_part.py"), e2e[0], "-k", e2e[1]],
            env=env, timeout=1200)
    if t.returncode != 0:
        failed = [l for l in t.stdout.splitlines() if l.startswith(("FAIL:", "ERROR:"))]
        return "caught", (failed[0] if failed else "e2e rc %d" % t.returncode).replace("|", "/")
    return "SURVIVED", ""


def check_texts():
    stale = 0
    for m in MUTANTS:
        with open(os.path.join(ROOT, m[1])) as f:
            n = f.read().count(m[2])
        if n != 1:
            stale += 1
            print("mutants: %s: its text is in %s %d times, not once" % (m[0], m[1], n))
    print("mutants: %d of %d texts in place" % (len(MUTANTS) - stale, len(MUTANTS)))
    return 1 if stale else 0


def try_mutant(build, mutant):
    mid, rel, text, replacement = mutant[:4]
    e2e = mutant[5] if len(mutant) > 5 else None
    path = os.path.join(ROOT, rel)
    with open(path) as f:
        original = f.read()
    if original.count(text) != 1:
        return "stale", "the text is in %s %d times" % (rel, original.count(text))
    try:
        with open(path, "w") as f:
            f.write(original.replace(text, replacement))
        if e2e:
            return try_e2e(build, e2e)
        b = run(["cmake", "--build", build, "--target", "gshare_unit_tests"])
        if b.returncode != 0:
            return "caught", "the build fails"
        t = run([os.path.join(build, "test", "unit", "gshare_unit_tests"), "-ni", "-nv"],
                timeout=1200)
        if t.returncode != 0:
            return "caught", first_failure(t.stdout)
        return "SURVIVED", ""
    finally:
        with open(path, "w") as f:
            f.write(original)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build", nargs="?")
    p.add_argument("-k", action="append", default=[])
    p.add_argument("--check", action="store_true")
    args = p.parse_args()
    if args.check:
        return check_texts()
    if args.build is None:
        p.error("BUILD_DIR is required without --check")
    build = os.path.abspath(args.build)
    chosen = [m for m in MUTANTS if not args.k or any(k in m[0] or k in m[1] for k in args.k)]
    print("| mutant | file | what it breaks | result | first failing case |")
    print("|---|---|---|---|---|")
    survived = 0
    for m in chosen:
        start = time.time()
        result, why = try_mutant(build, m)
        survived += result != "caught"
        print("| %s | `%s` | %s | %s | %s |" % (m[0], m[1], m[4], result, why), flush=True)
        print("  (%.0f s)" % (time.time() - start), file=sys.stderr)
    # The tree as it is (all of it when an e2e mutant rebuilt the daemon and the shim).
    if any(len(m) > 5 for m in chosen):
        run(["cmake", "--build", build])
    else:
        run(["cmake", "--build", build, "--target", "gshare_unit_tests"])
    print("\n%d of %d caught" % (len(chosen) - survived, len(chosen)))
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
