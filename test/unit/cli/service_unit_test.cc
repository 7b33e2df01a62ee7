// Issues 19 and 21: the systemd units `gshare daemon install-service [--system]` writes.
#include "cli/service_unit.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

namespace gshare::unit_service_unit {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool Has(const std::vector<std::string>& lines, const std::string& want) {
  for (const std::string& l : lines) {
    if (l == want) return true;
  }
  return false;
}

TEST_CASE("the system unit runs the system daemon for multi-user.target") {
  const std::string exec = ServiceExecStart("/usr/bin/gshare", "", true);
  CHECK(exec == "/usr/bin/gshare daemon --foreground --system");
  auto lines = Lines(ServiceUnitText(exec, true, 3));
  CHECK(Has(lines, "ExecStart=/usr/bin/gshare daemon --foreground --system"));
  CHECK(Has(lines, "WantedBy=multi-user.target"));
  CHECK_FALSE(Has(lines, "WantedBy=default.target"));
  // Issue 19's restart rules, the same in both kinds.
  for (const char* want :
       {"Type=notify", "KillMode=process", "Restart=on-failure", "RestartPreventExitStatus=3"}) {
    CHECK_MESSAGE(Has(lines, want), want);
  }
}

TEST_CASE("the user unit is unchanged in kind and names its config") {
  const std::string exec = ServiceExecStart("/opt/gshare", "/etc/g.toml", false);
  CHECK(exec == "/opt/gshare daemon --foreground --config /etc/g.toml");
  auto lines = Lines(ServiceUnitText(exec, false, 3));
  CHECK(Has(lines, "WantedBy=default.target"));
  CHECK(Has(lines, "Type=notify"));
  CHECK(Has(lines, "KillMode=process"));
  CHECK_FALSE(Has(lines, "WantedBy=multi-user.target"));
}

}  // namespace
}  // namespace gshare::unit_service_unit
