#include "base/slurm_step.h"

#include <doctest/doctest.h>

#include <cstdlib>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "temp_dir.h"

namespace gshare::unit_slurm_step {
namespace {

TEST_CASE("ParseStepdTitle reads slurmstepd's title and nothing else") {
  CHECK(ParseStepdTitle("slurmstepd: [12.0]") == SlurmStep{12, "0"});
  CHECK(ParseStepdTitle(std::string("slurmstepd: [7.batch]\0\0", 23)) == SlurmStep{7, "batch"});
  CHECK(ParseStepdTitle("slurmstepd: [3.0]    ") == SlurmStep{3, "0"});
  CHECK(ParseStepdTitle("slurmstepd: [3.extern]") == SlurmStep{3, "extern"});
  CHECK_FALSE(ParseStepdTitle("slurmstepd: [12]"));
  CHECK_FALSE(ParseStepdTitle("slurmstepd: [.0]"));
  CHECK_FALSE(ParseStepdTitle("slurmstepd: [12.]"));
  CHECK_FALSE(ParseStepdTitle("slurmstepd: [0.0]"));
  CHECK_FALSE(ParseStepdTitle("slurmstepd: [-1.0]"));
  CHECK_FALSE(ParseStepdTitle("slurmstepd: [12.0] x"));
  CHECK_FALSE(ParseStepdTitle("slurmstepd: [12.0 ]"));
  CHECK_FALSE(ParseStepdTitle("slurmstepd: [12.A]"));
  CHECK_FALSE(ParseStepdTitle("/usr/sbin/slurmstepd"));
  CHECK_FALSE(ParseStepdTitle("slurmd"));
  CHECK_FALSE(ParseStepdTitle(""));
  CHECK(StepName(12, "batch") == "12.batch");
}

// A fake /proc: each process a directory with stat (pid, comm, state, ppid, ..., start time in
// field 22), status (its Uid: line) and cmdline.
class FakeProc {
 public:
  void Add(int pid, int ppid, int uid, const std::string& cmdline, char state = 'S',
           int euid = -1) {
    std::filesystem::create_directories(dir_.path() + "/" + std::to_string(pid));
    std::string stat = std::to_string(pid) + " (a (b) c) " + state + " " + std::to_string(ppid);
    for (int field = 5; field <= 21; ++field) stat += " 0";
    stat += " " + std::to_string(1000 + pid) + " 0 0\n";
    dir_.Write(std::to_string(pid) + "/stat", stat);
    const int e = euid < 0 ? uid : euid;
    dir_.Write(std::to_string(pid) + "/status", "Name:\tx\nUid:\t" + std::to_string(uid) + "\t" +
                                                    std::to_string(e) + "\t" + std::to_string(e) +
                                                    "\t" + std::to_string(e) + "\n");
    dir_.Write(std::to_string(pid) + "/cmdline", cmdline);
  }
  const std::string& root() const { return dir_.path(); }

 private:
  TempDir dir_;
};

TEST_CASE("SlurmStepOf trusts the first root-owned ancestor only") {
  FakeProc proc;
  proc.Add(1, 0, 0, "/sbin/init");
  proc.Add(100, 1, 0, "slurmd");
  proc.Add(200, 1, 0, std::string("slurmstepd: [12.0]\0", 19));
  proc.Add(201, 200, 1000, "slurmstepd: [12.0]");  // the task's fork, already the user's
  proc.Add(202, 201, 1000, "/bin/sh /etc/slurm/task-prolog");
  proc.Add(203, 202, 1000, "gshare slurm task-prolog");
  SUBCASE("a task prolog under a step") {
    std::optional<SlurmStep> s = SlurmStepOf(203, proc.root());
    REQUIRE(s);
    CHECK(s->job_id == 12);
    CHECK(s->step == "0");
    CHECK(s->stepd_pid == 200);
    CHECK(s->stepd_start == 1200);
  }
  SUBCASE("a user's process naming itself slurmstepd, under a root shell") {
    proc.Add(300, 1, 0, "sshd: alice");
    proc.Add(301, 300, 1000, "slurmstepd: [99.0]");
    proc.Add(302, 301, 1000, "gshare slurm task-prolog");
    CHECK_FALSE(SlurmStepOf(302, proc.root()));
  }
  SUBCASE("a setuid process (effective uid 0 only) is no root ancestor") {
    proc.Add(400, 1, 0, "sshd");
    proc.Add(401, 400, 1000, "slurmstepd: [5.0]", 'S', 0);
    proc.Add(402, 401, 1000, "x");
    CHECK_FALSE(SlurmStepOf(402, proc.root()));
  }
  SUBCASE("root's own process is no task") { CHECK_FALSE(SlurmStepOf(200, proc.root())); }
  SUBCASE("no such process, or a zombie on the way") {
    CHECK_FALSE(SlurmStepOf(999, proc.root()));
    proc.Add(500, 200, 1000, "slurmstepd: [12.0]", 'Z');
    proc.Add(501, 500, 1000, "x");
    CHECK_FALSE(SlurmStepOf(501, proc.root()));
  }
  SUBCASE("no root ancestor within reach") {
    proc.Add(600, 600, 1000, "loop");  // its own parent: the walk ends at its depth limit
    CHECK_FALSE(SlurmStepOf(600, proc.root()));
  }
}

TEST_CASE("SlurmStepOf of this test on the real /proc finds the step it runs in") {
  // Outside Slurm no slurmstepd is above us; inside a Slurm job (an srun of the tests) the
  // step found is that job's, as slurmd told the step's processes in SLURM_JOB_ID.
  const std::optional<SlurmStep> step = SlurmStepOf(getpid());
  const char* job = std::getenv("SLURM_JOB_ID");
  if (job == nullptr) {
    CHECK_FALSE(step);
  } else {
    REQUIRE(step);
    CHECK(step->job_id == std::atoll(job));
    CHECK(step->stepd_pid != getpid());
  }
}

}  // namespace
}  // namespace gshare::unit_slurm_step
