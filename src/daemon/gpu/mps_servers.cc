#include "daemon/gpu/mps_servers.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <spdlog/spdlog.h>

#include "base/process_identity.h"
#include "base/program_path.h"
#include "gshare/job_env.h"
#include "policy/mps_choice.h"

extern char** environ;

namespace gshare {
namespace {

using Steady = std::chrono::steady_clock;

void SleepMs(int ms) {
  struct timespec ts = {0, ms * 1'000'000L};
  nanosleep(&ts, nullptr);
}

// A zombie has ended: nobody but its parent, which is not us, will reap it.
bool Alive(pid_t pid) {
  if (pid <= 0) return false;
  const std::optional<char> state = ProcessState(pid);
  return state && *state != 'Z' && *state != 'X';
}

Status MakeDir(const std::string& path, mode_t mode) {
  if (mkdir(path.c_str(), mode) != 0 && errno != EEXIST)
    return Status::Error("cannot create " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
    return Status::Error(path + " is not a folder of this daemon's user");
  if ((st.st_mode & 07777) != mode && chmod(path.c_str(), mode) != 0)
    return Status::Error("cannot chmod " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

// The pid in <pipe>/nvidia-cuda-mps-control.pid; 0 when none.
pid_t ReadPidFile(const std::string& pipe) {
  std::ifstream in(pipe + "/nvidia-cuda-mps-control.pid");
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return 0;
  return static_cast<pid_t>(pid);
}

}  // namespace

bool RunMpsControl(const std::string& program, const std::string& pipe, const std::string& log,
                   const std::string& gpu, const std::vector<std::string>& args,
                   const std::string& input, std::chrono::milliseconds timeout) {
  // Everything the child needs is built before fork(): it must not allocate.
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) == 0 || std::strncmp(*e, "CUDA_MPS_", 9) == 0 ||
        std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) == 0) {
      continue;
    }
    env.emplace_back(*e);
  }
  env.push_back(std::string(job_env::kMpsPipeDirectory) + "=" + pipe);
  env.push_back(std::string(job_env::kMpsLogDirectory) + "=" + log);
  env.push_back("CUDA_VISIBLE_DEVICES=" + gpu);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_s{program};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) {
    close(in[0]);
    close(in[1]);
    return false;
  }
  if (pid == 0) {
    dup2(in[0], STDIN_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    // None of the daemon's sockets, locks or database may live on in the control daemon.
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    setsid();
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(in[0]);
  if (!input.empty()) {
    ssize_t ignored = write(in[1], input.data(), input.size());
    (void)ignored;
  }
  close(in[1]);
  const auto deadline = Steady::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    // ECHILD: the daemon ignores SIGCHLD, so the child was reaped for it; its status is lost.
    if (r < 0 && errno == ECHILD) return true;
    if (r == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (Steady::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    SleepMs(10);
  }
}

bool MpsServers::RunControl(const Server& s, const std::string& program,
                            const std::vector<std::string>& args, const std::string& input) {
  return RunMpsControl(program, s.pipe, s.log, s.gpu, args, input, options_.timeout);
}

bool MpsServers::StartOne(Server& s, const std::string& program) {
  const mode_t mode = options_.system ? 0755 : 0700;
  const std::string gpu_dir = s.pipe.substr(0, s.pipe.rfind('/'));
  for (const std::string& dir : {gpu_dir, s.pipe, s.log}) {
    if (Status st = MakeDir(dir, mode); !st.ok()) {
      spdlog::warn("MPS on GPU {}: {}; its jobs run outside MPS", s.gpu, st.message());
      return false;
    }
  }
  if (pid_t old = ReadPidFile(s.pipe); Alive(old)) {
    // Left up by the daemon before us for the clients it still had: they run on, and new
    // jobs join them (a client of another user would wait for them to end; EnvFor learns
    // their user from the jobs it makes clients from now on).
    spdlog::info("MPS on GPU {}: control daemon {} kept (pipes {})", s.gpu, old, s.pipe);
    s.pid = old;
    return true;
  }
  unlink((s.pipe + "/nvidia-cuda-mps-control.pid").c_str());
  if (!RunControl(s, program, {"-d"}, "")) {
    spdlog::warn("MPS on GPU {}: {} -d failed; its jobs run outside MPS", s.gpu, program);
    return false;
  }
  const auto deadline = Steady::now() + options_.timeout;
  while ((s.pid = ReadPidFile(s.pipe)) == 0 && Steady::now() < deadline) SleepMs(10);
  if (!Alive(s.pid)) {
    spdlog::warn(
        "MPS on GPU {}: the control daemon did not stay up (see {}/control.log); its "
        "jobs run outside MPS",
        s.gpu, s.log);
    s.pid = 0;
    return false;
  }
  spdlog::info("MPS on GPU {}: control daemon {} (pipes {})", s.gpu, s.pid, s.pipe);
  return true;
}

void MpsServers::Start(const std::vector<std::string>& gpus) {
  if (options_.config.mode == "off") return;
  program_ = FindProgram(options_.config.control);
  if (program_.empty()) {
    spdlog::info("MPS: {} not found; jobs sharing a GPU are time-sliced by the driver",
                 options_.config.control);
    return;
  }
  if (Status st = MakeDir(options_.dir, options_.system ? 0755 : 0700); !st.ok()) {
    spdlog::warn("MPS: {}; jobs sharing a GPU are time-sliced by the driver", st.message());
    return;
  }
  for (size_t i = 0; i < gpus.size(); ++i) {
    Server s;
    s.gpu = gpus[i];
    const std::string dir = options_.dir + "/" + std::to_string(i);
    s.pipe = dir + "/pipe";
    s.log = dir + "/log";
    // A client numbers GPUs among its server's: with several GPUs it is pointed at its own by
    // UUID, which means the same GPU inside MPS and out.
    if (gpus.size() == 1 || s.gpu.rfind("GPU-", 0) == 0) {
      StartOne(s, program_);
    } else {
      spdlog::warn("MPS on GPU {}: NVML gives no UUID; its jobs run outside MPS", s.gpu);
    }
    servers_.push_back(std::move(s));
  }
  if (AnyUp()) {
    const std::string driver =
        options_.cuda_driver_version
            ? fmt::format("CUDA {}.{} driver", *options_.cuda_driver_version / 1000,
                          *options_.cuda_driver_version % 1000 / 10)
            : std::string("driver's CUDA version unknown");
    spdlog::info(
        "MPS: batch_cap {} ({}, {}): {}", BatchCapName(batch_cap_), options_.config.batch_cap,
        driver,
        batch_cap_ == BatchCap::kNever
            ? "no batch job is capped"
            : fmt::format(
                  "batch jobs are held to {} % of the threads {}",
                  options_.config.batch_thread_percentage,
                  batch_cap_ == BatchCap::kAlways ? "always" : "when they start beside a service"));
  }
}

void MpsServers::StopOne(Server& s) {
  if (s.pid == 0) return;
  Prune(s);
  if (!s.clients.empty()) {
    // `quit` would wait for them, and a forced one fails their every CUDA call: a job outlives
    // its daemon, so its server does too, and the next daemon keeps it (StartOne).
    std::vector<pid_t> runners;
    for (const auto& [job, client] : s.clients) {
      const pid_t runner = options_.runner_of ? options_.runner_of(job) : 0;
      if (runner > 0) runners.push_back(runner);
    }
    const bool linger = runners.size() == s.clients.size() && StartLinger(s, runners);
    spdlog::info("MPS on GPU {}: control daemon {} left up for the {} job(s) still its clients{}",
                 s.gpu, s.pid, s.clients.size(),
                 linger ? "; it quits once they have ended, unless a daemon keeps it"
                        : " (until the next daemon stops)");
    s.pid = 0;
    return;
  }
  // With no client a quit returns at once; one that does not means a process outside gshare's
  // jobs uses the server, and it stays up for it.
  if (!RunControl(s, program_, {}, "quit\n")) {
    spdlog::warn("MPS on GPU {}: control daemon {} did not quit within {} ms; left up", s.gpu,
                 s.pid, options_.timeout.count());
    s.pid = 0;
    return;
  }
  const auto deadline = Steady::now() + options_.timeout;
  while (Alive(s.pid) && Steady::now() < deadline) SleepMs(20);
  if (Alive(s.pid))
    spdlog::warn("MPS on GPU {}: control daemon {} still up after quit", s.gpu, s.pid);
  s.pid = 0;
}

bool MpsServers::StartLinger(const Server& s, const std::vector<pid_t>& runners) {
  if (options_.self_exe.empty() || options_.lock_path.empty() || program_.empty()) return false;
  std::string pids;
  for (pid_t p : runners) pids += (pids.empty() ? "" : ",") + std::to_string(p);
  std::vector<std::string> argv_s = {
      options_.self_exe, "mps-linger", "--control", program_, "--pipe", s.pipe,
      "--log",           s.log,        "--gpu",     s.gpu,    "--lock", options_.lock_path,
      "--runners",       pids};
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Detached: a grandchild in a session of its own, so that it outlives the daemon and is no
  // zombie of it; the child is reaped here at once.
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    if (fork() != 0) _exit(0);
    setsid();
    const int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, STDIN_FILENO);
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);  // ECHILD when SIGCHLD is ignored: reaped for us
  return true;
}

int RunMpsLinger(const MpsLingerOptions& o) {
  for (;;) {
    if (!Alive(ReadPidFile(o.pipe))) return 0;  // quit already (another daemon's stop)
    if (std::none_of(o.runners.begin(), o.runners.end(), Alive)) break;
    SleepMs(1000);
  }
  // The daemon's lock: held, a daemon runs on this database and has kept the server (StartOne),
  // so its own Stop decides. Held by us while quitting, so none starts meanwhile.
  const int fd = open(o.lock_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return 0;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return 0;
  }
  const pid_t control = ReadPidFile(o.pipe);
  const auto timeout = std::chrono::milliseconds(10'000);
  bool ok = RunMpsControl(o.control, o.pipe, o.log, o.gpu, {}, "quit\n", timeout);
  const auto deadline = Steady::now() + timeout;
  while (ok && Alive(control) && Steady::now() < deadline) SleepMs(20);
  close(fd);
  return ok && !Alive(control) ? 0 : 1;
}

void MpsServers::Stop() {
  for (Server& s : servers_) StopOne(s);
}

bool MpsServers::AnyUp() const {
  for (const Server& s : servers_) {
    if (s.pid != 0) return true;
  }
  return false;
}

MpsServers::Server* MpsServers::ServerOf(const std::string& slot) {
  if (slot.empty()) return servers_.size() == 1 ? &servers_[0] : nullptr;
  for (Server& s : servers_) {
    if (s.gpu == slot) return &s;
  }
  char* end = nullptr;
  const long index = std::strtol(slot.c_str(), &end, 10);
  if (end == slot.c_str() || *end != '\0' || index < 0 ||
      static_cast<size_t>(index) >= servers_.size()) {
    return nullptr;
  }
  return &servers_[static_cast<size_t>(index)];
}

void MpsServers::Prune(Server& s) {
  std::erase_if(s.clients, [this](const auto& client) { return !live_(client.first); });
  if (s.pid != 0 && !Alive(s.pid)) {
    spdlog::warn("MPS on GPU {}: control daemon {} is gone; new jobs run outside MPS", s.gpu,
                 s.pid);
    s.pid = 0;
  }
}

void MpsServers::PruneOutside() {
  std::erase_if(outside_, [this](const auto& o) { return !live_(o.first); });
}

std::optional<MpsServers::ClientPlace> MpsServers::PlaceOf(int64_t job) {
  for (Server& s : servers_) {
    Prune(s);
    if (!s.clients.contains(job)) continue;
    ClientPlace place{s.gpu, {}, s.clients.at(job).joined};
    for (const auto& [id, client] : s.clients) {
      if (id != job) place.others[id] = client.priority;
    }
    return place;
  }
  return std::nullopt;
}

void MpsServers::MarkJoined(int64_t job, std::chrono::steady_clock::time_point now) {
  for (Server& s : servers_) {
    auto it = s.clients.find(job);
    if (it == s.clients.end()) continue;
    it->second.joined = true;
    if (it->second.waiting_since) {
      spdlog::info("job {}: joins MPS after waiting {:.1f} s at its first CUDA call for room", job,
                   std::chrono::duration<double>(now - *it->second.waiting_since).count());
    }
    it->second.waiting_since.reset();
    it->second.waiting_why.clear();
  }
}

std::chrono::steady_clock::duration MpsServers::WaitAtArrival(
    int64_t job, std::chrono::steady_clock::time_point now, const std::string& why) {
  for (Server& s : servers_) {
    auto it = s.clients.find(job);
    if (it == s.clients.end()) continue;
    Server::Client& c = it->second;
    if (!c.waiting_since) {
      c.waiting_since = now;
      spdlog::info("job {}: waits at its first CUDA call to join MPS ({})", job, why);
    }
    c.waiting_why = why;
    return now - *c.waiting_since;
  }
  return {};
}

bool MpsServers::Outside(int64_t job) {
  PruneOutside();
  return outside_.contains(job);
}

void MpsServers::LeaveAtArrival(int64_t job, const std::string& why) {
  for (Server& s : servers_) {
    if (s.clients.erase(job) == 0) continue;
    spdlog::info("job {}: outside MPS ({})", job, why);
    PruneOutside();
    outside_[job] = why;
    return;
  }
}

MpsServers::Env MpsServers::EnvFor(const JobRecord& r, const std::string& slot,
                                   std::string* why_not) {
  if (!AnyUp()) return {};  // no MPS on this machine: nothing to say of each job
  Server* s = ServerOf(slot);
  MpsGpu gpu;
  if (s != nullptr) {
    Prune(*s);
    gpu.server_up = s->pid != 0;
    if (!s->clients.empty()) gpu.client_uid = s->clients.begin()->second.uid;
    for (const auto& [id, client] : s->clients) {
      if (client.priority > options_.config.batch_max_priority) gpu.above_batch_client = true;
    }
  }
  const MpsChoice choice =
      ChooseMps(MpsJob{r.uid, r.priority, r.gpus, r.memory, r.kind, r.mps_isolation}, gpu,
                MpsSettings{options_.config.batch_max_priority,
                            options_.config.batch_thread_percentage, batch_cap_});
  if (!choice.client) {
    spdlog::info("job {}: outside MPS ({})", r.id, choice.why_not);
    if (why_not != nullptr) *why_not = choice.why_not;
    PruneOutside();
    outside_[r.id] = choice.why_not;
    return {};
  }
  outside_.erase(r.id);
  spdlog::info("job {}: MPS client on GPU {} ({}{})", r.id, slot.empty() ? "0" : slot,
               choice.client_priority == 0 ? "normal priority" : "below normal priority",
               choice.active_thread_percentage < 100
                   ? ", " + std::to_string(choice.active_thread_percentage) + " % of the threads"
                   : "");
  Server::Client& client = s->clients[r.id];
  client = Server::Client{};
  client.uid = r.uid;
  client.priority = r.priority;
  Env env{{job_env::kMpsPipeDirectory, s->pipe},
          {job_env::kMpsLogDirectory, s->log},
          {job_env::kMpsClient, "1"},
          {job_env::kMpsClientPriority, std::to_string(choice.client_priority)}};
  if (servers_.size() > 1) env.emplace_back("CUDA_VISIBLE_DEVICES", s->gpu);
  if (choice.active_thread_percentage < 100) {
    env.emplace_back(job_env::kMpsActiveThreadPercentage,
                     std::to_string(choice.active_thread_percentage));
  }
  return env;
}

nlohmann::json MpsServers::Describe() {
  nlohmann::json gpus = nlohmann::json::array();
  for (Server& s : servers_) {
    Prune(s);
    nlohmann::json g{{"gpu", s.gpu}, {"up", s.pid != 0}, {"pid", s.pid}};
    nlohmann::json clients = nlohmann::json::array();
    for (const auto& [job, uid] : s.clients) clients.push_back(job);
    if (!s.clients.empty()) g["client_uid"] = s.clients.begin()->second.uid;
    g["clients"] = std::move(clients);
    gpus.push_back(std::move(g));
  }
  PruneOutside();
  nlohmann::json outside = nlohmann::json::array();
  for (const auto& [job, why] : outside_) outside.push_back({{"job", job}, {"why", why}});
  nlohmann::json arriving = nlohmann::json::array();
  for (const Server& s : servers_) {
    for (const auto& [job, client] : s.clients) {
      if (client.waiting_since) arriving.push_back({{"job", job}, {"why", client.waiting_why}});
    }
  }
  return {{"gpus", std::move(gpus)},
          {"outside", std::move(outside)},
          {"arriving", std::move(arriving)}};
}

}  // namespace gshare
