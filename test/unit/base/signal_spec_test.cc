#include "base/signal_spec.h"

#include <csignal>
#include <doctest/doctest.h>

namespace gshare::unit_signal_spec {
namespace {

TEST_CASE("ParseSignal takes names in any case, with or without SIG, and numbers") {
  CHECK(ParseSignal("TERM") == SIGTERM);
  CHECK(ParseSignal("sigusr1") == SIGUSR1);
  CHECK(ParseSignal("Usr2") == SIGUSR2);
  CHECK(ParseSignal("9") == SIGKILL);
  for (const char* bad : {"", "SIG", "0", "65", "1000", "9x", "-9", "NOPE", " TERM"}) {
    CAPTURE(bad);
    CHECK_FALSE(ParseSignal(bad).has_value());
  }
}

TEST_CASE("ParseSignalSpec reads sbatch's [B:]SIG[@SECONDS]") {
  Result<SignalSpec> s = ParseSignalSpec("USR1");
  REQUIRE(s.ok());
  CHECK(s->signal == SIGUSR1);
  CHECK(s->before == std::chrono::seconds(60));  // sbatch's default
  CHECK_FALSE(s->main_only);
  s = ParseSignalSpec("B:TERM@120");
  REQUIRE(s.ok());
  CHECK(s->signal == SIGTERM);
  CHECK(s->before == std::chrono::seconds(120));
  CHECK(s->main_only);
  s = ParseSignalSpec("b:10@0");
  REQUIRE(s.ok());
  CHECK(s->before.count() == 0);
  CHECK(ParseSignalSpec("USR2@65535")->before == std::chrono::seconds(65535));
  for (const char* bad : {"", "@60", "USR1@", "USR1@65536", "USR1@-1", "USR1@1.5", "R:USR1",
                          "X:USR1", "B:", "USR1@60@1", "NOPE@5"}) {
    CAPTURE(bad);
    Result<SignalSpec> r = ParseSignalSpec(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().rfind("--signal \"" + std::string(bad) + "\": ", 0) == 0);
    CHECK(r.status().message().find('\n') == std::string::npos);
  }
}

}  // namespace
}  // namespace gshare::unit_signal_spec
