// MpsServers with the stand-in control program (test/fake_mps): one control daemon per GPU in
// folders of its own, each client's environment, one user per server, and the stop.
#include "daemon/gpu/mps_servers.h"

#include <signal.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "base/process_identity.h"
#include "temp_dir.h"

namespace gshare::unit_mps_servers {
namespace {

std::string Get(const MpsServers::Env& env, const std::string& name) {
  for (const auto& [k, v] : env) {
    if (k == name) return v;
  }
  return "<unset>";
}

JobRecord Job(int64_t id, uint32_t uid, int priority = 0) {
  JobRecord r;
  r.id = id;
  r.uid = uid;
  r.priority = priority;
  r.kind = JobKind::kRun;
  r.memory = MemoryEngine::kSwap;
  return r;
}

// batch_cap: [mps] batch_cap; nullptr keeps Config's default. cuda: the driver's CUDA version.
MpsServers::Options Opts(const TempDir& dir, int thread_pct = 100, const char* batch_cap = nullptr,
                         std::optional<int> cuda = 13000) {
  MpsServers::Options o;
  o.config.control = GSHARE_FAKE_MPS_CONTROL;
  o.config.batch_thread_percentage = thread_pct;
  if (batch_cap != nullptr) o.config.batch_cap = batch_cap;
  o.cuda_driver_version = cuda;
  o.dir = dir.File("mps");
  o.timeout = std::chrono::milliseconds(5000);
  return o;
}

bool Alive(pid_t pid) {  // a zombie (reparented, not reaped yet) has ended
  const std::optional<char> state = ProcessState(pid);
  return pid > 0 && state && *state != 'Z' && *state != 'X';
}

TEST_CASE("mps servers: one control daemon per GPU, each client pointed at its own") {
  TempDir dir;
  std::set<int64_t> live{1, 2};
  MpsServers mps(Opts(dir, 25, "beside_service"),
                 [&live](int64_t id) { return live.count(id) != 0; });
  mps.Start({"GPU-aaaa", "GPU-bbbb"});
  REQUIRE(mps.AnyUp());
  CHECK(ReadFile(dir.File("mps/0/log/control.log")).find("start gpu=GPU-aaaa") == 0);
  CHECK(ReadFile(dir.File("mps/1/log/control.log")).find("start gpu=GPU-bbbb") == 0);
  const nlohmann::json view = mps.Describe();
  REQUIRE(view["gpus"].size() == 2);
  const pid_t pid0 = view["gpus"][0]["pid"].get<pid_t>();
  const pid_t pid1 = view["gpus"][1]["pid"].get<pid_t>();
  CHECK(Alive(pid0));
  CHECK(Alive(pid1));

  const MpsServers::Env batch = mps.EnvFor(Job(1, 1000, 0), "1");
  CHECK(Get(batch, "CUDA_MPS_PIPE_DIRECTORY") == dir.File("mps/1/pipe"));
  CHECK(Get(batch, "CUDA_MPS_LOG_DIRECTORY") == dir.File("mps/1/log"));
  CHECK(Get(batch, "CUDA_MPS_CLIENT_PRIORITY") == "1");
  CHECK(Get(batch, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "<unset>");  // no service there
  CHECK(Get(batch, "GSHARE_MPS_CLIENT") == "1");
  CHECK(Get(batch, "CUDA_VISIBLE_DEVICES") == "GPU-bbbb");  // by UUID: the same in MPS and out

  const MpsServers::Env service = mps.EnvFor(Job(2, 1000, 10), "GPU-bbbb");
  CHECK(Get(service, "CUDA_MPS_CLIENT_PRIORITY") == "0");
  CHECK(Get(service, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "<unset>");
  CHECK(mps.Describe()["gpus"][1]["clients"] == nlohmann::json::array({1, 2}));
  // A batch job that starts beside the service is capped; on the other GPU it is not.
  CHECK(Get(mps.EnvFor(Job(3, 1000, 0), "1"), "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "25");
  CHECK(Get(mps.EnvFor(Job(4, 1000, 0), "0"), "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "<unset>");
  live.erase(2);  // the service ended
  CHECK(Get(mps.EnvFor(Job(5, 1000, 0), "1"), "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "<unset>");
  live.insert({3, 4, 5});
  CHECK(mps.EnvFor(Job(6, 1000), "7").empty());  // no such GPU

  live.clear();  // the jobs ended: nothing holds the servers up
  mps.Stop();
  CHECK_FALSE(mps.AnyUp());
  for (pid_t pid : {pid0, pid1}) {
    for (int i = 0; i < 100 && Alive(pid); ++i) usleep(10'000);
    CHECK_FALSE(Alive(pid));
  }
  CHECK(ReadFile(dir.File("mps/0/log/control.log")).find("quit pid=" + std::to_string(pid0)) !=
        std::string::npos);
  CHECK(mps.EnvFor(Job(6, 1000), "0").empty());  // stopped: outside MPS
}

TEST_CASE("mps servers: by default a batch job beside a service is capped only on an old driver") {
  // The driver's CUDA version -> the batch job's cap beside a service, batch_cap left default.
  const std::pair<std::optional<int>, const char*> cases[] = {
      {13000, "<unset>"}, {std::nullopt, "<unset>"}, {12020, "25"}};
  for (const auto& [cuda, want] : cases) {
    TempDir dir;
    std::set<int64_t> live{1};
    MpsServers mps(Opts(dir, 25, nullptr, cuda),
                   [&live](int64_t id) { return live.count(id) != 0; });
    mps.Start({"GPU-aaaa"});
    REQUIRE(mps.AnyUp());
    CHECK(Get(mps.EnvFor(Job(1, 1000, 10), "0"), "CUDA_MPS_CLIENT_PRIORITY") == "0");
    const MpsServers::Env batch = mps.EnvFor(Job(2, 1000, 0), "0");
    CHECK(Get(batch, "CUDA_MPS_CLIENT_PRIORITY") == "1");
    CHECK(Get(batch, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == want);
    live.clear();
    mps.Stop();
  }
}

TEST_CASE("mps servers: a GPU's server serves one user until that user's jobs have ended") {
  TempDir dir;
  std::set<int64_t> live{1, 2};
  MpsServers mps(Opts(dir), [&live](int64_t id) { return live.count(id) != 0; });
  mps.Start({"GPU-aaaa"});
  REQUIRE(mps.AnyUp());
  CHECK_FALSE(mps.EnvFor(Job(1, 1000), "").empty());  // one GPU: the slot may be empty
  std::string why;
  CHECK(mps.EnvFor(Job(2, 2000), "", &why).empty());
  CHECK(why.find("another user") != std::string::npos);
  // Status names it, and why, while it runs outside.
  CHECK(mps.Describe()["outside"] == nlohmann::json::array({{{"job", 2}, {"why", why}}}));
  CHECK(Get(mps.EnvFor(Job(1, 1000), ""), "CUDA_VISIBLE_DEVICES") == "<unset>");  // one GPU
  live.erase(1);
  CHECK_FALSE(mps.EnvFor(Job(2, 2000), "").empty());
  CHECK(mps.Describe()["gpus"][0]["client_uid"] == 2000);
  CHECK(mps.Describe()["outside"].empty());  // a client now
  live.insert(3);
  CHECK(mps.EnvFor(Job(3, 3000), "").empty());  // another user's: outside
  CHECK(mps.Describe()["outside"].size() == 1);
  live.erase(3);
  CHECK(mps.Describe()["outside"].empty());  // ended: no longer listed
  live.clear();
}

TEST_CASE("mps servers: a client's arrival") {
  TempDir dir;
  std::set<int64_t> live{1, 2, 3};
  MpsServers mps(Opts(dir), [&live](int64_t id) { return live.count(id) != 0; });
  mps.Start({"GPU-aaaa"});
  REQUIRE(mps.AnyUp());
  CHECK_FALSE(mps.EnvFor(Job(1, 1000, 10), "").empty());
  CHECK_FALSE(mps.EnvFor(Job(2, 1000), "").empty());
  SUBCASE("one that does not join is listed outside") {
    std::optional<MpsServers::ClientPlace> place = mps.PlaceOf(2);
    REQUIRE(place);
    CHECK(place->gpu == "GPU-aaaa");
    CHECK(place->others == std::map<int64_t, int>{{1, 10}});
    CHECK_FALSE(place->joined);
    mps.MarkJoined(1, {});  // a process of job 1 joined: its later ones follow
    CHECK(mps.PlaceOf(1)->joined);
    CHECK_FALSE(mps.PlaceOf(2)->joined);
    CHECK_FALSE(mps.PlaceOf(3));  // no client
    CHECK_FALSE(mps.Outside(2));
    mps.LeaveAtArrival(2, "no room");
    CHECK_FALSE(mps.PlaceOf(2));
    CHECK(mps.Outside(2));  // its later processes stay outside too
    CHECK(mps.Describe()["gpus"][0]["clients"] == nlohmann::json::array({1}));
    CHECK(mps.Describe()["outside"] == nlohmann::json::array({{{"job", 2}, {"why", "no room"}}}));
    mps.LeaveAtArrival(3, "not a client");  // nothing to leave: not listed
    CHECK(mps.Describe()["outside"].size() == 1);
    live.erase(1);
    CHECK(mps.PlaceOf(1) == std::nullopt);  // ended
    live.erase(2);
    CHECK_FALSE(mps.Outside(2));  // ended: no longer listed
  }
  SUBCASE("one waiting for room counts from its first wait") {
    CHECK_FALSE(mps.EnvFor(Job(3, 1000), "").empty());
    const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
    CHECK(mps.WaitAtArrival(2, t0, "no room") == std::chrono::seconds(0));
    CHECK(mps.WaitAtArrival(3, t0 + std::chrono::seconds(5), "little room") ==
          std::chrono::seconds(0));
    // A later question of the same job counts from the first, with the latest reason.
    CHECK(mps.WaitAtArrival(2, t0 + std::chrono::seconds(7), "still no room") ==
          std::chrono::seconds(7));
    CHECK(mps.Describe()["arriving"] ==
          nlohmann::json::array(
              {{{"job", 2}, {"why", "still no room"}}, {{"job", 3}, {"why", "little room"}}}));
    CHECK(mps.Describe()["outside"].empty());
    CHECK(mps.WaitAtArrival(4, t0, "not a client") == std::chrono::seconds(0));
    mps.MarkJoined(2, t0 + std::chrono::seconds(9));  // room came: it joined, waits no longer
    CHECK(mps.PlaceOf(2)->joined);
    mps.LeaveAtArrival(3, "no room in time");  // the wait ran out
    CHECK(mps.Describe()["arriving"].empty());
    CHECK(mps.Outside(3));
  }
  live.clear();
}

TEST_CASE("mps servers: a control daemon left up by an earlier daemon is kept") {
  TempDir dir;
  // What a daemon killed with SIGKILL leaves: its control daemon up in its folders.
  std::filesystem::create_directories(dir.File("mps/0/pipe"));
  std::filesystem::create_directories(dir.File("mps/0/log"));
  const std::string start = "CUDA_MPS_PIPE_DIRECTORY=" + dir.File("mps/0/pipe") +
                            " CUDA_MPS_LOG_DIRECTORY=" + dir.File("mps/0/log") + " " +
                            GSHARE_FAKE_MPS_CONTROL + " -d";
  REQUIRE(std::system(start.c_str()) == 0);
  const pid_t old_pid = std::stoi(ReadFile(dir.File("mps/0/pipe/nvidia-cuda-mps-control.pid")));
  REQUIRE(Alive(old_pid));
  MpsServers mps(Opts(dir), [](int64_t) { return true; });
  mps.Start({"GPU-aaaa"});
  REQUIRE(mps.AnyUp());
  CHECK(mps.Describe()["gpus"][0]["pid"].get<pid_t>() == old_pid);
  CHECK(ReadFile(dir.File("mps/0/log/control.log")).find("quit") == std::string::npos);
  mps.Stop();  // no client: it quits
  for (int i = 0; i < 100 && Alive(old_pid); ++i) usleep(10'000);
  CHECK_FALSE(Alive(old_pid));
}

TEST_CASE("mps servers: a server with live client jobs outlives the daemon's stop") {
  TempDir dir;
  std::set<int64_t> live{1};
  pid_t pid = 0;
  {
    MpsServers mps(Opts(dir), [&live](int64_t id) { return live.count(id) != 0; });
    mps.Start({"GPU-aaaa"});
    REQUIRE(mps.AnyUp());
    pid = mps.Describe()["gpus"][0]["pid"].get<pid_t>();
    CHECK_FALSE(mps.EnvFor(Job(1, 1000), "").empty());
    mps.Stop();
    CHECK_FALSE(mps.AnyUp());
  }
  CHECK(Alive(pid));
  CHECK(ReadFile(dir.File("mps/0/log/control.log")).find("quit") == std::string::npos);
  live.clear();
  MpsServers next(Opts(dir), [&live](int64_t id) { return live.count(id) != 0; });
  next.Start({"GPU-aaaa"});
  CHECK(next.Describe()["gpus"][0]["pid"].get<pid_t>() == pid);
  next.Stop();
  for (int i = 0; i < 100 && Alive(pid); ++i) usleep(10'000);
  CHECK_FALSE(Alive(pid));
}

TEST_CASE("mps servers: off, or no control program, starts nothing and makes no client") {
  TempDir dir;
  MpsServers::Options off = Opts(dir);
  off.config.mode = "off";
  MpsServers none(off, [](int64_t) { return true; });
  none.Start({"GPU-aaaa"});
  CHECK_FALSE(none.AnyUp());
  CHECK(none.EnvFor(Job(1, 1000), "").empty());
  MpsServers::Options missing = Opts(dir);
  missing.config.control = dir.File("no-such-control");
  MpsServers absent(missing, [](int64_t) { return true; });
  absent.Start({"GPU-aaaa"});
  CHECK_FALSE(absent.AnyUp());
}

TEST_CASE("mps servers: several GPUs without UUIDs run outside MPS") {
  TempDir dir;
  MpsServers mps(Opts(dir), [](int64_t) { return true; });
  mps.Start({"0", "1"});
  CHECK_FALSE(mps.AnyUp());
}

}  // namespace
}  // namespace gshare::unit_mps_servers
