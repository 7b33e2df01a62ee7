// The daemon's event loop and connection handling. Policy lives in Arbiter; persistence
// in JobStore; this file moves bytes between them and the sockets.
#include "daemon/daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <vector>

#include "base/job_token.h"
#include "base/process_identity.h"
#include "daemon/daemon_dirs.h"
#include "daemon/job_usage.h"
#include "daemon/system_dirs.h"
#include "runner/job_umask.h"
#include "ipc/daemon_record.h"
#include "daemon/daemon_ping.h"
#include "daemon/host_budget.h"
#include "ipc/job_json.h"

namespace gshare {
namespace {

using json = nlohmann::json;

int g_signal_write_fd = -1;
void OnSignal(int) {
  char c = 's';
  ssize_t ignored = write(g_signal_write_fd, &c, 1);
  (void)ignored;
}

std::string ReadProcCmdline(pid_t pid, std::vector<std::string>* argv) {
  const std::string all = ReadProcFile("/proc/" + std::to_string(pid) + "/cmdline");
  std::string cur;
  for (char ch : all) {
    if (ch == '\0') {
      argv->push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) argv->push_back(cur);
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec).string();
}

}  // namespace

Daemon::Daemon(DaemonOptions options, Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      arbiter_(Arbiter::Options{
          options_.config.scheduler.enabled, options_.config.scheduler.quantum,
          options_.config.scheduler.drop_grace,
          [this](const GpuKey& gpu, JobId job) { return memory_.CanGrant(gpu, job); }}),
      ledger_(MemoryLedger::Options{
          options_.config.memory.context_reserve, options_.config.memory.gpu_limit,
          HostBudgetBytes(options_.config), [this](ConnId c) { return arbiter_.ConnHolds(c); },
          UserHostBudgetBytes(options_.config), [this](JobId j) { return table_.OwnerOf(j); },
          [this](JobId j) { return arbiter_.PriorityOf(j); },
          [this](const GpuKey& g, JobId j) { return arbiter_.IsResident(g, j); }}) {}

Daemon::~Daemon() {
  if (listen_fd_ >= 0) notify_.Send("STOPPING=1");
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    unlink(options_.socket_path.c_str());
    RemoveDaemonRecord(options_.record_path, getpid());
  }
  if (socket_lock_fd_ >= 0) close(socket_lock_fd_);
  if (lock_fd_ >= 0) close(lock_fd_);
  for (int fd : signal_pipe_) {
    if (fd >= 0) close(fd);
  }
}

Status Daemon::Setup(int ready_fd, bool* busy) {
  // Before anything is created: the socket, the database and the logs are the owner's alone.
  SetPrivateUmask();
  notify_ = SystemdNotify::FromEnvironment();
  Result<AccessRules> access =
      ResolveAccessRules(options_.config.system, options_.system, getuid());
  if (!access.ok()) return access.status();
  access_.SetRules(std::move(access.value()));
  if (Status s = options_.system ? PrepareSystemStateDir(options_.state_dir)
                                 : PrepareStateDir(options_.state_dir);
      !s.ok()) {
    return s;
  }
  if (Status s = options_.system ? PrepareSystemSocketDir(options_.socket_path)
                                 : PrepareSocketDir(options_.socket_path);
      !s.ok()) {
    return s;
  }
  // One daemon per database (whatever socket it serves), then one per socket.
  auto busy_with = [&](const std::string& who) {
    *busy = busy_ = true;
    if (ready_fd >= 0) {
      ssize_t ignored = write(ready_fd, "B", 1);
      (void)ignored;
    }
    return Status::Error(who);
  };
  lock_fd_ = open(options_.lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0)
    return Status::Error("cannot open " + options_.lock_path + ": " + strerror(errno));
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    std::optional<DaemonRecord> live = ReadDaemonRecord(options_.record_path);
    return busy_with(live ? "another daemon (pid " + std::to_string(live->pid) + ") serves " +
                                options_.database_path + " on " + live->socket
                          : "another daemon holds " + options_.lock_path + " (starting up)");
  }
  socket_lock_fd_ = open(options_.socket_lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (socket_lock_fd_ < 0) {
    return Status::Error("cannot open " + options_.socket_lock_path + ": " + strerror(errno));
  }
  if (flock(socket_lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return busy_with("another daemon, of another database, serves " + options_.socket_path);
  }
  if (Status s = PrivateDatabaseFiles(options_.database_path); !s.ok()) return s;
  // The database is open and migrated before the socket exists: clients that connect may
  // read it at once.
  auto store = JobStore::Open(options_.database_path);
  if (!store.ok()) return store.status();
  store_ = std::move(store.value());
  queue_.emplace(
      *store_, clock_, [this](int64_t id) { return table_.ActiveState(id); },
      options_.state_dir + "/queue.paused");
  status_.emplace(
      StatusReporter::Parts{options_, table_, arbiter_, ledger_, memory_, stagger_, sharing_,
                            lanes_, staging_, *queue_, *store_, access_, clock_},
      [this] { return start_time_; });
  lifecycle_.emplace(
      JobLifecycle::Parts{options_, table_, *queue_, *store_, processes_, placement_, arbiter_,
                          ledger_, memory_, staging_, timeline_, clock_},
      [this] { return gpu_count_; },
      [this](ConnId conn, std::string_view frame) { return Send(conn, frame); });
  control_.emplace(JobControl::Parts{*lifecycle_, access_, lanes_, messenger_},
                   JobControl::Checkpoints{[this](int64_t id) { return engine_.Suspend(id); },
                                           [this](int64_t id, const std::string& gpu) {
                                             return engine_.Resume(id, gpu);
                                           }});
  requests_.emplace(
      *lifecycle_, access_, [this] { return gpu_count_; }, transport_);
  slurm_.emplace(
      *lifecycle_, *control_, [this] { return gpu_count_; },
      [](pid_t pid) { return SlurmStepOf(pid); }, transport_);
  retention_.emplace(
      *store_, *queue_, clock_,
      JobRetention::Options{options_.config.retention, options_.state_dir + "/daemon.log",
                            [this](uint32_t uid) { return processes_.FilesDir(uid); }});
  // Leases held before this start ended with the daemon that granted them.
  timeline_.Note(TimelineKind::kDaemonStart, 0, "", getpid());
  // We hold the lock: any socket file left behind belongs to a dead daemon.
  unlink(options_.socket_path.c_str());
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (options_.socket_path.size() >= sizeof addr.sun_path) {
    return Status::Error("socket path too long: " + options_.socket_path);
  }
  std::memcpy(addr.sun_path, options_.socket_path.c_str(), options_.socket_path.size() + 1);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      chmod(options_.socket_path.c_str(), 0600) != 0 || listen(listen_fd_, 128) != 0) {
    return Status::Error("cannot listen on " + options_.socket_path + ": " + strerror(errno));
  }
  if (options_.system) {
    if (Status s = ShareSocket(options_.socket_path, options_.config.system.socket_group); !s.ok())
      return s;
  }
  // The priority board is for whoever may use the socket: same owner, same mode.
  if (Status s = lanes_.Open(options_.socket_path + proto::kBoardSuffix); !s.ok()) {
    spdlog::warn("{}: priorities between jobs sharing a GPU are kept by the lease alone",
                 s.message());
  } else if (options_.system) {
    if (Status s = ShareSocket(lanes_.path(), options_.config.system.socket_group); !s.ok())
      return s;
  }
  if (pipe2(signal_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) return Status::Error("pipe failed");
  g_signal_write_fd = signal_pipe_[1];
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGCHLD, SIG_IGN);  // job supervisors report over the socket; none become zombies
  signal(SIGXFSZ, SIG_IGN);  // a file size limit fails the database write instead of killing us
  gpu_count_ = CountGpus(options_.config.queue.gpus);
  lifecycle_->Recover();
  start_time_ = WallNow();
  metrics_.Start(Now());
  // Clients whose rules give another socket path find this one through the record.
  Status recorded = WriteDaemonRecord(options_.record_path, {getpid(), options_.socket_path});
  if (!recorded.ok()) return recorded;
  if (ready_fd >= 0) {
    ssize_t ignored = write(ready_fd, "R", 1);
    (void)ignored;
  }
  notify_.Send("READY=1\nMAINPID=" + std::to_string(getpid()));
  spdlog::info("{} daemon {} serving {} (database {})", options_.system ? "system" : "user",
               getpid(), options_.socket_path, options_.database_path);
  return Status::Ok();
}

Status Daemon::Run(int ready_fd) {
  bool busy = false;
  Status s = Setup(ready_fd, &busy);
  if (ready_fd >= 0) close(ready_fd);
  if (!s.ok() || busy) return s;
  Loop();
  spdlog::info("daemon {} stopped", getpid());
  return Status::Ok();
}

void Daemon::Dispatch(Connection& c, const Frame& f) {
  switch (f.type) {
    case proto::MsgType::kHello:
    case proto::MsgType::kLeaseRequest:
    case proto::MsgType::kLeaseReleased:
    case proto::MsgType::kMemReport:
    case proto::MsgType::kGapReport: OnShimFrame(c, f); return;
    case proto::MsgType::kPing:
      Send(c, PongFor(f));  // at once: the shim's liveness check of the daemon
      return;
    case proto::MsgType::kMemoryQuery: OnMemoryQuery(c, f); return;
    case proto::MsgType::kRunRegister:
    case proto::MsgType::kRunStarted:
    case proto::MsgType::kRunEnded:
    case proto::MsgType::kStatusRequest:
    case proto::MsgType::kSchedulerSet:
    case proto::MsgType::kShutdown:
    case proto::MsgType::kSubmit:
    case proto::MsgType::kJobControl:
    case proto::MsgType::kClean:
    case proto::MsgType::kRunAttach:
    case proto::MsgType::kListJobs:
    case proto::MsgType::kTimeline:
    case proto::MsgType::kSlurmStep:
    case proto::MsgType::kSlurmJob:
    case proto::MsgType::kQueueSet: OnJsonFrame(c, f); return;
    default: Drop(c.id, "a daemon-to-client message type sent to the daemon");
  }
}

bool Daemon::MayJoin(const Connection& c, const ActiveJob& job, const uint8_t (&token)[16]) const {
  if (c.uid != job.record.uid && c.uid != 0) return false;
  return JobTokensEqual(JobTokenHex(token), job.record.token);
}

JobId Daemon::AdoptProcess(Connection& c, uint64_t job_id) {
  if (job_id != 0 && table_.jobs.count(job_id) != 0) return job_id;
  // A process preloaded outside `gshare run` (or of a job this daemon does not know):
  // it becomes a job of its own, recorded like any other.
  JobRecord r;
  r.cwd = ReadProcCmdline(c.pid, &r.argv);
  r.name = r.argv.empty() ? "pid " + std::to_string(c.pid)
                          : std::filesystem::path(r.argv[0]).filename().string();
  r.uid = c.uid;
  r.priority = options_.config.scheduler.default_priority;
  r.state = JobState::kRunning;
  r.kind = "run";
  r.submit_time = r.start_time.emplace(WallNow());
  r.pid = c.pid;
  auto id = store_->Insert(r);
  if (!id.ok()) {
    spdlog::error("cannot record pid {}: {}", c.pid, id.status().message());
    return 0;
  }
  r.id = id.value();
  auto job = std::make_unique<ActiveJob>();
  job->record = r;
  job->adhoc = true;
  staging_.Active(r.id);
  table_.jobs[r.id] = std::move(job);
  arbiter_.AddJob(r.id, r.priority, Millis(0), r.uid);
  return r.id;
}

void Daemon::OnShimFrame(Connection& c, const Frame& f) {
  if (f.type == proto::MsgType::kHello) {
    if (c.kind != Connection::Kind::kUnknown) return Drop(c.id, "second hello");
    proto::HelloMsg hello;
    std::memcpy(&hello, f.payload.data(), sizeof hello);
    c.kind = Connection::Kind::kShim;
    peers_.SetExempt(c.id);  // its lease messages never wait behind its own reports
    if (auto claimed = table_.jobs.find(hello.job_id);
        claimed != table_.jobs.end() && !MayJoin(c, *claimed->second, hello.token)) {
      spdlog::warn("pid {} (uid {}) claims {} without its token: refused", c.pid, c.uid,
                   JobName(hello.job_id));
      return Drop(c.id, "it cannot prove it belongs to " + JobName(hello.job_id));
    }
    c.job = AdoptProcess(c, hello.job_id);
    if (c.job == 0) return Drop(c.id, "cannot record the job");
    table_.jobs.at(c.job)->shims.insert(c.id);
    arbiter_.AddConn(c.id, c.job, c.pid);
    return;
  }
  if (c.kind != Connection::Kind::kShim) return Drop(c.id, "lease message before hello");
  auto note_gpu = [&](const proto::GpuUuid& uuid, int ordinal) {
    if (table_.NoteGpu(FormatGpuUuid(uuid), uuid, ordinal)) return true;
    Drop(c.id, "it names more GPUs than a machine has");
    return false;
  };
  if (f.type == proto::MsgType::kMemReport) {
    proto::MemReportMsg m;
    std::memcpy(&m, f.payload.data(), sizeof m);
    if (!note_gpu(m.gpu, m.ordinal)) return;
    return OnMemReport(c, table_.RunsOn(c, FormatGpuUuid(m.gpu)), m);
  }
  if (f.type == proto::MsgType::kGapReport) {
    proto::GapMsg m;
    std::memcpy(&m, f.payload.data(), sizeof m);
    const GpuKey gpu = table_.RunsOn(c, FormatGpuUuid(m.gpu));
    return stagger_.OnReport(c.job, gpu, TimePoint{std::chrono::nanoseconds(m.begin_ns)},
                             TimePoint{std::chrono::nanoseconds(m.end_ns)});
  }
  proto::LeaseMsg m;
  std::memcpy(&m, f.payload.data(), sizeof m);
  if (!note_gpu(m.gpu, m.ordinal)) return;
  const GpuKey gpu = table_.RunsOn(c, FormatGpuUuid(m.gpu));
  if (table_.jobs.count(c.job) != 0) staging_.Active(c.job);
  if (f.type == proto::MsgType::kLeaseRequest) {
    // The seat first: a grant in shared mode lets the process submit at once, and its first
    // submission must already be ordered by its priority.
    lanes_.Sit(gpu, c.id, arbiter_.PriorityOf(c.job));
    messenger_.SendSeats();
    Apply(arbiter_.Request(c.id, gpu, Now()));
    sharing_.Update(gpu);
  } else {
    static const char* kReasons[] = {"dropped", "idle", "early", "exit"};
    spdlog::debug("job {} released {} epoch {} ({})", c.job, gpu, m.epoch,
                  m.reason < 4 ? kReasons[m.reason] : "?");
    stagger_.Released(c.id, gpu);  // a release ends the shim's gap reports
    if (m.reason == static_cast<uint32_t>(proto::ReleaseReason::kExit) && !c.exiting) {
      c.exiting = true;
      spdlog::info("{}: pid {} gives {} back while exiting", JobName(c.job), c.pid, gpu);
    }
    timeline_.Releasing(gpu, c.job, m.reason < 4 ? kReasons[m.reason] : "released");
    Apply(arbiter_.Released(c.id, gpu, m.epoch, Now()));
    stagger_.Update(gpu);
    memory_.MakeIncumbentRoom(gpu);
  }
}

void Daemon::Apply(const LeaseActions& actions) {
  for (const LeaseAction& a : actions) {
    switch (a.kind) {
      case LeaseAction::Kind::kGrant:
      case LeaseAction::Kind::kDrop:
      case LeaseAction::Kind::kContended: {
        Connection* conn = table_.Live(a.conn);
        if (conn == nullptr) break;
        proto::LeaseMsg m{};
        m.gpu = table_.NamedBy(*conn, a.gpu);
        m.epoch = a.epoch;
        if (a.kind == LeaseAction::Kind::kGrant) {
          m.bytes = memory_.PrepareGrant(a.gpu, conn->job, a.epoch);
        }
        if (a.kind == LeaseAction::Kind::kContended) {
          m.bytes = memory_.PriceHandoff(a.gpu);
        }
        if (a.kind == LeaseAction::Kind::kDrop) {
          memory_.Dropped(a.gpu);
          timeline_.Note(TimelineKind::kDrop, conn->job, a.gpu, conn->pid);
        }
        if (a.kind == LeaseAction::Kind::kGrant) timeline_.Granting(a.gpu, conn->job, conn->pid);
        auto type = a.kind == LeaseAction::Kind::kGrant  ? proto::MsgType::kLeaseGrant
                    : a.kind == LeaseAction::Kind::kDrop ? proto::MsgType::kLeaseDrop
                                                         : proto::MsgType::kLeaseContended;
        spdlog::debug("lease message {} for {} epoch {} -> pid {}", static_cast<int>(type), a.gpu,
                      a.epoch, conn->pid);
        std::string frame =
            EncodeFrame(type, std::string_view(reinterpret_cast<const char*>(&m), sizeof m));
        if (a.kind == LeaseAction::Kind::kGrant && engine_.DeferGrant(a, frame)) break;
        // A peer that cannot take it is dropped inside Send, which re-enters the arbiter:
        // its lease is reclaimed and the actions that follow are applied then.
        if (!Send(*conn, frame)) {
          spdlog::warn("cannot reach pid {}; its lease is reclaimed", conn->pid);
        } else if (a.kind == LeaseAction::Kind::kGrant) {
          stagger_.Update(a.gpu);
        }
        break;
      }
      case LeaseAction::Kind::kStop:
        spdlog::warn("pid {} did not release {} within the grace period: stopping it", a.pid,
                     a.gpu);
        kill(a.pid, SIGSTOP);
        break;
      case LeaseAction::Kind::kContinue: kill(a.pid, SIGCONT); break;
    }
  }
  timeline_.SyncHolds(arbiter_, table_.GpuKeys());
}

}  // namespace gshare
