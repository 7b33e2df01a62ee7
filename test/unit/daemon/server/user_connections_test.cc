// UserConnections: a user who is not an admin holds at most per_user connections; root and the
// admins are not capped (the group lookup asked only at the cap, once a minute); a closed
// connection frees its place.
#include "daemon/server/user_connections.h"

#include <doctest/doctest.h>

namespace gshare::unit_user_connections {
namespace {

const TimePoint kStart{std::chrono::hours(1)};
constexpr uid_t kAlice = 5001, kBob = 5002, kAdmin = 5003;

TEST_CASE("UserConnections caps a user's open connections, not root's or an admin's") {
  int lookups = 0;
  UserConnections conns({3, [&](uid_t uid) {
                           ++lookups;
                           return uid == kAdmin;
                         }});
  for (int i = 0; i < 3; ++i) CHECK(conns.Admit(kBob, 100, kStart));
  CHECK(lookups == 0);  // below the cap nobody is looked up
  CHECK_FALSE(conns.Admit(kBob, 100, kStart));
  CHECK_FALSE(conns.Admit(kBob, 100, kStart + Millis(1)));
  CHECK(conns.Open(kBob) == 3);
  CHECK(conns.refused() == 2);
  // Another user is not affected by Bob's connections.
  CHECK(conns.Admit(kAlice, 200, kStart));
  // A closed connection makes room.
  conns.Closed(kBob);
  CHECK(conns.Admit(kBob, 100, kStart));

  for (int i = 0; i < 10; ++i) CHECK(conns.Admit(0, 1, kStart));
  for (int i = 0; i < 10; ++i) CHECK(conns.Admit(kAdmin, 300, kStart));
  CHECK(conns.Open(kAdmin) == 10);
  CHECK(lookups == 2);  // Bob once, the admin once (kept a minute); root never
  CHECK(conns.Admit(kAdmin, 300, kStart + std::chrono::minutes(1)));
  CHECK(lookups == 3);

  for (int i = 0; i < 11; ++i) conns.Closed(kAdmin);
  CHECK(conns.Open(kAdmin) == 0);
}

TEST_CASE("UserConnections with per_user 0 caps nobody") {
  UserConnections conns({0, [](uid_t) { return false; }});
  for (int i = 0; i < 1000; ++i) CHECK(conns.Admit(kBob, 100, kStart));
  CHECK(conns.Open(kBob) == 1000);
}

}  // namespace
}  // namespace gshare::unit_user_connections
