// Issue 24: `gshare queue --format`, -l and the default table's NAME column.
#include "cli/queue_format.h"

#include <doctest/doctest.h>

namespace gshare::unit_queue_format {
namespace {

JobRecord Task() {
  JobRecord r;
  r.id = 15;
  r.name = "resnet50-imagenet-lr0.001-wd1e-4";
  r.argv = {"python3", "train.py", "--lr", "0.001", "it's here"};
  r.uid = 1000;
  r.state = JobState::kRunning;
  r.priority = 5;
  r.start_time = 100.0;
  r.slot = "0";
  r.array_job_id = 12;
  r.array_task_id = 3;
  return r;
}

QueueRowContext Context() {
  return QueueRowContext{190.0, [](uint32_t uid) { return "u" + std::to_string(uid); }, {}};
}

TEST_CASE("--format takes squeue's long field names, any case, in order") {
  Result<std::vector<QueueColumn>> columns = ParseQueueFormat("jobid,NAME,command");
  REQUIRE(columns.ok());
  REQUIRE(columns->size() == 3);
  CHECK((*columns)[0].header == "ID");
  CHECK_FALSE((*columns)[0].needs_full_record);
  CHECK((*columns)[2].needs_full_record);  // argv is not in the streamed rows
  const std::string table = FormatQueueTable(columns.value(), {Task()}, Context(), true, false);
  CHECK(table ==
        "ID  NAME                              COMMAND\n"
        "15  resnet50-imagenet-lr0.001-wd1e-4  python3 train.py --lr 0.001 'it'\\''s here'\n");
  columns = ParseQueueFormat("jobarrayid,arrayjobid,arraytaskid,state,st,timeused,gpu,user");
  REQUIRE(columns.ok());
  CHECK(FormatQueueTable(columns.value(), {Task()}, Context(), false, false) ==
        "12_3  12  3  RUNNING  R  1:30  0  u1000\n");
  JobRecord plain;
  plain.id = 7;
  plain.submit_time = 0;
  CHECK(FormatQueueTable(columns.value(), {plain}, Context(), false, false) ==
        "7  7  N/A  PENDING  PD  0:00  -  u0\n");
}

TEST_CASE("an unknown or empty field is one line naming the known ones") {
  Result<std::vector<QueueColumn>> bad = ParseQueueFormat("jobid,bogus");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().rfind("unknown field \"bogus\" (fields: jobid,", 0) == 0);
  CHECK(bad.status().message().find('\n') == std::string::npos);
  CHECK_FALSE(ParseQueueFormat("").ok());
  CHECK_FALSE(ParseQueueFormat("jobid,").ok());
  CHECK_FALSE(ParseQueueFormat("jobid,,name").ok());
  for (const char* field :
       {"jobid", "state", "priority", "name", "command", "timeused", "gres", "reason", "username",
        "submittime", "starttime", "endtime", "arrayjobid", "arraytaskid", "jobarrayid", "workdir",
        "timelimit", "dependency", "statecompact"}) {
    CHECK_MESSAGE(ParseQueueFormat(field).ok(), field);
  }
}

TEST_CASE("the long form shows the command and whole names; state is coloured") {
  std::vector<QueueColumn> columns = LongQueueFormat();
  std::vector<std::string> headers;
  for (const QueueColumn& c : columns) headers.push_back(c.header);
  CHECK(headers == std::vector<std::string>{"ID", "ARRAY", "ST", "PRI", "USER", "NAME", "TIME",
                                            "GPU", "REASON", "COMMAND"});
  const std::string coloured = FormatQueueTable(columns, {Task()}, Context(), false, true);
  CHECK(coloured.find("\033[32mR\033[0m") != std::string::npos);
  CHECK(coloured.find("resnet50-imagenet-lr0.001-wd1e-4") != std::string::npos);
}

TEST_CASE("the default NAME column keeps 24 characters, and says when it cuts") {
  CHECK(FitColumn("short", 8) == "short   ");
  CHECK(FitColumn("resnet50-imagenet-lr0.001", 24) == "resnet50-imagenet-lr0.0\u2026");
  CHECK(FitColumn("resnet50-imagenet-lr0.01", 24) == "resnet50-imagenet-lr0.01");
  CHECK(FitColumn("h\u00e9llo", 6) == "h\u00e9llo ");  // characters, not bytes
  CHECK(FitColumn("", 2) == "  ");
}

TEST_CASE("Slurm's forms of ids, times and commands") {
  CHECK(JobArrayIdText(Task()) == "12_3");
  JobRecord plain;
  plain.id = 9;
  CHECK(JobArrayIdText(plain) == "9");
  CHECK(ElapsedText(59) == "0:59");
  CHECK(ElapsedText(3600) == "1:00:00");
  CHECK(ElapsedText(90061) == "1-01:01:01");
  CHECK(CommandText({"sh", "-c", "echo $X"}) == "sh -c 'echo $X'");
  CHECK(CommandText({"a", ""}) == "a ''");
  CHECK(CommandText({"printf", "a\nb"}) == "printf 'a\\nb'");  // escaped, then quoted
}

TEST_CASE("queue: a running job that waits for its lease shows REASON Lease, or the memory") {
  QueueRowContext context = Context();
  JobRecord r = Task();
  CHECK(QueueReason(r, context) == "");  // no daemon answered
  context.leases = {{15, {"waiting", ""}}};
  CHECK(QueueReason(r, context) == "Lease");
  Result<std::vector<QueueColumn>> columns = ParseQueueFormat("jobid,reason");
  REQUIRE(columns.ok());
  CHECK(FormatQueueTable(columns.value(), {r}, context, false, false) == "15  Lease\n");
  // A grant that waits for memory says which.
  context.leases = {{15, {"waiting", "HigherPriorityMemory"}}};
  CHECK(QueueReason(r, context) == "HigherPriorityMemory");
  context.leases = {{15, {"holding", ""}}};
  CHECK(QueueReason(r, context) == "");
  // A process that waits at its first CUDA call for room to join the GPU's MPS server.
  context.leases = {{15, {"idle", "", true}}};
  CHECK(QueueReason(r, context) == "MpsRoom");
  // A pending job keeps its own reason whatever the daemon says of its id.
  context.leases = {{15, {"waiting", "GpuMemory"}}};
  r.state = JobState::kPending;
  r.reason = "Priority";
  CHECK(QueueReason(r, context) == "Priority");
  // `queue --json` adds only what the daemon says a running job waits for.
  CHECK(LiveReason(r, context) == "");
  r.state = JobState::kRunning;
  CHECK(LiveReason(r, context) == "GpuMemory");
  context.leases = {{15, {"holding", ""}}};
  CHECK(LiveReason(r, context) == "");
}

}  // namespace
}  // namespace gshare::unit_queue_format
