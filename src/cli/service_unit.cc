#include "cli/service_unit.h"

namespace gshare {

std::string ServiceExecStart(const std::string& self_exe, const std::string& config_path,
                             bool system) {
  std::string exec = self_exe + " daemon --foreground";
  if (system) exec += " --system";
  if (!config_path.empty()) exec += " --config " + config_path;
  return exec;
}

std::string ServiceUnitText(const std::string& exec_start, bool system, int busy_exit) {
  std::string unit = "[Unit]\nDescription=gshare: GPU sharing daemon";
  unit += system ? " for every user\nAfter=remote-fs.target nss-user-lookup.target\n\n" : "\n\n";
  // notify: started once it serves (READY=1). KillMode=process: a restart stops the daemon
  // alone, not the job supervisors in its cgroup (each in its own session), and the new
  // daemon re-adopts their jobs. Exit busy_exit: another daemon serves; no restart loop.
  unit += "[Service]\nType=notify\nExecStart=" + exec_start + "\nKillMode=process\n";
  unit += "Restart=on-failure\nRestartPreventExitStatus=" + std::to_string(busy_exit) + "\n\n";
  unit += "[Install]\nWantedBy=";
  unit += system ? "multi-user.target\n" : "default.target\n";
  return unit;
}

}  // namespace gshare
