// The sd_notify(3) datagram, without libsystemd: a Type=notify unit learns from READY=1 that
// the daemon serves and from STOPPING=1 that it is shutting down. Main thread of the daemon;
// errors are ignored (systemd then times the unit out, which its journal reports).
#pragma once

#include <string>

namespace gshare {

class SystemdNotify {
 public:
  // Takes $NOTIFY_SOCKET (a path, or an abstract address when it starts with '@') and removes
  // it from the environment, so that the jobs the daemon starts cannot notify in its name.
  // Without it every Send does nothing.
  static SystemdNotify FromEnvironment();

  // Sends `state` ("READY=1", "STOPPING=1", ...) as one datagram. False when it could not.
  bool Send(const std::string& state) const;

  bool enabled() const { return !address_.empty(); }

 private:
  std::string address_;
};

}  // namespace gshare
