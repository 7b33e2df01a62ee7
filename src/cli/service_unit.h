// The systemd unit `gshare daemon install-service` writes: a user unit for a user's own daemon
// (~/.config/systemd/user), a system unit for the machine's daemon (/etc/systemd/system). Pure
// text; any thread.
#pragma once

#include <string>

namespace gshare {

// The unit's ExecStart: `self_exe daemon --foreground`, plus `--system` for the system unit
// and `--config PATH` when `config_path` is not empty.
std::string ServiceExecStart(const std::string& self_exe, const std::string& config_path,
                             bool system);

// The whole unit file. Both kinds: Type=notify (the daemon says READY=1 once it serves),
// KillMode=process (job supervisors outlive a restart and are re-adopted), Restart=on-failure
// but not after exit `busy_exit` (another daemon serves: no restart loop). A user unit is
// WantedBy=default.target; the system unit WantedBy=multi-user.target, after the network
// file systems that may hold users' homes.
std::string ServiceUnitText(const std::string& exec_start, bool system, int busy_exit);

}  // namespace gshare
