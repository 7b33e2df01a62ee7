// The daemon's event loop and its connections' sessions: the PeerTable's events become
// connections, dispatched frames and drops; Drop is the one place where a connection's life
// ends. What the frames mean is dispatched to daemon.cc.
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <spdlog/spdlog.h>
#include <vector>

#include "daemon/server/daemon.h"
#include "ipc/replies.h"

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
  DaemonParts& p = *parts_;
  while (!stopping_) {
    const TimePoint now = Now();
    std::optional<TimePoint> deadline = p.arbiter.NextDeadline(now);
    auto earliest = [&deadline](std::optional<TimePoint> t) {
      if (t) deadline = deadline ? std::min(*deadline, *t) : t;
    };
    earliest(p.lifecycle.Deadline());
    earliest(p.sharing.NextDeadline());
    earliest(p.timeline.NextFlush());
    earliest(p.messenger.NextLanesCheck());
    earliest(stage_deadline);
    earliest(p.retention.next());
    earliest(peers_.Expire(now));
    peers_.Reap();
    earliest(peers_.accept_paused_until());
    user_conns_.Flush(now);
    earliest(user_conns_.NextFlush());
    FlushDrops(now);
    earliest(drops_.NextFlush());
    if (MetricsEndpoint* m = metrics_.endpoint()) earliest(m->Expire(now));
    earliest(metrics_.next_file());

    fds.clear();
    ids.clear();
    fds.push_back({signal_pipe_[0], POLLIN, 0});
    fds.push_back({p.checkpoint.fd(), POLLIN, 0});  // -1 (ignored) until started
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
      std::vector<CheckpointReply> replies = p.checkpoint.Read();  // may find the helper dead
      p.engine.OnReplies(replies, p.checkpoint.usable());
    }
    if (MetricsEndpoint* m = metrics_.endpoint()) m->OnPoll(fds, metrics_first, Now());
    p.outbox.Apply(p.arbiter.Tick(Now()));
    p.sharing.Tick(p.table.GpuKeys());
    p.engine.Tick();
    p.messenger.QuietStoppedSeats(Now());
    p.timeline.Tick(*p.store);
    stage_deadline = p.staging.Tick(p.table.GpuKeys());
    p.lifecycle.Tick(Now());
    // [retention] when due, then the timeline's.
    if (p.retention.Tick()) p.timeline.ApplyRetention(*p.store, options_.config.timeline);
    metrics_.FileTick(Now());
    peers_.Reap();
  }
  peers_.FlushAll(std::chrono::seconds(1));  // pending replies (the shutdown's own)
  // What the logs held back is told now, as if its minute had ended.
  user_conns_.Flush(Now() + std::chrono::minutes(1));
  FlushDrops(Now() + std::chrono::minutes(1));
  p.lifecycle.SaveUsage(Now());  // the next daemon goes on from these
  p.timeline.EndAll("daemon stopped");
  p.timeline.Tick(*p.store, /*force=*/true);
}

void Daemon::FlushDrops(TimePoint now) {
  drops_.Flush(now, [](uid_t uid, uint64_t n, const std::string& last) {
    spdlog::warn("dropped {} more connections of uid {} in the last minute (the last: {})", n, uid,
                 last);
  });
}

bool Daemon::OnAccepted(ConnId id, pid_t pid, uid_t uid) {
  if (!options_.AcceptsUid(uid)) {
    spdlog::warn("refused a connection from uid {}", uid);
    return false;
  }
  if (!user_conns_.Admit(uid, pid, Now())) return false;
  auto c = std::make_unique<Connection>();
  c->id = id;
  c->pid = pid;
  c->uid = uid;
  parts_->table.conns[id] = std::move(c);
  return true;
}

void Daemon::OnFrame(ConnId id, const Frame& f) {
  Connection* c = parts_->table.Live(id);
  if (c == nullptr || stopping_) return;
  try {
    router_->Dispatch(*c, f);
  } catch (const std::exception& e) {
    // A handler's bug must cost one request, not the daemon.
    spdlog::error("request type {} of pid {} failed: {}", static_cast<int>(f.type), c->pid,
                  e.what());
    if (IsJsonRequest(f.type)) {
      parts_->transport.reply(*c, ErrorReply(std::string("internal error: ") + e.what()));
    } else {
      Drop(id, "internal error");
    }
  }
}

void Daemon::OnLost(ConnId id, const std::string& why) { Drop(id, why); }

void Daemon::OnReaped(ConnId id) {
  DaemonParts& p = *parts_;
  auto it = p.table.conns.find(id);
  if (it == p.table.conns.end()) return;
  const JobId job = it->second->job;
  user_conns_.Closed(it->second->uid);
  p.table.conns.erase(it);
  if (job != 0) p.lifecycle.ForgetIfDone(job);
}

void Daemon::Drop(ConnId id, const std::string& why) {
  DaemonParts& p = *parts_;
  Connection* cp = p.table.Live(id);
  if (cp == nullptr) return;
  Connection& c = *cp;
  c.closing = true;  // first: whatever runs below sees it gone
  peers_.Close(id);
  p.stagger.ForgetConn(id);
  if (std::optional<uint64_t> n = why.empty() ? std::nullopt : drops_.Note(c.uid, Now(), why)) {
    if (*n == 1) {
      spdlog::warn("dropping connection of pid {}: {}", c.pid, why);
    } else {
      spdlog::warn("dropped {} connections of uid {} in the last minute (the last: pid {}, {})", *n,
                   c.uid, c.pid, why);
    }
  }
  if (c.kind == Connection::Kind::kShim) {
    p.shims.Left(c);
  } else if (c.kind == Connection::Kind::kRunner) {
    p.lifecycle.RunnerLost(c.job, stopping_);
  }
}

bool Daemon::Send(ConnId id, std::string_view bytes) {
  return parts_->table.Live(id) != nullptr && peers_.Send(id, bytes, Now());
}

}  // namespace gshare
