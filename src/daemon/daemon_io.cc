// The daemon's event loop and its connections' sessions: the PeerTable's events become
// connections, dispatched frames and drops; Drop is the one place where a connection's life
// ends. What the frames mean is dispatched to daemon.cc.
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <spdlog/spdlog.h>
#include <vector>

#include "daemon/daemon.h"
#include "ipc/replies.h"
#include "ipc/job_json.h"

namespace gshare {
namespace {

bool IsJsonRequest(proto::MsgType t) { return proto::FixedPayloadSize(t) == 0; }

}  // namespace

void Daemon::Loop() {
  // Every connection is a descriptor: take the hard limit, the soft one is often 1024.
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  std::vector<pollfd> fds;
  std::vector<ConnId> ids;
  // fds: the signal pipe, the checkpoint helper, the listening socket, then one per peer.
  constexpr size_t kFirstPeer = 3;
  std::optional<TimePoint> stage_deadline;  // IdleStager::Tick's next run, if it asked for one
  while (!stopping_) {
    const TimePoint now = Now();
    std::optional<TimePoint> deadline = arbiter_.NextDeadline();
    auto earliest = [&deadline](std::optional<TimePoint> t) {
      if (t) deadline = deadline ? std::min(*deadline, *t) : t;
    };
    earliest(lifecycle_->Deadline());
    earliest(sharing_.NextDeadline());
    earliest(timeline_.NextFlush());
    earliest(messenger_.NextLanesCheck());
    earliest(stage_deadline);
    earliest(retention_->next());
    earliest(peers_.Expire(now));
    peers_.Reap();
    earliest(peers_.accept_paused_until());
    if (MetricsEndpoint* m = metrics_.endpoint()) earliest(m->Expire(now));
    earliest(metrics_.next_file());

    fds.clear();
    ids.clear();
    fds.push_back({signal_pipe_[0], POLLIN, 0});
    fds.push_back({checkpoint_.fd(), POLLIN, 0});  // -1 (ignored) until started
    peers_.PollSet(listen_fd_, now, &fds, &ids);
    const size_t metrics_first = fds.size();  // the metrics endpoint's entries, after the peers'
    if (MetricsEndpoint* m = metrics_.endpoint()) m->PollSet(&fds);
    int timeout_ms = -1;
    if (deadline) {
      auto ms = std::chrono::ceil<Millis>(*deadline - Now()).count();
      timeout_ms = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(ms, 60000)));
    }
    int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) {
      spdlog::error("poll: {}", strerror(errno));
      continue;
    }
    if (fds[0].revents != 0) {
      spdlog::info("signal received: shutting down");
      stopping_ = true;
    }
    for (size_t i = kFirstPeer; i < metrics_first; ++i) {
      peers_.OnPollEvents(ids[i - kFirstPeer], fds[i].revents, Now());
    }
    if (fds[2].revents != 0) peers_.Accept(listen_fd_, Now());
    if (fds[1].revents != 0) {
      std::vector<CheckpointReply> replies = checkpoint_.Read();  // may find the helper dead
      engine_.OnReplies(replies, checkpoint_.usable());
    }
    if (MetricsEndpoint* m = metrics_.endpoint()) m->OnPoll(fds, metrics_first, Now());
    Apply(arbiter_.Tick(Now()));
    sharing_.Tick(table_.GpuKeys());
    engine_.Tick();
    messenger_.QuietStoppedSeats(Now());
    timeline_.Tick(*store_);
    stage_deadline = staging_.Tick(table_.GpuKeys());
    lifecycle_->Tick(Now());
    // [retention] when due, then the timeline's.
    if (retention_->Tick()) timeline_.ApplyRetention(*store_, options_.config.timeline);
    metrics_.FileTick(Now());
    peers_.Reap();
  }
  peers_.FlushAll(std::chrono::seconds(1));  // pending replies (the shutdown's own)
  timeline_.EndAll("daemon stopped");
  timeline_.Tick(*store_, /*force=*/true);
}

bool Daemon::OnAccepted(ConnId id, pid_t pid, uid_t uid) {
  if (!options_.AcceptsUid(uid)) {
    spdlog::warn("refused a connection from uid {}", uid);
    return false;
  }
  auto c = std::make_unique<Connection>();
  c->id = id;
  c->pid = pid;
  c->uid = uid;
  table_.conns[id] = std::move(c);
  return true;
}

void Daemon::OnFrame(ConnId id, const Frame& f) {
  Connection* c = table_.Live(id);
  if (c == nullptr || stopping_) return;
  try {
    Dispatch(*c, f);
  } catch (const std::exception& e) {
    // A handler's bug must cost one request, not the daemon.
    spdlog::error("request type {} of pid {} failed: {}", static_cast<int>(f.type), c->pid,
                  e.what());
    if (IsJsonRequest(f.type)) {
      Reply(*c, ErrorReply(std::string("internal error: ") + e.what()));
    } else {
      Drop(id, "internal error");
    }
  }
}

void Daemon::OnLost(ConnId id, const std::string& why) { Drop(id, why); }

void Daemon::OnReaped(ConnId id) {
  auto it = table_.conns.find(id);
  if (it == table_.conns.end()) return;
  const JobId job = it->second->job;
  table_.conns.erase(it);
  if (job != 0) lifecycle_->ForgetIfDone(job);
}

void Daemon::Drop(ConnId id, const std::string& why) {
  Connection* cp = table_.Live(id);
  if (cp == nullptr) return;
  Connection& c = *cp;
  c.closing = true;  // first: whatever runs below sees it gone
  peers_.Close(id);
  stagger_.ForgetConn(id);
  if (!why.empty()) spdlog::warn("dropping connection of pid {}: {}", c.pid, why);
  if (c.kind == Connection::Kind::kShim) {
    for (const auto& [gpu, info] : table_.gpus) {
      timeline_.Releasing(gpu, c.job, c.exiting ? "exit" : "disconnected");
    }
    Apply(arbiter_.Disconnected(id, Now()));
    lanes_.Leave(id);
    messenger_.SendSeats();
    {
      // The leaving process's swap counters go with its ledger entry: its job keeps them.
      const MemoryLedger::JobTotals before = ledger_.Totals(c.job);
      ledger_.Forget(id);
      const MemoryLedger::JobTotals after = ledger_.Totals(c.job);
      if (auto jit = table_.jobs.find(c.job); jit != table_.jobs.end()) {
        jit->second->gone_swaps_out += before.swaps_out - after.swaps_out;
        jit->second->gone_swaps_in += before.swaps_in - after.swaps_in;
        jit->second->gone_bytes_out += before.bytes_out - after.bytes_out;
        jit->second->gone_bytes_in += before.bytes_in - after.bytes_in;
      }
    }
    staging_.ForgetConn(id);
    engine_.Forget(id);
    stagger_.ForgetJob(c.job);
    for (const auto& [gpu, info] : table_.gpus) {
      sharing_.Update(gpu);
      stagger_.Update(gpu);
      memory_.MakeIncumbentRoom(gpu);
    }
    auto jit = table_.jobs.find(c.job);
    if (jit != table_.jobs.end()) {
      jit->second->shims.erase(id);
      if (jit->second->adhoc && jit->second->shims.empty()) {
        lifecycle_->Finish(c.job, JobState::kCompleted, std::nullopt, std::nullopt, "");
      }
    }
  } else if (c.kind == Connection::Kind::kRunner) {
    auto jit = table_.jobs.find(c.job);
    if (queue_->Pending(c.job) != nullptr) {
      // A `gshare run` that stopped waiting for admission (Ctrl-C, a hang-up).
      Status st = lifecycle_->Cancel(c.job, false);
      if (!st.ok()) spdlog::error("job {}: {}", c.job, st.message());
    } else if (jit != table_.jobs.end() && !jit->second->ended && !stopping_) {
      ActiveJob& job = *jit->second;
      if (job.record.kind == "submit") {
        // Its supervisor died (kill -9): nothing enforces its limits or reports its end now.
        processes_.SignalGroup(job, SIGKILL);
        lifecycle_->Finish(c.job, JobState::kFailed, std::nullopt, std::nullopt,
                           "job supervisor ended unexpectedly");
      } else {
        lifecycle_->Finish(c.job, JobState::kFailed, std::nullopt, std::nullopt,
                           "gshare run exited early");
      }
    }
  }
}

bool Daemon::Send(ConnId id, std::string_view bytes) {
  Connection* c = table_.Live(id);
  return c != nullptr && Send(*c, bytes);
}

bool Daemon::Send(Connection& c, std::string_view bytes) {
  return !c.closing && peers_.Send(c.id, bytes, Now());
}

void Daemon::Reply(Connection& c, const std::string& json_text) {
  Send(c, EncodeFrame(proto::MsgType::kReply, json_text));
}

}  // namespace gshare
