// RequestRouter: the daemon's one table of what a peer may send (docs/design.md "Who may do
// what"): per message type, the connections that may send it, who is authorized, and the part
// that handles it. A type outside the table, or one sent on a connection that may not send it,
// drops the connection; an admin's or root's request from anyone else is refused before its
// handler runs. The daemon's event loop.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>

#include "daemon/state/connection.h"
#include "gshare/protocol.h"
#include "ipc/frame_io.h"

namespace gshare {

class DaemonParts;

// What a connection has become, as a bit of RequestRule::senders. A connection is fresh until
// its first request makes it a shim (a hello), a runner (a run's registration, a supervisor's
// attach) or a CLI; it never changes again, so that what it holds is undone when it closes.
enum Sender : uint8_t { kFromFresh = 1, kFromShim = 2, kFromRunner = 4, kFromCli = 8 };

// Who a request's sender must be. kAdmin and kRoot are checked here; the others by the handler
// through AccessGuard (the job a request names is in its payload), as the rule says.
enum class Authority : uint8_t {
  kAnyone,     // a view: what only a job's owner may see is hidden (AccessGuard::HideDetails)
  kSelf,       // acts for the sender alone: a job of its own, its own process's lease
  kJobOwner,   // each job it names: its owner or an admin (AccessGuard::MayControl); a
               // priority it sets is within the sender's ceiling (AccessGuard::CheckPriority)
  kJobRunner,  // the runner that holds the job: its connection, the supervisor the daemon
               // started, or the job's token shown by its owner or root (AccessGuard::MayRun)
  kAdmin,      // root or the configured admin group (policy/access.h)
  kRoot,       // uid 0 alone (Slurm's Prolog and Epilog)
};

class RequestRouter;

struct RequestRule {
  proto::MsgType type;
  const char* name;  // as logs name it
  uint8_t senders;   // Sender bits
  Authority authority;
  const char* denied;  // kAdmin, kRoot: what the refusal says only they may do
  // Exactly one is set: a binary (shim) message's handler, or a JSON request's (parsed once).
  void (*binary)(RequestRouter& r, Connection& c, const Frame& f);
  void (*json)(RequestRouter& r, Connection& c, const nlohmann::json& req);
};

class RequestRouter {
 public:
  // `parts` outlives the router; `stop` is called after a shutdown request was answered.
  RequestRouter(DaemonParts& parts, std::function<void()> stop)
      : parts_(parts), stop_(std::move(stop)) {}

  // Checks `f` against its rule and hands it to its handler. Never throws for a malformed
  // request (an error reply, or a drop for a protocol breach); a handler's exception escapes
  // to the caller, which answers it as an internal error.
  void Dispatch(Connection& c, const Frame& f);

  // Every type the daemon takes, in protocol order (tests walk it).
  static std::span<const RequestRule> Rules();
  // nullptr for a type the daemon does not take.
  static const RequestRule* RuleOf(proto::MsgType type);
  static Sender SenderOf(Connection::Kind kind);

  DaemonParts& parts() { return parts_; }
  void Stop() { stop_(); }

 private:
  DaemonParts& parts_;
  std::function<void()> stop_;
};

}  // namespace gshare
