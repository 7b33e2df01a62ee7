// Issue 21 item 4: a root daemon runs a user's job as that user.
#include "runner/job_identity.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

namespace gshare::unit_job_identity {
namespace {

TEST_CASE("Lookup fails for a uid nobody has") {
  Result<JobIdentity> who = JobIdentity::Lookup(4'000'000'123u);
  REQUIRE_FALSE(who.ok());
  CHECK(who.status().message() == "no user with uid 4000000123 in the password database");
}

TEST_CASE("Lookup gives the user's gid and groups") {
  Result<JobIdentity> root = JobIdentity::Lookup(0);
  REQUIRE(root.ok());
  CHECK(root->changes());
  CHECK(root->uid() == 0);
  CHECK(root->gid() == 0);
  CHECK(root->name() == "root");
  CHECK(std::find(root->groups().begin(), root->groups().end(), 0u) != root->groups().end());
  CHECK_FALSE(JobIdentity::Keep().changes());
  CHECK(JobIdentity::Keep().Become() == 0);
}

TEST_CASE("Become drops root for good (as root only)") {
  if (getuid() != 0) return;  // only root can change identity
  Result<JobIdentity> nobody = JobIdentity::Lookup(65534);
  if (!nobody.ok()) return;  // no "nobody" on this machine
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Exit codes say which check failed; 0 only when every one held.
    if (nobody->Become() != 0) _exit(1);
    if (getuid() != 65534 || geteuid() != 65534) _exit(2);
    if (getgid() != nobody->gid()) _exit(3);
    gid_t groups[64];
    int n = getgroups(64, groups);
    if (n < 0 || n != static_cast<int>(nobody->groups().size())) _exit(4);
    if (std::find(groups, groups + n, 0u) != groups + n && nobody->gid() != 0) _exit(5);
    if (setuid(0) == 0 || seteuid(0) == 0) _exit(6);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace gshare::unit_job_identity
