#include "base/config.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>

#include <toml++/toml.h>

#include "base/batch_cap.h"
#include "base/byte_size.h"
#include "base/duration.h"
#include "base/listen_address.h"
#include "base/toml_values.h"
#include "gshare/paths.h"

namespace gshare {
namespace {

using namespace toml_values;

constexpr const char* kLogLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};

// A table of "name" = priority (each within the priority range) into *out; `what` names the
// keys for the error ("\"user\" or \"@group\"").
Status ReadPriorityTable(const std::string& path, const toml::node& node, const std::string& name,
                         const std::string& what, std::map<std::string, int>* out) {
  const toml::table* table = node.as_table();
  if (table == nullptr)
    return ValueError(path, node, name, "must be a table of " + what + " = priority");
  for (const auto& [key, value] : *table) {
    const std::string entry(key.str());
    if (entry.empty()) return ValueError(path, value, name, "names nothing");
    int priority = 0;
    if (Status st = ReadPriority(path, value, name + "." + entry, &priority); !st.ok()) return st;
    (*out)[entry] = priority;
  }
  return Status::Ok();
}

Status ApplyScheduler(const std::string& path, const toml::table& table, Config::Scheduler* s) {
  for (const auto& [key, node] : table) {
    std::string name = "scheduler." + std::string(key.str());
    Status st;
    if (key == "enabled") {
      st = ReadBool(path, node, name, &s->enabled);
    } else if (key == "quantum") {
      st = ReadDuration(path, node, name, /*positive=*/true, &s->quantum);
    } else if (key == "idle_release") {
      st = ReadDurationWithin(path, node, name, kMinIdleRelease, kMaxIdleRelease, &s->idle_release);
    } else if (key == "early_release") {
      st = ReadBool(path, node, name, &s->early_release);
    } else if (key == "stagger") {
      st = ReadBool(path, node, name, &s->stagger);
    } else if (key == "rebalance") {
      st = ReadBool(path, node, name, &s->rebalance);
    } else if (key == "drop_grace") {
      st = ReadDurationWithin(path, node, name, kMinDropGrace, kMaxDropGrace, &s->drop_grace);
    } else if (key == "default_priority") {
      st = ReadPriority(path, node, name, &s->default_priority);
    } else if (key == "sharing") {
      st = ReadString(path, node, name, &s->sharing);
      if (st.ok() && s->sharing != "auto" && s->sharing != "exclusive") {
        st = ValueError(path, node, name, "expected \"auto\" or \"exclusive\"");
      }
    } else {
      st = UnknownKey(path, key, "scheduler",
                      "enabled, quantum, idle_release, early_release, stagger, rebalance, "
                      "drop_grace, default_priority, sharing");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status ApplyDaemon(const std::string& path, const toml::table& table, Config::Daemon* d) {
  for (const auto& [key, node] : table) {
    std::string name = "daemon." + std::string(key.str());
    Status st;
    if (key == "socket") {
      st = ReadString(path, node, name, &d->socket);
      // Relative: one daemon per working directory.
      if (st.ok() && !d->socket.empty() && d->socket[0] != '/') {
        st = ValueError(path, node, name, "must be an absolute path");
      }
    } else if (key == "state_dir") {
      st = ReadString(path, node, name, &d->state_dir);
      // Relative: one database per working directory.
      const std::string& dir = d->state_dir;
      if (st.ok() && !dir.empty() && dir[0] != '/' && dir != "~" && dir.rfind("~/", 0) != 0) {
        st = ValueError(path, node, name, "must be an absolute path or start with ~/");
      }
    } else if (key == "log_level") {
      std::string level;
      st = ReadString(path, node, name, &level);
      if (st.ok()) {
        bool known = false;
        for (const char* l : kLogLevels) known = known || level == l;
        if (!known) {
          st = ValueError(path, node, name,
                          "unknown level \"" + level +
                              "\" (use trace, debug, info, warn, error, critical or off)");
        }
      }
      if (st.ok()) d->log_level = level;
    } else {
      st = UnknownKey(path, key, "daemon", "socket, state_dir, log_level");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status ApplySystem(const std::string& path, const toml::table& table, Config::System* s) {
  for (const auto& [key, node] : table) {
    std::string name = "system." + std::string(key.str());
    Status st;
    if (key == "socket" || key == "state_dir") {
      std::string* out = key == "socket" ? &s->socket : &s->state_dir;
      st = ReadString(path, node, name, out);
      // No "~/": the system daemon's paths are nobody's home.
      if (st.ok() && !out->empty() && (*out)[0] != '/') {
        st = ValueError(path, node, name, "must be an absolute path");
      }
    } else if (key == "socket_group" || key == "admin_group") {
      st = ReadString(path, node, name, key == "socket_group" ? &s->socket_group : &s->admin_group);
    } else if (key == "max_priority") {
      st = ReadPriority(path, node, name, &s->max_priority);
    } else if (key == "priority_ceiling") {
      st = ReadPriorityTable(path, node, name, "\"user\" or \"@group\"", &s->priority_ceiling);
      for (auto it = s->priority_ceiling.begin(); st.ok() && it != s->priority_ceiling.end();
           ++it) {
        if (it->first == "@") st = ValueError(path, node, name, "names no user or group");
      }
    } else {
      st = UnknownKey(path, key, "system",
                      "socket, state_dir, socket_group, admin_group, max_priority, "
                      "priority_ceiling");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status ApplyQueue(const std::string& path, const toml::table& table, Config::Queue* q) {
  for (const auto& [key, node] : table) {
    std::string name = "queue." + std::string(key.str());
    Status st;
    if (key == "max_running") {
      st = ReadCount(path, node, name, 1, kMaxRunningPerGpu, &q->max_running);
    } else if (key == "gpus") {
      st = ReadCount(path, node, name, 0, kMaxQueueGpus, &q->gpus);
    } else if (key == "max_running_per_user") {
      st = ReadCount(path, node, name, 0, kMaxJobCount, &q->max_running_per_user);
    } else {
      st = UnknownKey(path, key, "queue", "max_running, gpus, max_running_per_user");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status ApplyMemory(const std::string& path, const toml::table& table, Config::Memory* m) {
  for (const auto& [key, node] : table) {
    std::string name = "memory." + std::string(key.str());
    Status st;
    if (key == "engine") {
      st = ReadString(path, node, name, &m->engine);
      if (st.ok() && !ParseMemoryEngine(m->engine)) {
        st = ValueError(path, node, name, "expected swap, managed, checkpoint or off");
      }
    } else if (key == "host_budget") {
      st = ReadString(path, node, name, &m->host_budget);
      if (st.ok() && !ParseByteSizeOrPercent(m->host_budget, 1).ok()) {
        st = ValueError(path, node, name,
                        "expected a size such as \"64GiB\" or a percentage of RAM such as \"50%\"");
      }
    } else if (key == "host_budget_per_user") {
      st = ReadString(path, node, name, &m->host_budget_per_user);
      if (st.ok() && !m->host_budget_per_user.empty() &&
          !ParseByteSizeOrPercent(m->host_budget_per_user, 1).ok()) {
        st = ValueError(path, node, name,
                        "expected a size such as \"16GiB\" or a percentage of RAM such as \"10%\"");
      }
    } else if (key == "gpu_limit") {
      st = ReadSize(path, node, name, &m->gpu_limit);
    } else if (key == "context_reserve") {
      st = ReadSize(path, node, name, &m->context_reserve);
    } else if (key == "idle_stage_after") {
      st = ReadDuration(path, node, name, /*positive=*/false, &m->idle_stage_after);
    } else {
      st = UnknownKey(path, key, "memory",
                      "engine, host_budget, host_budget_per_user, gpu_limit, context_reserve, "
                      "idle_stage_after");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status ApplyRetention(const std::string& path, const toml::table& table, Config::Retention* r) {
  for (const auto& [key, node] : table) {
    std::string name = "retention." + std::string(key.str());
    Status st;
    if (key == "ended_jobs") {
      st = ReadDuration(path, node, name, /*positive=*/false, &r->ended_jobs);
    } else if (key == "max_ended_jobs") {
      st = ReadCount(path, node, name, 0, kMaxJobCount, &r->max_ended_jobs);
    } else if (key == "daemon_log_size") {
      st = ReadSize(path, node, name, &r->daemon_log_size);
    } else {
      st = UnknownKey(path, key, "retention", "ended_jobs, max_ended_jobs, daemon_log_size");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status ApplyLimits(const std::string& path, const toml::table& table, Config::Limits* l) {
  for (const auto& [key, node] : table) {
    const std::string name = "limits." + std::string(key.str());
    Status st;
    if (key == "connections_per_user") {
      st = ReadCount(path, node, name, 0, 1 << 20, &l->connections_per_user);
    } else if (key == "process_jobs_per_user") {
      st = ReadCount(path, node, name, 0, kMaxJobCount, &l->process_jobs_per_user);
    } else {
      st = UnknownKey(path, key, "limits", "connections_per_user, process_jobs_per_user");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status ApplyMps(const std::string& path, const toml::table& table, Config::Mps* m) {
  for (const auto& [key, node] : table) {
    const std::string name = "mps." + std::string(key.str());
    Status st;
    if (key == "mode") {
      st = ReadString(path, node, name, &m->mode);
      if (st.ok() && m->mode != "auto" && m->mode != "off")
        st = ValueError(path, node, name, "expected \"auto\" or \"off\"");
    } else if (key == "control") {
      st = ReadString(path, node, name, &m->control);
      if (st.ok() && m->control.empty()) st = ValueError(path, node, name, "expected a program");
    } else if (key == "batch_max_priority") {
      st = ReadPriority(path, node, name, &m->batch_max_priority);
    } else if (key == "batch_thread_percentage") {
      st = ReadCount(path, node, name, 1, 100, &m->batch_thread_percentage);
    } else if (key == "join_free_percentage") {
      st = ReadCount(path, node, name, 0, 100, &m->join_free_percentage);
    } else if (key == "join_wait_seconds") {
      st = ReadCount(path, node, name, 0, 86400, &m->join_wait_seconds);
    } else if (key == "batch_cap") {
      st = ReadString(path, node, name, &m->batch_cap);
      if (st.ok() && !ParseBatchCap(m->batch_cap)) {
        st = ValueError(path, node, name,
                        "expected \"auto\", \"never\", \"beside_service\" or \"always\"");
      }
    } else {
      st = UnknownKey(path, key, "mps",
                      "mode, control, batch_max_priority, batch_thread_percentage, batch_cap, "
                      "join_free_percentage, join_wait_seconds");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status ApplyNotify(const std::string& path, const toml::table& table, Config::Notify* n) {
  for (const auto& [key, node] : table) {
    if (key != "command") return UnknownKey(path, key, "notify", "command");
    if (Status st = ReadString(path, node, "notify.command", &n->command); !st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace

int Config::Slurm::PriorityOf(const std::string& qos, const std::string& partition) const {
  if (auto it = qos_priority.find(qos); !qos.empty() && it != qos_priority.end()) return it->second;
  if (auto it = partition_priority.find(partition);
      !partition.empty() && it != partition_priority.end()) {
    return it->second;
  }
  return default_priority;
}

namespace {

Status ApplySlurm(const std::string& path, const toml::table& table, Config::Slurm* s) {
  for (const auto& [key, node] : table) {
    const std::string name = "slurm." + std::string(key.str());
    Status st;
    if (key == "qos_priority") {
      st = ReadPriorityTable(path, node, name, "\"qos\"", &s->qos_priority);
    } else if (key == "partition_priority") {
      st = ReadPriorityTable(path, node, name, "\"partition\"", &s->partition_priority);
    } else if (key == "default_priority") {
      st = ReadPriority(path, node, name, &s->default_priority);
    } else {
      st = UnknownKey(path, key, "slurm", "qos_priority, partition_priority, default_priority");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status ApplyMetrics(const std::string& path, const toml::table& table, Config::Metrics* m) {
  for (const auto& [key, node] : table) {
    const std::string name = "metrics." + std::string(key.str());
    Status st;
    if (key == "listen") {
      st = ReadString(path, node, name, &m->listen);
    } else if (key == "allow_remote") {
      st = ReadBool(path, node, name, &m->allow_remote);
    } else if (key == "textfile") {
      st = ReadString(path, node, name, &m->textfile);
      if (st.ok() && !m->textfile.empty() && m->textfile.front() != '/') {
        st = ValueError(path, node, name, "must be an absolute path");
      }
    } else if (key == "textfile_interval") {
      st = ReadDuration(path, node, name, /*positive=*/true, &m->textfile_interval);
    } else {
      st = UnknownKey(path, key, "metrics", "listen, allow_remote, textfile, textfile_interval");
    }
    if (!st.ok()) return st;
  }
  if (!m->listen.empty()) {
    Result<ListenAddress> addr = ParseListenAddress(m->listen, m->allow_remote);
    if (!addr.ok()) return Status::Error(path + ": [metrics] " + addr.status().message());
  }
  return Status::Ok();
}

Status ApplyTimeline(const std::string& path, const toml::table& table, Config::Timeline* t) {
  for (const auto& [key, node] : table) {
    std::string name = "timeline." + std::string(key.str());
    Status st;
    if (key == "record") {
      st = ReadBool(path, node, name, &t->record);
    } else if (key == "keep") {
      st = ReadDuration(path, node, name, /*positive=*/false, &t->keep);
    } else if (key == "max_events") {
      const toml::value<int64_t>* v = node.as_integer();
      if (v == nullptr || v->get() < 0) {
        st = ValueError(path, node, name, "expected an integer from 0");
      } else {
        t->max_events = v->get();
      }
    } else {
      st = UnknownKey(path, key, "timeline", "record, keep, max_events");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

// Overlays the keys present in `root` (parsed from `path`) onto *config.
Status Apply(const std::string& path, const toml::table& root, Config* config) {
  for (const auto& [key, node] : root) {
    const toml::table* table = node.as_table();
    if (key != "scheduler" && key != "daemon" && key != "system" && key != "queue" &&
        key != "memory" && key != "retention" && key != "notify" && key != "slurm" &&
        key != "timeline" && key != "metrics" && key != "limits" && key != "mps") {
      return UnknownKey(path, key, "",
                        "scheduler, daemon, system, queue, memory, mps, retention, notify, "
                        "slurm, timeline, metrics, limits");
    }
    if (table == nullptr) return ValueError(path, node, key.str(), "expected a table");
    Status st = key == "scheduler"  ? ApplyScheduler(path, *table, &config->scheduler)
                : key == "daemon"   ? ApplyDaemon(path, *table, &config->daemon)
                : key == "system"   ? ApplySystem(path, *table, &config->system)
                : key == "queue"    ? ApplyQueue(path, *table, &config->queue)
                : key == "memory"   ? ApplyMemory(path, *table, &config->memory)
                : key == "notify"   ? ApplyNotify(path, *table, &config->notify)
                : key == "slurm"    ? ApplySlurm(path, *table, &config->slurm)
                : key == "timeline" ? ApplyTimeline(path, *table, &config->timeline)
                : key == "metrics"  ? ApplyMetrics(path, *table, &config->metrics)
                : key == "limits"   ? ApplyLimits(path, *table, &config->limits)
                : key == "mps"      ? ApplyMps(path, *table, &config->mps)
                                    : ApplyRetention(path, *table, &config->retention);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

// Reads the whole file. On failure sets *missing when the file does not exist.
Result<std::string> ReadFile(const std::string& path, bool* missing) {
  *missing = false;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *missing = errno == ENOENT || errno == ENOTDIR;
    return Status::Error(path + ": cannot open config file: " + std::strerror(errno));
  }
  std::string text;
  char buf[8192];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return Status::Error(path + ": cannot read config file: " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

}  // namespace

Result<Config> LoadConfig(const ConfigSources& sources) {
  Config config;
  for (const ConfigSource& source : sources.files) {
    bool missing = false;
    Result<std::string> text = ReadFile(source.path, &missing);
    if (!text.ok()) {
      if (missing && !source.required) continue;
      return text.status();
    }
    // toml++ reports syntax errors by exception; errors are values in gshare, so the exception
    // is turned into a Status right here.
    try {
      toml::table root = toml::parse(text.value(), source.path);
      Status st = Apply(source.path, root, &config);
      if (!st.ok()) return st;
    } catch (const toml::parse_error& e) {
      std::string problem(e.description());
      for (char& c : problem) c = c == '\n' ? ' ' : c;  // messages are one line
      return Status::Error(Where(source.path, e.source()) + ": " + problem);
    } catch (const std::exception& e) {
      return Status::Error(source.path + ": " + e.what());
    }
  }
  return config;
}

}  // namespace gshare
