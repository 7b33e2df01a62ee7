#include "base/config.h"

#include <doctest/doctest.h>

#include "temp_dir.h"
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace gshare::unit_config {
namespace {

using std::chrono::milliseconds;

// Sets an environment variable for the scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

Result<Config> LoadOne(const std::string& path) { return LoadConfig({{{path, true}}}); }

TEST_CASE("LoadConfig with no files gives the defaults") {
  Result<Config> c = LoadConfig({});
  REQUIRE(c.ok());
  CHECK(c->scheduler.enabled);
  CHECK(c->scheduler.quantum == milliseconds(20'000));
  CHECK(c->scheduler.idle_release == milliseconds(500));
  CHECK(c->scheduler.drop_grace == milliseconds(10'000));
  CHECK(c->scheduler.default_priority == 0);
  CHECK(c->scheduler.early_release);
  CHECK(c->scheduler.stagger);
  CHECK(c->daemon.socket.empty());
  CHECK(c->daemon.state_dir.empty());
  CHECK(c->daemon.log_level == "info");
}

TEST_CASE("LoadConfig reads the shipped example as the defaults") {
  // configs/gshare.toml shows every key commented out: it must stay valid TOML. CMake passes
  // this file by absolute path, so __FILE__ (test/unit/base/config_test.cc) locates the tree.
  std::filesystem::path root = std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "..";
  Result<Config> c = LoadOne((root / "configs" / "gshare.toml").string());
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->scheduler.quantum == milliseconds(20'000));
}

TEST_CASE("LoadConfig reads every key") {
  TempDir dir;
  std::string path = dir.Write("all.toml", R"(
[scheduler]
enabled = false
quantum = "1m30s"
idle_release = "500ms"
early_release = false
stagger = false
drop_grace = "00:30"
default_priority = -1000
[daemon]
socket = "/run/gshare/gshare.sock"
state_dir = "/var/lib/gshare"
log_level = "debug"
)");
  Result<Config> c = LoadOne(path);
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK_FALSE(c->scheduler.enabled);
  CHECK(c->scheduler.quantum == milliseconds(90'000));
  CHECK(c->scheduler.idle_release == milliseconds(500));
  CHECK_FALSE(c->scheduler.early_release);
  CHECK_FALSE(c->scheduler.stagger);
  CHECK(c->scheduler.drop_grace == milliseconds(30'000));
  CHECK(c->scheduler.default_priority == -1000);
  CHECK(c->daemon.socket == "/run/gshare/gshare.sock");
  CHECK(c->daemon.state_dir == "/var/lib/gshare");
  CHECK(c->daemon.log_level == "debug");
}

TEST_CASE("LoadConfig merges files key by key, later files winning") {
  TempDir dir;
  std::string system = dir.Write("system.toml",
                                 "[scheduler]\nquantum = \"30s\"\nidle_release = \"5s\"\n"
                                 "[daemon]\nlog_level = \"warn\"\n");
  std::string user = dir.Write("user.toml", "[scheduler]\nquantum = \"40s\"\n");
  std::string explicit_file = dir.Write("explicit.toml", "daemon.log_level = \"error\"\n");
  Result<Config> c = LoadConfig({{{system, false},
                                  {dir.path() + "/missing.toml", false},
                                  {user, false},
                                  {explicit_file, true}}});
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->scheduler.quantum == milliseconds(40'000));      // user over system
  CHECK(c->scheduler.idle_release == milliseconds(5'000));  // system only
  CHECK(c->scheduler.drop_grace == milliseconds(10'000));   // default
  CHECK(c->daemon.log_level == "error");                    // explicit over system
}

TEST_CASE("LoadConfig rejects unknown keys and tables, naming them") {
  TempDir dir;
  std::string path = dir.Write("typo.toml", "[scheduler]\nenabled = true\nquantun = \"20s\"\n");
  Result<Config> c = LoadOne(path);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find(path + ":3:") == 0);
  CHECK(c.status().message().find("scheduler.quantun") != std::string::npos);

  std::string table = dir.Write("table.toml", "[schedular]\nquantum = \"20s\"\n");
  c = LoadOne(table);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find(table + ":1:") == 0);
  CHECK(c.status().message().find("schedular") != std::string::npos);
}

TEST_CASE("LoadConfig reports a bad duration with file, line and the value") {
  TempDir dir;
  std::string path = dir.Write("bad.toml", "# comment\n[scheduler]\n\nquantum = \"20x\"\n");
  Result<Config> c = LoadOne(path);
  REQUIRE_FALSE(c.ok());
  const std::string& m = c.status().message();
  CHECK(m.find(path + ":4:") == 0);
  CHECK(m.find("scheduler.quantum") != std::string::npos);
  CHECK(m.find("\"20x\"") != std::string::npos);
  CHECK(m.find('\n') == std::string::npos);
}

TEST_CASE("LoadConfig rejects wrong types and out-of-range values") {
  TempDir dir;
  for (const char* text :
       {"[scheduler]\nquantum = 20\n", "[scheduler]\nquantum = \"0s\"\n",
        "[scheduler]\nenabled = \"yes\"\n", "[scheduler]\ndefault_priority = 1001\n",
        "[scheduler]\ndefault_priority = \"high\"\n", "[daemon]\nlog_level = \"loud\"\n",
        "[daemon]\nsocket = 3\n", "scheduler = 1\n"}) {
    Result<Config> c = LoadOne(dir.Write("wrong.toml", text));
    INFO(text);
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().message().find(dir.path() + "/wrong.toml:") == 0);
  }
}

TEST_CASE("hostile config: values past their bounds are refused, naming key, file and range") {
  TempDir dir;
  const struct {
    const char* text;
    const char* key;
    const char* range;
  } cases[] = {
      {"[queue]\ngpus = 1000000\n", "queue.gpus", "from 0 to 64"},
      {"[queue]\nmax_running = 1000000\n", "queue.max_running", "from 1 to 1000"},
      {"[scheduler]\ndrop_grace = \"0s\"\n", "scheduler.drop_grace", "from 100ms to 1d"},
      {"[scheduler]\nidle_release = \"0ms\"\n", "scheduler.idle_release", "from 20ms to 1d"},
      {"[scheduler]\nidle_release = \"2d\"\n", "scheduler.idle_release", "from 20ms to 1d"},
      {"[mps]\njoin_free_percentage = 101\n", "mps.join_free_percentage", "from 0 to 100"},
      {"[mps]\njoin_free_percentage = -1\n", "mps.join_free_percentage", "from 0 to 100"},
      {"[mps]\njoin_wait_seconds = 86401\n", "mps.join_wait_seconds", "from 0 to 86400"},
      {"[mps]\njoin_wait_seconds = -1\n", "mps.join_wait_seconds", "from 0 to 86400"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    const std::string path = dir.Write("bounds.toml", c.text);
    Result<Config> loaded = LoadOne(path);
    REQUIRE_FALSE(loaded.ok());
    const std::string& m = loaded.status().message();
    CHECK(m.find(path + ":2:") == 0);
    CHECK(m.find(c.key) != std::string::npos);
    CHECK(m.find(c.range) != std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
  }
  // The bounds themselves are accepted.
  Result<Config> edge = LoadOne(
      dir.Write("edge.toml",
                "[queue]\ngpus = 64\nmax_running = 1000\n[scheduler]\ndrop_grace = \"100ms\"\n"
                "idle_release = \"20ms\"\n[mps]\njoin_free_percentage = 0\n"
                "join_wait_seconds = 86400\n"));
  REQUIRE(edge.ok());
  CHECK(edge->mps.join_free_percentage == 0);
  CHECK(Config{}.mps.join_free_percentage == 15);
  CHECK(edge->mps.join_wait_seconds == 86400);
  CHECK(Config{}.mps.join_wait_seconds == 60);
  CHECK(edge->queue.gpus == 64);
  CHECK(edge->queue.max_running == 1000);
  CHECK(edge->scheduler.drop_grace == milliseconds(100));
  CHECK(edge->scheduler.idle_release == milliseconds(20));
}

TEST_CASE("LoadConfig reports TOML syntax errors with file and line") {
  TempDir dir;
  std::string path = dir.Write("syntax.toml", "[scheduler]\nquantum = \"20s\nenabled = true\n");
  Result<Config> c = LoadOne(path);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find(path + ":2:") == 0);
}

TEST_CASE("LoadConfig fails on a missing explicit file, skips a missing optional one") {
  TempDir dir;
  std::string missing = dir.path() + "/nope.toml";
  Result<Config> c = LoadConfig({{{missing, true}}});
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find(missing) == 0);
  CHECK(LoadConfig({{{missing, false}}}).ok());
}

TEST_CASE("LoadConfig: [memory] and scheduler.sharing defaults") {
  Result<Config> c = LoadConfig({});
  REQUIRE(c.ok());
  CHECK(c->memory.engine == "swap");
  CHECK(c->memory.host_budget == "50%");
  CHECK(c->memory.gpu_limit == 0);
  CHECK(c->memory.context_reserve == 768ull * 1024 * 1024);
  CHECK(c->scheduler.sharing == "auto");

  // A file with other tables leaves them alone.
  TempDir dir;
  c = LoadOne(dir.Write("other.toml", "[scheduler]\nquantum = \"5s\"\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->memory.engine == "swap");
  CHECK(c->memory.context_reserve == 768ull << 20);
  CHECK(c->scheduler.sharing == "auto");
}

TEST_CASE("LoadConfig reads every [memory] key and scheduler.sharing") {
  TempDir dir;
  std::string path = dir.Write("memory.toml", R"(
[scheduler]
sharing = "exclusive"
[memory]
engine = "off"
host_budget = "64GiB"
gpu_limit = "40GiB"
context_reserve = "512MiB"
)");
  Result<Config> c = LoadOne(path);
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->scheduler.sharing == "exclusive");
  CHECK(c->memory.engine == "off");
  CHECK(c->memory.host_budget == "64GiB");
  CHECK(c->memory.gpu_limit == 40ull << 30);
  CHECK(c->memory.context_reserve == 512ull << 20);

  for (const char* engine : {"swap", "managed", "checkpoint", "off"}) {
    INFO(engine);
    c = LoadOne(dir.Write("engine.toml", std::string("[memory]\nengine = \"") + engine + "\"\n"));
    REQUIRE_MESSAGE(c.ok(), c.status().message());
    CHECK(c->memory.engine == engine);
  }
  c = LoadOne(dir.Write("pct.toml",
                        "[memory]\nhost_budget = \"25%\"\ngpu_limit = \"64MB\"\n"
                        "[scheduler]\nsharing = \"auto\"\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->memory.host_budget == "25%");
  CHECK(c->memory.gpu_limit == 64'000'000);
  CHECK(c->scheduler.sharing == "auto");
  c = LoadOne(dir.Write("dotted.toml", "memory.context_reserve = \"1G\"\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->memory.context_reserve == 1ull << 30);
}

TEST_CASE("LoadConfig merges [memory] key by key") {
  TempDir dir;
  std::string system =
      dir.Write("system.toml", "[memory]\nengine = \"off\"\ngpu_limit = \"10GiB\"\n");
  std::string user = dir.Write("user.toml", "[memory]\ngpu_limit = \"20GiB\"\n");
  Result<Config> c = LoadConfig({{{system, false}, {user, true}}});
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->memory.engine == "off");
  CHECK(c->memory.gpu_limit == 20ull << 30);
  CHECK(c->memory.host_budget == "50%");
}

TEST_CASE("LoadConfig reports a bad [memory] or sharing value in one line naming the key") {
  TempDir dir;
  struct Bad {
    const char* text;
    const char* key;
  };
  for (const Bad& bad : {Bad{"[memory]\nengine = \"fast\"\n", "memory.engine"},
                         Bad{"[memory]\nengine = 1\n", "memory.engine"},
                         Bad{"[memory]\ngpu_limit = \"12X\"\n", "memory.gpu_limit"},
                         Bad{"[memory]\ngpu_limit = \"1.5\"\n", "memory.gpu_limit"},
                         Bad{"[memory]\ngpu_limit = 1024\n", "memory.gpu_limit"},
                         Bad{"[memory]\ncontext_reserve = \"lots\"\n", "memory.context_reserve"},
                         Bad{"[memory]\nhost_budget = \"150%\"\n", "memory.host_budget"},
                         Bad{"[memory]\nhost_budget = \"abc\"\n", "memory.host_budget"},
                         Bad{"[memory]\nhost_budget = \"5%%\"\n", "memory.host_budget"},
                         Bad{"[memory]\nhost_budget = 50\n", "memory.host_budget"},
                         Bad{"[scheduler]\nsharing = \"always\"\n", "scheduler.sharing"},
                         Bad{"[scheduler]\nsharing = true\n", "scheduler.sharing"},
                         Bad{"[memory]\nswap = true\n", "memory.swap"}}) {
    std::string path = dir.Write("bad.toml", bad.text);
    Result<Config> c = LoadOne(path);
    INFO(bad.text);
    REQUIRE_FALSE(c.ok());
    const std::string& m = c.status().message();
    CHECK(m.find(path + ":2:") == 0);
    CHECK(m.find(bad.key) != std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
  }
  // The unknown key's message lists the known ones.
  Result<Config> c = LoadOne(dir.Write("typo.toml", "[memory]\ngpu_limt = \"1G\"\n"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("unknown key \"memory.gpu_limt\"") != std::string::npos);
  CHECK(c.status().message().find("context_reserve") != std::string::npos);
  // A bad size names the value.
  c = LoadOne(dir.Write("size.toml", "[memory]\ngpu_limit = \"12X\"\n"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("\"12X\"") != std::string::npos);
}

TEST_CASE("DefaultConfigSources lists system, user, then explicit files") {
  ScopedEnv xdg("XDG_CONFIG_HOME", "/xdg");
  ConfigSources s = DefaultConfigSources("/tmp/x.toml");
  REQUIRE(s.files.size() == 3);
  CHECK(s.files[0].path == "/etc/gshare/gshare.toml");
  CHECK_FALSE(s.files[0].required);
  CHECK(s.files[1].path == "/xdg/gshare/gshare.toml");
  CHECK_FALSE(s.files[1].required);
  CHECK(s.files[2].path == "/tmp/x.toml");
  CHECK(s.files[2].required);

  ScopedEnv no_xdg("XDG_CONFIG_HOME", nullptr);
  ScopedEnv home("HOME", "/home/u");
  s = DefaultConfigSources(std::nullopt);
  REQUIRE(s.files.size() == 2);
  CHECK(s.files[1].path == "/home/u/.config/gshare/gshare.toml");
}

TEST_CASE("StateDir follows config, GSHARE_STATE_DIR, XDG_STATE_HOME, then HOME") {
  ScopedEnv home("HOME", "/home/u");
  ScopedEnv state("GSHARE_STATE_DIR", nullptr);
  ScopedEnv xdg("XDG_STATE_HOME", nullptr);
  Config c;
  CHECK(StateDir(c) == "/home/u/.local/state/gshare");
  {
    ScopedEnv relative("XDG_STATE_HOME", "relative");  // invalid per the XDG spec: ignored
    CHECK(StateDir(c) == "/home/u/.local/state/gshare");
  }
  ScopedEnv xdg_set("XDG_STATE_HOME", "/xdg/state");
  CHECK(StateDir(c) == "/xdg/state/gshare");
  ScopedEnv state_set("GSHARE_STATE_DIR", "/srv/gshare");
  CHECK(StateDir(c) == "/srv/gshare");
  c.daemon.state_dir = "/var/lib/gshare";
  CHECK(StateDir(c) == "/var/lib/gshare");
  c.daemon.state_dir = "~/gs";
  CHECK(StateDir(c) == "/home/u/gs");
}

TEST_CASE("LoadConfig reads [retention], with its defaults and its errors") {
  Result<Config> c = LoadConfig({});
  REQUIRE(c.ok());
  CHECK(c->retention.ended_jobs == std::chrono::hours(24 * 30));
  CHECK(c->retention.max_ended_jobs == 10'000);
  CHECK(c->retention.daemon_log_size == 16ull << 20);

  TempDir dir;
  c = LoadOne(dir.Write("retention.toml",
                        "[retention]\nended_jobs = \"7d\"\n"
                        "max_ended_jobs = 0\ndaemon_log_size = \"1MiB\"\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->retention.ended_jobs == std::chrono::hours(24 * 7));
  CHECK(c->retention.max_ended_jobs == 0);
  CHECK(c->retention.daemon_log_size == 1ull << 20);

  c = LoadOne(dir.Write("bad.toml", "[retention]\nmax_ended_jobs = -1\n"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("retention.max_ended_jobs") != std::string::npos);
  c = LoadOne(dir.Write("typo.toml", "[retention]\nended = \"7d\"\n"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("unknown key \"retention.ended\"") != std::string::npos);
}

TEST_CASE("LoadConfig reads [limits], with its defaults and its errors") {
  Result<Config> c = LoadConfig({});
  REQUIRE(c.ok());
  CHECK(c->limits.connections_per_user == 256);
  CHECK(c->limits.process_jobs_per_user == 64);

  TempDir dir;
  c = LoadOne(dir.Write("limits.toml",
                        "[limits]\nconnections_per_user = 0\n"
                        "process_jobs_per_user = 8\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->limits.connections_per_user == 0);
  CHECK(c->limits.process_jobs_per_user == 8);

  c = LoadOne(dir.Write("bad.toml", "[limits]\nconnections_per_user = -1\n"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("limits.connections_per_user") != std::string::npos);
  c = LoadOne(dir.Write("typo.toml", "[limits]\nconnections = 5\n"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("unknown key \"limits.connections\"") != std::string::npos);
}

TEST_CASE("[system] keys, their defaults and the system daemon's sources") {
  Result<Config> c = LoadConfig({});
  REQUIRE(c.ok());
  CHECK(SystemSocket(*c) == "/run/gshare/gshare.sock");
  CHECK(SystemStateDir(*c) == "/var/lib/gshare");
  CHECK(c->system.socket_group.empty());
  TempDir dir;
  c = LoadOne(dir.Write("system.toml",
                        "[system]\nsocket = \"/tmp/x/s.sock\"\nstate_dir = \"/tmp/x/state\"\n"
                        "socket_group = \"gpu\"\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(SystemSocket(*c) == "/tmp/x/s.sock");
  CHECK(SystemStateDir(*c) == "/tmp/x/state");
  CHECK(c->system.socket_group == "gpu");
  CHECK(c->daemon.socket.empty());  // [system] never moves a user's daemon
  {
    ScopedEnv env("GSHARE_SYSTEM_SOCKET", "/tmp/y/s.sock");
    CHECK(ClientSystemSocket(*c) == "/tmp/y/s.sock");
    CHECK(SystemSocket(*c) == "/tmp/x/s.sock");  // the daemon serves its config's
  }
  {
    ScopedEnv env("GSHARE_SYSTEM_SOCKET", nullptr);
    CHECK(ClientSystemSocket(*c) == "/tmp/x/s.sock");
  }
  c = LoadOne(dir.Write("relative.toml", "[system]\nstate_dir = \"~/gshare\"\n"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("system.state_dir") != std::string::npos);
  c = LoadOne(dir.Write("typo.toml", "[system]\nsocket_grp = \"gpu\"\n"));
  REQUIRE_FALSE(c.ok());
  // The system daemon reads /etc/gshare/gshare.toml, or --config alone: no user's file.
  ConfigSources plain = SystemConfigSources(std::nullopt);
  REQUIRE(plain.files.size() == 1);
  CHECK(plain.files[0].path == "/etc/gshare/gshare.toml");
  CHECK_FALSE(plain.files[0].required);
  ConfigSources given = SystemConfigSources(std::string("/tmp/g.toml"));
  REQUIRE(given.files.size() == 1);
  CHECK(given.files[0].path == "/tmp/g.toml");
  CHECK(given.files[0].required);
}

}  // namespace
}  // namespace gshare::unit_config

namespace gshare::unit_config {
namespace {

TEST_CASE("[system] admin_group, max_priority and priority_ceiling") {
  Result<Config> c = LoadConfig({});
  REQUIRE(c.ok());
  CHECK(c->system.max_priority == 100);
  CHECK(c->system.admin_group.empty());
  TempDir dir;
  c = LoadOne(dir.Write("access.toml",
                        "[system]\nadmin_group = \"gpu-admin\"\nmax_priority = 5\n"
                        "[system.priority_ceiling]\nalice = 50\n\"@ml\" = 20\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->system.admin_group == "gpu-admin");
  CHECK(c->system.max_priority == 5);
  CHECK(c->system.priority_ceiling == std::map<std::string, int>{{"@ml", 20}, {"alice", 50}});
  c = LoadOne(dir.Write("high.toml", "[system.priority_ceiling]\nbob = 5000\n"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("system.priority_ceiling.bob") != std::string::npos);
  c = LoadOne(dir.Write("flat.toml", "[system]\npriority_ceiling = 3\n"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("system.priority_ceiling") != std::string::npos);
}

TEST_CASE("[slurm] maps QOS, then partition, then the default to a priority") {
  Result<Config> c = LoadConfig({});
  REQUIRE(c.ok());
  CHECK(c->slurm.PriorityOf("high", "gpu") == 0);
  TempDir dir;
  c = LoadOne(dir.Write("slurm.toml",
                        "[slurm]\ndefault_priority = -5\n"
                        "[slurm.qos_priority]\nhigh = 20\n"
                        "[slurm.partition_priority]\ninteractive = 10\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->slurm.PriorityOf("high", "interactive") == 20);
  CHECK(c->slurm.PriorityOf("normal", "interactive") == 10);
  CHECK(c->slurm.PriorityOf("", "interactive") == 10);
  CHECK(c->slurm.PriorityOf("normal", "batch") == -5);
  CHECK(c->slurm.PriorityOf("", "") == -5);
  c = LoadOne(dir.Write("big.toml", "[slurm.qos_priority]\nhigh = 100000\n"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("slurm.qos_priority.high") != std::string::npos);
  c = LoadOne(dir.Write("typo.toml", "[slurm]\nqos = 3\n"));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("qos_priority, partition_priority") != std::string::npos);
}

}  // namespace
}  // namespace gshare::unit_config
