#include "policy/access.h"

#include <doctest/doctest.h>

#include "base/config.h"

namespace gshare::unit_access {
namespace {

AccessRules Rules() {
  AccessRules r;
  r.daemon_uid = 0;
  r.admin_gid = 500;
  r.max_priority = 10;
  r.user_ceiling[1001] = 50;
  r.group_ceiling[600] = 30;
  r.group_ceiling[601] = 40;
  return r;
}

TEST_CASE("Access: owners and admins steer a job, other users do not") {
  const AccessRules rules = Rules();
  const Requester alice{1000, {1000}};
  const Requester bob{1001, {1001}};
  const Requester admin{1002, {1002, 500}};
  CHECK(MaySteer(rules, alice, 1000));
  CHECK_FALSE(MaySteer(rules, bob, 1000));
  CHECK(MaySteer(rules, admin, 1000));
  CHECK(MaySteer(rules, Requester{0, {}}, 1000));
  CHECK_FALSE(IsAdmin(rules, alice));
  CHECK(IsAdmin(rules, admin));
  // A user's own daemon: its owner is its admin.
  AccessRules own;
  own.daemon_uid = 1000;
  CHECK(IsAdmin(own, alice));
  CHECK_FALSE(IsAdmin(own, bob));
}

TEST_CASE("Access: a user's priority ceiling is the highest entry naming them, else the default") {
  const AccessRules rules = Rules();
  CHECK(PriorityCeiling(rules, Requester{1000, {1000}}) == 10);
  CHECK(PriorityCeiling(rules, Requester{1001, {1001}}) == 50);
  CHECK(PriorityCeiling(rules, Requester{1003, {1003, 600, 601}}) == 40);
  // A named user's ceiling may be lower than the default: it is theirs.
  AccessRules low = rules;
  low.user_ceiling[1004] = 2;
  CHECK(PriorityCeiling(low, Requester{1004, {1004}}) == 2);
  CHECK(PriorityCeiling(rules, Requester{1002, {500}}) == kMaxPriority);
  CHECK(CheckPriority(rules, Requester{1000, {1000}}, 10).ok());
  Status refused = CheckPriority(rules, Requester{1000, {1000}}, 11);
  CHECK(refused.message() ==
        "permission denied: priority 11 is above your ceiling of 10 ([system] max_priority, "
        "[system.priority_ceiling])");
}

}  // namespace
}  // namespace gshare::unit_access
