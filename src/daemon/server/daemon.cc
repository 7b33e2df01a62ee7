// The daemon's event loop and connection handling. Policy lives in Arbiter; persistence
// in JobStore; this file moves bytes between them and the sockets.
#include "daemon/server/daemon.h"

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
#include <spdlog/spdlog.h>

#include "base/gpu_inventory.h"
#include "daemon/state/daemon_dirs.h"
#include "daemon/state/system_dirs.h"
#include "runner/job_umask.h"
#include "ipc/daemon_record.h"
#include "daemon/server/daemon_ping.h"

namespace gshare {
namespace {

int g_signal_write_fd = -1;
void OnSignal(int) {
  char c = 's';
  ssize_t ignored = write(g_signal_write_fd, &c, 1);
  (void)ignored;
}

}  // namespace

Daemon::Daemon(DaemonOptions options, Clock& clock) : options_(std::move(options)), clock_(clock) {}

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
  parts_ = std::make_unique<DaemonParts>(
      options_, clock_, std::move(store.value()),
      PeerLinks{[this](ConnId id, std::string_view frame) { return Send(id, frame); },
                [this](ConnId id, const std::string& why) { Drop(id, why); },
                [this](ConnId id) { peers_.SetExempt(id); },
                [this](ConnId id, std::string_view frame, int fd) {
                  return parts_->table.Live(id) != nullptr &&
                         peers_.SendWithFd(id, frame, fd, Now());
                }});
  router_ = std::make_unique<RequestRouter>(*parts_, [this] { stopping_ = true; });
  DaemonParts& p = *parts_;
  p.access.SetRules(std::move(access.value()));
  // Leases held before this start ended with the daemon that granted them.
  p.timeline.Note(TimelineKind::kDaemonStart, 0, "", getpid());
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
  if (Status s = p.lanes.Open(options_.socket_path + proto::kBoardSuffix); !s.ok()) {
    spdlog::warn("{}: priorities between jobs sharing a GPU are kept by the lease alone",
                 s.message());
  } else if (options_.system) {
    if (Status s = ShareSocket(p.lanes.path(), options_.config.system.socket_group); !s.ok())
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
  p.gpu_count = CountGpus(options_.config.queue.gpus);
  p.gpu_uuids = NvmlGpuUuids();
  {
    std::vector<std::string> gpus;  // each GPU's UUID for its MPS control daemon, else its index
    for (int i = 0; i < p.gpu_count; ++i) {
      const bool named = p.gpu_uuids && static_cast<size_t>(i) < p.gpu_uuids->size();
      gpus.push_back(named ? (*p.gpu_uuids)[static_cast<size_t>(i)] : std::to_string(i));
    }
    p.mps.Start(gpus);
  }
  p.lifecycle.Recover();
  p.start_time = WallNow();
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
  parts_->mps.Stop();
  spdlog::info("daemon {} stopped", getpid());
  return Status::Ok();
}

}  // namespace gshare
