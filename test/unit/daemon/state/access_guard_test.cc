// AccessGuard: a request is its connection's uid's (groups looked up once), a job's control
// and details belong to its owner and the admins, and refusals name the owner.
#include "daemon/state/access_guard.h"

#include <doctest/doctest.h>

#include <map>
#include <string>

namespace gshare::unit_access_guard {
namespace {

constexpr uint32_t kAlice = 5001, kBob = 5002, kDaemon = 4000;

struct Guarded {
  std::map<int64_t, uint32_t> owners{{1, kAlice}, {2, kBob}};
  int lookups = 0;
  AccessGuard guard{[this](int64_t id) -> std::optional<uint32_t> {
                      auto it = owners.find(id);
                      if (it == owners.end()) return std::nullopt;
                      return it->second;
                    },
                    [this](uint32_t uid) {
                      ++lookups;
                      return Requester{uid, {uid}};
                    }};
  Guarded() {
    AccessRules rules;
    rules.daemon_uid = kDaemon;
    rules.max_priority = 100;
    guard.SetRules(rules);
  }
};

Connection Peer(uint32_t uid) {
  Connection c;
  c.uid = uid;
  return c;
}

TEST_CASE("access guard: the owner and the admins steer a job, others are refused by name") {
  Guarded g;
  Connection alice = Peer(kAlice), bob = Peer(kBob), daemon = Peer(kDaemon), root = Peer(0);
  CHECK(g.guard.MayControl(alice, 1, "cancel").ok());
  Status denied = g.guard.MayControl(bob, 1, "cancel");
  REQUIRE_FALSE(denied.ok());
  CHECK(denied.message().rfind(kPermissionDenied, 0) == 0);
  CHECK(denied.message().find("job 1 belongs to") != std::string::npos);
  CHECK(denied.message().find("may cancel it") != std::string::npos);
  CHECK(g.guard.MayControl(daemon, 1, "cancel").ok());
  CHECK(g.guard.MayControl(root, 2, "suspend").ok());
  CHECK(g.guard.MayControl(bob, 99, "cancel").ok());  // no such job: the action says so
  CHECK(g.guard.IsAdmin(daemon));
  CHECK_FALSE(g.guard.IsAdmin(alice));
  // The groups of a connection are looked up once, at its first request.
  CHECK(g.lookups == 4);
  g.guard.MayControl(alice, 2, "hold");
  CHECK(g.lookups == 4);
}

TEST_CASE("access guard: another user's job shows no command, cwd, output or dependency") {
  Guarded g;
  Connection alice = Peer(kAlice), bob = Peer(kBob);
  nlohmann::json job{{"id", 1},     {"uid", kAlice},     {"argv", {"python", "x.py"}},
                     {"cwd", "/h"}, {"output", "o.log"}, {"dependency", "afterok:3"}};
  nlohmann::json own = job;
  g.guard.HideDetails(alice, &own);
  CHECK(own == job);
  g.guard.HideDetails(bob, &job);
  CHECK(job["argv"].empty());
  CHECK(job["cwd"] == "");
  CHECK(job["output"] == "");
  CHECK(job["dependency"] == "");
  CHECK(job["hidden"] == true);
  CHECK(job["id"] == 1);
}

TEST_CASE("access guard: priorities above the ceiling are refused to users, not to admins") {
  Guarded g;
  Connection alice = Peer(kAlice), root = Peer(0);
  CHECK(g.guard.CheckPriority(alice, 100).ok());
  CHECK_FALSE(g.guard.CheckPriority(alice, 101).ok());
  CHECK(g.guard.CheckPriority(root, 1000).ok());
}

}  // namespace
}  // namespace gshare::unit_access_guard
