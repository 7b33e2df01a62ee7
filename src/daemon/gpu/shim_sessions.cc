#include "daemon/gpu/shim_sessions.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "base/job_token.h"
#include "base/process_identity.h"
#include "ipc/job_json.h"

namespace gshare {

bool ShimSessions::MayJoin(const Connection& c, const ActiveJob& job,
                           const uint8_t (&token)[16]) const {
  return AccessGuard::ProvesJob(c, job.record.uid, job.record.token, JobTokenHex(token));
}

JobId ShimSessions::AdoptProcess(Connection& c, uint64_t job_id) {
  if (job_id != 0 && p_.table.jobs.count(job_id) != 0) return job_id;
  // A process preloaded outside `gshare run` (or of a job this daemon does not know): it
  // becomes a job of its own, recorded like any other, unless it has one (another connection
  // of it) or its user is at the cap.
  const ProcessJobs::Process process{c.uid, c.pid, ProcessStartTime(c.pid).value_or(0)};
  const bool capped = c.uid != 0 && !p_.access.IsAdmin(c);
  if (JobId joined = process_jobs_.JobOf(process, capped); joined != 0) {
    if (p_.table.Running(joined) != nullptr) {
      process_jobs_.Add(process, joined);
      return joined;
    }
    process_jobs_.Ended(joined);  // it ended another way (a cancel): the process starts anew
  }
  ProcessCommand command = ReadProcessCommand(c.pid);
  JobRecord r;
  r.argv = std::move(command.argv);
  r.cwd = std::move(command.cwd);
  r.name = r.argv.empty() ? "pid " + std::to_string(c.pid)
                          : std::filesystem::path(r.argv[0]).filename().string();
  r.uid = c.uid;
  r.priority = p_.options.config.scheduler.default_priority;
  r.state = JobState::kRunning;
  r.kind = JobKind::kRun;
  r.submit_time = r.start_time.emplace(p_.clock.WallNow());
  r.pid = c.pid;
  auto id = p_.store.Insert(r);
  if (!id.ok()) {
    spdlog::error("cannot record pid {}: {}", c.pid, id.status().message());
    return 0;
  }
  r.id = id.value();
  auto job = std::make_unique<ActiveJob>();
  job->record = r;
  job->adhoc = true;
  p_.staging.Active(r.id);
  p_.table.jobs[r.id] = std::move(job);
  p_.arbiter.AddJob(r.id, r.priority, Millis(0), r.uid);
  process_jobs_.Add(process, r.id);
  return r.id;
}

bool ShimSessions::NoteGpu(Connection& c, const proto::GpuUuid& uuid, int ordinal) {
  JobTable& table = p_.table;
  const GpuKey gpu = FormatGpuUuid(uuid);
  if (table.KnowsGpu(gpu)) return true;
  // A GPU the daemon does not track yet: its state would stay as long as the daemon runs.
  if (Status st = p_.gpus.MayAdd(gpu, c.uid, c.uid == 0 || p_.access.IsAdmin(c)); !st.ok()) {
    t_.drop(c.id, st.message());
    return false;
  }
  if (!table.NoteGpu(gpu, uuid, ordinal)) {
    t_.drop(c.id, "it names more GPUs than a machine has");
    return false;
  }
  p_.gpus.Added(c.uid);
  return true;
}

void ShimSessions::OnHello(Connection& c, const proto::HelloMsg& hello) {
  if (c.kind != Connection::Kind::kUnknown) return t_.drop(c.id, "second hello");
  c.kind = Connection::Kind::kShim;
  t_.exempt(c.id);
  JobTable& table = p_.table;
  if (auto claimed = table.jobs.find(hello.job_id);
      claimed != table.jobs.end() && !MayJoin(c, *claimed->second, hello.token)) {
    spdlog::warn("pid {} (uid {}) claims {} without its token: refused", c.pid, c.uid,
                 JobName(hello.job_id));
    return t_.drop(c.id, "it cannot prove it belongs to " + JobName(hello.job_id));
  }
  c.job = AdoptProcess(c, hello.job_id);
  if (c.job == 0) return t_.drop(c.id, "cannot record the job");
  table.jobs.at(c.job)->shims.insert(c.id);
  p_.arbiter.AddConn(c.id, c.job, c.pid);
}

void ShimSessions::OnFrame(Connection& c, const Frame& f) {
  if (f.type == proto::MsgType::kHello) {
    proto::HelloMsg hello;
    std::memcpy(&hello, f.payload.data(), sizeof hello);
    return OnHello(c, hello);
  }
  if (c.kind != Connection::Kind::kShim) return t_.drop(c.id, "lease message before hello");
  JobTable& table = p_.table;
  if (f.type == proto::MsgType::kMemReport) {
    proto::MemReportMsg m;
    std::memcpy(&m, f.payload.data(), sizeof m);
    if (!NoteGpu(c, m.gpu, m.ordinal)) return;
    return OnMemReport(c, table.RunsOn(c, FormatGpuUuid(m.gpu)), m);
  }
  if (f.type == proto::MsgType::kGapReport) {
    proto::GapMsg m;
    std::memcpy(&m, f.payload.data(), sizeof m);
    const GpuKey gpu = table.RunsOn(c, FormatGpuUuid(m.gpu));
    return p_.stagger.OnReport(c.job, gpu, TimePoint{std::chrono::nanoseconds(m.begin_ns)},
                               TimePoint{std::chrono::nanoseconds(m.end_ns)});
  }
  proto::LeaseMsg m;
  std::memcpy(&m, f.payload.data(), sizeof m);
  if (!NoteGpu(c, m.gpu, m.ordinal)) return;
  OnLease(c, table.RunsOn(c, FormatGpuUuid(m.gpu)), f.type, m);
}

void ShimSessions::OnLease(Connection& c, const GpuKey& gpu, proto::MsgType type,
                           const proto::LeaseMsg& m) {
  if (p_.table.jobs.count(c.job) != 0) p_.staging.Active(c.job);
  if (type == proto::MsgType::kLeaseRequest) {
    spdlog::debug("job {} asks for {} (pid {})", c.job, gpu, c.pid);
    // The seat first: a grant in shared mode lets the process submit at once, and its first
    // submission must already be ordered by its priority.
    p_.lanes.Sit(gpu, c.id, p_.arbiter.PriorityOf(c.job));
    p_.messenger.SendSeats();
    p_.outbox.Apply(p_.arbiter.Request(c.id, gpu, Now()));
    p_.sharing.Update(gpu);
    return;
  }
  static const char* kReasons[] = {"dropped", "idle", "early", "exit"};
  spdlog::debug("job {} released {} epoch {} ({})", c.job, gpu, m.epoch,
                m.reason < 4 ? kReasons[m.reason] : "?");
  p_.stagger.Released(c.id, gpu);  // a release ends the shim's gap reports
  if (m.reason == static_cast<uint32_t>(proto::ReleaseReason::kExit) && !c.exiting) {
    c.exiting = true;
    spdlog::info("{}: pid {} gives {} back while exiting", JobName(c.job), c.pid, gpu);
  }
  p_.timeline.Releasing(gpu, c.job, m.reason < 4 ? kReasons[m.reason] : "released");
  p_.outbox.Apply(p_.arbiter.Released(c.id, gpu, m.epoch, Now()));
  p_.stagger.Update(gpu);
  p_.memory.MakeIncumbentRoom(gpu);
}

void ShimSessions::OnMemReport(Connection& c, const GpuKey& gpu, const proto::MemReportMsg& m) {
  p_.ledger.Report(c.id, c.job, gpu, m);
  if (m.engine == static_cast<uint32_t>(proto::MemoryEngine::kCheckpoint)) {
    host_.StartCheckpointHelper();  // cuInit takes seconds: paid before the first eviction
  }
  ActiveJob& job = *p_.table.jobs.at(c.job);
  job.peak_bytes = std::max(job.peak_bytes, p_.ledger.Totals(c.job).allocated);
  if (m.held_ms != 0) job.held_ms[{c.id, gpu}] = m.held_ms;
  if ((m.flags & proto::kReportAfterSwapIn) != 0) {
    if ((m.flags & proto::kReportSwapInFailed) != 0) {
      ++job.swapins_failed;
      ++job.swapins_failed_in_row;
      spdlog::warn("job {}: its swap-in on {} did not finish ({} in a row); it asks again", c.job,
                   gpu, job.swapins_failed_in_row);
    } else {
      job.swapins_failed_in_row = 0;
      if (m.swapin_bytes != 0) {
        p_.timeline.Note(TimelineKind::kSwapIn, c.job, gpu, c.pid, m.swapin_bytes,
                         static_cast<double>(m.swapin_ns) / 1e6);
      }
    }
    p_.arbiter.SwappedIn(gpu, m.epoch, Now());  // the holder's quantum starts now
    p_.memory.SwappedIn(gpu, c.job, m.epoch,
                        {.bytes = m.swapin_bytes,
                         .ms = static_cast<double>(m.swapin_ns) / 1e6,
                         .room_wait_ms = static_cast<double>(m.swapin_wait_ns) / 1e6,
                         .no_room = (m.flags & proto::kReportSwapInFailed) != 0});
  }
  // An allocation of the exclusive holder waits for room: taken from the others.
  if (m.demand > 0 && p_.arbiter.Holder(gpu) == c.job && !p_.arbiter.IsShared(gpu)) {
    p_.memory.HolderDemand(gpu, c.id, c.job);
  } else if (m.demand == 0 && p_.arbiter.ConnHolds(c.id)) {
    p_.memory.DemandMet(c.job);
  }
  p_.sharing.Update(gpu);
  p_.messenger.AskHolderToPin(gpu);
  if (p_.memory.NeedsReprice(gpu)) p_.outbox.Apply(p_.arbiter.Recontend(gpu));
  // A refused grant that is possible now goes out at the loop's Tick after this read.
}

bool ShimSessions::FreshQuery(Connection& c, const char* what) {
  if (c.kind != Connection::Kind::kUnknown) {
    t_.drop(c.id, std::string(what) + " after its hello");
    return false;
  }
  c.kind = Connection::Kind::kCli;  // nothing to undo when it closes
  return true;
}

bool ShimSessions::ProvesJob(const Connection& c, uint64_t job_id,
                             const uint8_t (&token)[16]) const {
  auto it = p_.table.jobs.find(job_id);
  return it != p_.table.jobs.end() && MayJoin(c, *it->second, token);
}

void ShimSessions::OnMemoryQuery(Connection& c, const Frame& f) {
  if (!FreshQuery(c, "a memory query")) return;
  proto::MemQueryMsg q;
  std::memcpy(&q, f.payload.data(), sizeof q);
  proto::MemViewMsg v{};
  v.gpu = q.gpu;
  if (ProvesJob(c, q.job_id, q.token)) {
    const GpuKey gpu = FormatGpuUuid(q.gpu);
    v.others_fixed = p_.ledger.FixedOfOthers(gpu, q.job_id);
    v.job_used = p_.ledger.UsedBy(q.job_id, gpu);
    v.known = 1;
  }
  t_.send(c.id, EncodeMsgFrame(proto::MsgType::kMemoryView, v));
}

void ShimSessions::OnHostPoolQuery(Connection& c, const Frame& f) {
  if (!FreshQuery(c, "a host pool query")) return;
  proto::HostPoolQueryMsg q;
  std::memcpy(&q, f.payload.data(), sizeof q);
  const int fd = ProvesJob(c, q.job_id, q.token) && t_.send_fd && ShimsOf(c.uid, c.id) > 0
                     ? p_.pools.For(c.uid)
                     : -1;
  proto::HostPoolMsg m{};
  m.bytes = fd >= 0 ? p_.pools.FileBytes() : 0;
  if (fd < 0 || !t_.send_fd(c.id, EncodeMsgFrame(proto::MsgType::kHostPool, m), fd)) {
    m.bytes = 0;
    t_.send(c.id, EncodeMsgFrame(proto::MsgType::kHostPool, m));
  }
}

void ShimSessions::OnMpsJoinQuery(Connection& c, const Frame& f) {
  if (!FreshQuery(c, "an MPS join query")) return;
  proto::MpsJoinQueryMsg q;
  std::memcpy(&q, f.payload.data(), sizeof q);
  proto::MpsJoinMsg m{};
  m.join = 1;
  auto job = p_.table.jobs.find(q.job_id);
  std::optional<MpsServers::ClientPlace> place;
  if (ProvesJob(c, q.job_id, q.token)) {
    m.known = 1;
    place = p_.mps.PlaceOf(static_cast<int64_t>(q.job_id));
  }
  if (!place && m.known == 1 && p_.mps.Outside(static_cast<int64_t>(q.job_id))) {
    m.join = 0;  // an earlier process of the job stayed outside: so do the others
  } else if (place && place->joined) {
    // An earlier process of the job is on the server: the job stays a client.
  } else if (place) {
    const MpsArrival arrival = ArrivalOf(*job->second, *place);
    m.free_bytes = arrival.free_bytes;
    const auto& mps = p_.options.config.mps;
    const std::string why = ChooseAtArrival(arrival, mps.join_free_percentage);
    const bool may_wait = !why.empty() && mps.join_wait_seconds > 0;
    const bool decide_now = (q.flags & proto::kMpsJoinDecideNow) != 0;
    const auto waited = may_wait ? p_.mps.WaitAtArrival(static_cast<int64_t>(q.job_id), Now(), why)
                                 : std::chrono::steady_clock::duration{};
    if (may_wait && !decide_now && waited < std::chrono::seconds(mps.join_wait_seconds)) {
      m.join = proto::kMpsJoinWait;  // no context yet: nothing of it reaches the GPU
    } else if (!why.empty()) {
      std::string after;
      if (may_wait && decide_now) {
        after = "; a signal ended its wait for room";
      } else if (may_wait) {
        after = "; no room within [mps] join_wait_seconds (" +
                std::to_string(mps.join_wait_seconds) + " s)";
      }
      p_.mps.LeaveAtArrival(static_cast<int64_t>(q.job_id), why + after);
      m.join = 0;
    } else {
      p_.mps.MarkJoined(static_cast<int64_t>(q.job_id), Now());
    }
  }
  t_.send(c.id, EncodeMsgFrame(proto::MsgType::kMpsJoin, m));
}

MpsArrival ShimSessions::ArrivalOf(const ActiveJob& job,
                                   const MpsServers::ClientPlace& place) const {
  MpsArrival arrival;
  arrival.priority = job.record.priority;
  std::set<JobId> higher;
  for (const auto& [id, priority] : place.others) {
    if (priority <= arrival.priority) continue;
    higher.insert(id);
    arrival.top_priority = std::max(arrival.top_priority.value_or(priority), priority);
  }
  // The ledger's key of the server's GPU: its UUID, else where a higher client has memory.
  GpuKey gpu = place.gpu.rfind("GPU-", 0) == 0 ? place.gpu : GpuKey{};
  for (const auto& [id, conn] : p_.table.conns) {
    if (!gpu.empty()) break;
    if (conn->kind != Connection::Kind::kShim || !higher.contains(conn->job)) continue;
    const std::vector<GpuKey> gpus = p_.ledger.GpusOf(id);
    if (!gpus.empty()) gpu = gpus.front();
  }
  if (!gpu.empty()) {
    arrival.capacity_bytes = p_.ledger.Capacity(gpu);
    const uint64_t used = p_.ledger.Need(gpu) + p_.ledger.Unseen(gpu);
    arrival.free_bytes = arrival.capacity_bytes > used ? arrival.capacity_bytes - used : 0;
  }
  return arrival;
}

int ShimSessions::ShimsOf(uid_t uid, ConnId except) const {
  int n = 0;
  for (const auto& [id, conn] : p_.table.conns) {
    n += id != except && conn->kind == Connection::Kind::kShim && conn->uid == uid ? 1 : 0;
  }
  return n;
}

void ShimSessions::Left(Connection& c) {
  for (const auto& [gpu, info] : p_.table.gpus) {
    p_.timeline.Releasing(gpu, c.job, c.exiting ? "exit" : "disconnected");
  }
  p_.outbox.Apply(p_.arbiter.Disconnected(c.id, Now()));
  p_.lanes.Leave(c.id);
  p_.messenger.SendSeats();
  // The leaving process's swap counters go with its ledger entry: its job keeps them.
  const MemoryLedger::JobTotals before = p_.ledger.Totals(c.job);
  p_.ledger.Forget(c.id);
  const MemoryLedger::JobTotals after = p_.ledger.Totals(c.job);
  auto jit = p_.table.jobs.find(c.job);
  if (jit != p_.table.jobs.end()) {
    jit->second->gone_swaps_out += before.swaps_out - after.swaps_out;
    jit->second->gone_swaps_in += before.swaps_in - after.swaps_in;
    jit->second->gone_bytes_out += before.bytes_out - after.bytes_out;
    jit->second->gone_bytes_in += before.bytes_in - after.bytes_in;
  }
  p_.staging.ForgetConn(c.id);
  host_.ForgetCheckpoints(c.id);
  if (ShimsOf(c.uid, c.id) == 0) p_.pools.Forget(c.uid);
  p_.stagger.ForgetJob(c.job);
  for (const auto& [gpu, info] : p_.table.gpus) {
    p_.sharing.Update(gpu);
    p_.stagger.Update(gpu);
    p_.memory.MakeIncumbentRoom(gpu);
  }
  jit = p_.table.jobs.find(c.job);
  if (jit != p_.table.jobs.end()) {
    jit->second->shims.erase(c.id);
    if (jit->second->adhoc && jit->second->shims.empty()) {
      host_.ProcessJobEnded(c.job);
    }
  }
  // However it ended (its last shim, a cancel), a later hello of its processes makes a new job.
  if (p_.table.Running(c.job) == nullptr) process_jobs_.Ended(c.job);
}

}  // namespace gshare
