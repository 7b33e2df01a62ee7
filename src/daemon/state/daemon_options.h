// DaemonOptions: what a daemon is started with: its config, the files it was read from, and
// where its socket, locks, record, database and state live. Plain data.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "base/config.h"
#include "base/config_stamp.h"

namespace gshare {

struct DaemonOptions {
  Config config;
  // The files `config` was read from, stamped as the daemon starts: `status` tells which
  // changed since (the config is read once, at start).
  std::vector<ConfigStamp> config_files;
  std::string socket_path;
  std::string lock_path;         // beside the database: one daemon per database
  std::string socket_lock_path;  // beside the socket: one daemon per socket
  std::string record_path;       // daemon_record.h: where clients find the live daemon
  std::string database_path;
  std::string state_dir;  // job logs, end reports, scripts
  std::string self_exe;   // this binary, to start job supervisors
  bool system = false;    // the machine's daemon, serving every user

  // Whether a peer of `uid` may connect to a daemon running as `self`: to the system daemon
  // everyone the socket's mode lets in (who may do what to whose job is decided per request);
  // to a user's own daemon that user and root.
  bool AcceptsUid(uid_t uid, uid_t self = getuid()) const {
    return system || uid == self || uid == 0;
  }
};

}  // namespace gshare
