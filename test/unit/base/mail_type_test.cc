#include "base/mail_type.h"

#include <doctest/doctest.h>

namespace gshare::unit_mail_type {
namespace {

TEST_CASE("--mail-type takes Slurm's types in any case and writes them one way") {
  CHECK(ParseMailTypes("end,FAIL").value() == "END,FAIL");
  CHECK(ParseMailTypes("fail,end,END").value() == "END,FAIL");
  CHECK(ParseMailTypes("ALL").value() == "ALL");
  CHECK(ParseMailTypes("begin,requeue,time_limit,invalid_depend").value() ==
        "BEGIN,REQUEUE,TIME_LIMIT,INVALID_DEPEND");
  CHECK(ParseMailTypes("NONE").value().empty());
  CHECK(ParseMailTypes("none").value().empty());
  Result<std::string> bad = ParseMailTypes("END,STAGE_OUT2");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("\"STAGE_OUT2\"") != std::string::npos);
  CHECK_FALSE(ParseMailTypes("NONE,END").ok());
  CHECK_FALSE(ParseMailTypes("END,,FAIL").ok());
  CHECK_FALSE(ParseMailTypes(" END").ok());
}

}  // namespace
}  // namespace gshare::unit_mail_type
