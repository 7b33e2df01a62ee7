// process_identity.h: /proc reads that never throw (a file whose read fails is read as
// nothing, as one of a process that exits meanwhile is), a process's stat fields, and the child
// that leads its own process group; against a scratch /proc and this process.
#include "base/process_identity.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "temp_dir.h"

namespace gshare::unit_process_identity {
namespace {

TEST_CASE("a /proc file that cannot be read is read as nothing, without an exception") {
  TempDir dir;
  // A directory where a stat file belongs: open(2) succeeds, read(2) fails (EISDIR), as
  // read(2) fails with ESRCH for a process gone after the open.
  std::filesystem::create_directories(dir.path() + "/42/stat");
  CHECK(ReadProcFile(dir.path() + "/42/stat").empty());
  CHECK_FALSE(ReadProcessStat(42, dir.path()));
  CHECK(ReadProcFile(dir.path() + "/none").empty());
}

TEST_CASE("stat fields and the group-leading child, from a scratch /proc") {
  TempDir dir;
  auto add = [&dir](int pid, int ppid, int pgrp, char state) {
    std::filesystem::create_directories(dir.path() + "/" + std::to_string(pid));
    std::string stat = std::to_string(pid) + " (sh (x)) " + state + " " + std::to_string(ppid) +
                       " " + std::to_string(pgrp);
    for (int field = 6; field <= 21; ++field) stat += " 0";
    stat += " " + std::to_string(5000 + pid) + " 0\n";
    dir.Write(std::to_string(pid) + "/stat", stat);
  };
  add(10, 1, 10, 'S');   // the supervisor
  add(12, 10, 10, 'S');  // a child in the supervisor's own group
  add(14, 10, 14, 'Z');  // a group leader already dead
  add(15, 10, 15, 'S');  // the job
  add(16, 11, 16, 'S');  // another parent's
  std::optional<ProcessStat> s = ReadProcessStat(15, dir.path());
  REQUIRE(s);
  CHECK(s->state == 'S');
  CHECK(s->ppid == 10);
  CHECK(s->pgrp == 15);
  CHECK(s->start_ticks == 5015);
  CHECK(GroupLeaderChild(10, dir.path()) == 15);
  CHECK_FALSE(GroupLeaderChild(15, dir.path()));
  CHECK(ReadProcessStat(getpid()).has_value());  // the real /proc
}

TEST_CASE("a process's command: its arguments split at NULs and its working directory") {
  const ProcessCommand self = ReadProcessCommand(getpid());
  REQUIRE(!self.argv.empty());
  CHECK(std::filesystem::path(self.argv[0]).filename() == "gshare_unit_tests");
  CHECK(self.cwd == std::filesystem::current_path().string());
  // A process that is gone: nothing, no exception.
  const ProcessCommand gone = ReadProcessCommand(0x3ffffff);
  CHECK(gone.argv.empty());
  CHECK(gone.cwd.empty());
}

}  // namespace
}  // namespace gshare::unit_process_identity
