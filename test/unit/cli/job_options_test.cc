#include "cli/job_options.h"

#include <doctest/doctest.h>

#include "ipc/job_end.h"
#include "temp_dir.h"

namespace gshare::unit_job_options {
namespace {

// Parses `args` (after the command name) as job options of a throwaway CLI11 app.
JobOptions Parse(std::vector<std::string> args) {
  JobOptions opt;
  CLI::App app;
  AddJobOptions(app, &opt);
  std::reverse(args.begin(), args.end());
  app.parse(args);
  opt.MarkGiven();
  opt.options.clear();
  return opt;
}

TEST_CASE("ResolveJobOptions parses every option into a job record") {
  Config config;
  config.queue.gpus = 2;  // --gpu 1 must exist
  JobOptions opt = Parse({"-J",     "train",       "-p",         "7",  "--quantum",    "5s",
                          "--gpu",  "1",           "-t",         "90", "--kill-after", "10s",
                          "-d",     "afterok:3:4", "--after",    "5",  "-H",           "--begin",
                          "now+1h", "-o",          "out/%j.log", "-D", "/tmp",         "--env",
                          "A=1"});
  Result<JobRecord> r = ResolveJobOptions(opt, {"python3", "train.py"}, config, 1000.0);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->name == "train");
  CHECK(r->priority == 7);
  CHECK(r->quantum_ms == 5000);
  CHECK(r->gpu == "1");
  CHECK(r->time_limit_ms == 90 * 60 * 1000);  // Slurm: a bare number is minutes
  CHECK(r->kill_after_ms == 10'000);
  CHECK(r->dependency == "afterok:3:4:5");
  CHECK(r->held);
  CHECK(r->begin_time == 1000.0 + 3600);
  CHECK(r->cwd == "/tmp");
  CHECK(r->output == "/tmp/out/%j.log");  // relative to the job's directory

  Result<JobRecord> plain = ResolveJobOptions(Parse({}), {"/usr/bin/env"}, config, 0);
  REQUIRE(plain.ok());
  CHECK(plain->name == "env");
  CHECK(plain->priority == config.scheduler.default_priority);
  CHECK(plain->quantum_ms == config.scheduler.quantum.count());
  CHECK(plain->kill_after_ms == 30'000);
  CHECK(plain->dependency.empty());
}

TEST_CASE("ResolveJobOptions refuses bad values with the option's name") {
  Config config;
  auto error = [&](std::vector<std::string> args) {
    Result<JobRecord> r = ResolveJobOptions(Parse(std::move(args)), {"x"}, config, 0);
    REQUIRE_FALSE(r.ok());
    return r.status().message();
  };
  CHECK(error({"-t", "soon"}).find("--time") == 0);
  CHECK(error({"--begin", "25:00"}).find("--begin") == 0);
  CHECK(error({"-d", "after:1"}).find("--dependency") == 0);
  CHECK(error({"--after", "x"}).find("--after") == 0);
  CHECK(error({"-p", "5000"}).find("--priority") == 0);
  CHECK(error({"--quantum", "0s"}).find("--quantum") == 0);
  CHECK(error({"--env", "NOEQUALS"}).find("--env") == 0);
  CHECK_FALSE(ResolveJobOptions(Parse({}), {}, config, 0).ok());
}

TEST_CASE("Script directives give options the command line has not") {
  Result<JobOptions> script = ParseScriptOptions(
      "#!/bin/sh\n#GSHARE -J fromscript -p 3\n#GSHARE --env A=script -t 5\necho hi\n#GSHARE -p 9\n",
      "job.sh");
  REQUIRE_MESSAGE(script.ok(), script.status().message());
  JobOptions cli = Parse({"-p", "1", "--env", "B=cli"});
  cli.Merge(script.value());
  CHECK(cli.name == "fromscript");
  CHECK(cli.priority == "1");  // the command line wins
  CHECK(cli.time_limit == "5");
  CHECK(cli.env == std::vector<std::string>{"A=script", "B=cli"});
  Result<JobOptions> bad = ParseScriptOptions("#GSHARE --bogus\n", "job.sh");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("job.sh") == 0);
}

TEST_CASE("--array is a #GSHARE directive too, and the command line's wins") {
  Result<JobOptions> script =
      ParseScriptOptions("#!/bin/sh\n#GSHARE -J sweep\n#GSHARE -a 1,3\n", "j.sh");
  REQUIRE_MESSAGE(script.ok(), script.status().message());
  CHECK(script->array == "1,3");
  JobOptions plain = Parse({});
  plain.Merge(script.value());
  CHECK(plain.array == "1,3");
  JobOptions cli;
  CLI::App app;
  AddJobOptions(app, &cli);
  AddBatchOptions(app, &cli);
  app.parse(std::vector<std::string>{"0-1", "--array"});  // reversed: --array 0-1
  cli.MarkGiven();
  cli.Merge(script.value());
  CHECK(cli.array == "0-1");
  CHECK(cli.name == "sweep");
  // `run` has no --array.
  CHECK_THROWS(Parse({"--array", "0-1"}));
}

TEST_CASE("A job's end survives in its end file") {
  TempDir dir;
  JobEnd end;
  end.exit_code = 3;
  end.timed_out = true;
  const std::string path = JobEndPath(dir.path(), 42);
  CHECK(path == dir.path() + "/jobs/42.end");
  CHECK_FALSE(ReadJobEnd(path).has_value());
  REQUIRE(WriteJobEnd(path, end, 42).ok());
  std::optional<JobEnd> back = ReadJobEnd(path);
  REQUIRE(back.has_value());
  CHECK(back->exit_code == 3);
  CHECK_FALSE(back->signal.has_value());
  CHECK(back->timed_out);
  CHECK(FinalStateOf(*back) == JobState::kTimeout);
  back->timed_out = false;
  CHECK(FinalStateOf(*back) == JobState::kFailed);
  back->exit_code = 0;
  CHECK(FinalStateOf(*back) == JobState::kCompleted);
  back->signal = 9;
  CHECK(FinalStateOf(*back) == JobState::kFailed);
}

TEST_CASE("hostile users: submit refuses a directory or output the job could never use") {
  TempDir dir;
  Config config;
  config.queue.gpus = 1;
  auto check = [&](std::vector<std::string> args) {
    Result<JobRecord> r = ResolveJobOptions(Parse(std::move(args)), {"true"}, config, 1000.0);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    return CheckJobPaths(r.value());
  };
  CHECK(check({"-D", dir.path()}).ok());
  Status st = check({"-D", "/nonexistent"});
  REQUIRE_FALSE(st.ok());
  CHECK(st.message() == "--chdir: directory /nonexistent does not exist");
  const std::string file = dir.Write("file", "x");
  CHECK(check({"-D", file}).message() == "--chdir: " + file + " is not a directory");

  st = check({"-o", "/proc/nope/%j.out"});
  REQUIRE_FALSE(st.ok());
  CHECK(st.message() == "--output /proc/nope/%j.out: directory /proc/nope does not exist");
  CHECK_FALSE(check({"-o", dir.path() + "/missing/out.log"}).ok());
  CHECK(check({"-o", dir.path() + "/%x-%j.out"}).ok());
  CHECK(check({"-o", "/dev/null"}).ok());  // an existing file, written in place
  // Directories named by a %-symbol may be made before the job starts: only the fixed part is
  // checked.
  CHECK(check({"-o", dir.path() + "/%j/out.log"}).ok());
  CHECK_FALSE(check({"-o", "/nonexistent/%j/out.log"}).ok());
  // Relative to -D.
  CHECK(check({"-D", dir.path(), "-o", "out.log"}).ok());
  CHECK_FALSE(check({"-D", dir.path(), "-o", "sub/out.log"}).ok());
}

}  // namespace
}  // namespace gshare::unit_job_options
