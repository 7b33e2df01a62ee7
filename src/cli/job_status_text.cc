#include "cli/job_status_text.h"

#include <cstring>
#include <ctime>

#include "base/byte_size.h"
#include "base/duration.h"
#include "model/job_record.h"
#include "base/terminal_text.h"
#include "cli/acct_format.h"
#include "cli/queue_format.h"
#include "ipc/job_list.h"

namespace gshare {
using json = nlohmann::json;

std::string JobStatusText(const json& job, double now,
                          const std::function<std::string(uint32_t)>& user) {
  Result<JobRecord> read = JobFromJson(job);
  if (!read.ok()) return "";
  const JobRecord& r = read.value();
  const bool hidden = job.value("hidden", false);
  std::string out;
  auto line = [&out](const std::string& text) { out += text + "\n"; };
  line("JobId=" + std::to_string(r.id) + " JobName=" + TerminalText(r.name));
  std::string who = TerminalText(user(r.uid)) + "(" + std::to_string(r.uid) + ")";
  line("   UserId=" + who + " Kind=" + std::string(JobKindName(r.kind)) +
       " Priority=" + std::to_string(r.priority));
  std::string state = "   JobState=" + std::string(JobStateName(r.state)) +
                      " Reason=" + (r.reason.empty() ? "None" : TerminalText(r.reason));
  if (IsFinal(r.state)) state += " ExitCode=" + ExitCodeText(r);
  line(state + " Restarts=" + std::to_string(r.restarts));
  if (r.IsArrayTask()) {
    line("   ArrayJobId=" + std::to_string(r.array_job_id) +
         " ArrayTaskId=" + std::to_string(r.array_task_id) + " (" + JobArrayIdText(r) + ")");
  }
  line("   SubmitTime=" + TimeText(r.submit_time) + " StartTime=" + TimeText(r.start_time) +
       " EndTime=" + TimeText(r.end_time));
  std::string times =
      "   RunTime=" + FormatSeconds(RunElapsed(r, now)) +
      " Waited=" + FormatSeconds(RunReserved(r, now)) + " TimeLimit=" +
      (r.time_limit_ms > 0 ? FormatDuration(std::chrono::milliseconds(r.time_limit_ms))
                           : std::string("UNLIMITED"));
  if (r.begin_time) times += " BeginTime=" + TimeText(r.begin_time);
  if (r.warn_signal > 0) {  // scontrol's form: "USR1@60"
    const char* name = sigabbrev_np(r.warn_signal);
    times += " Signal=" + std::string(r.warn_main_only ? "B:" : "") +
             (name != nullptr ? std::string(name) : std::to_string(r.warn_signal)) + "@" +
             std::to_string(r.warn_ms / 1000);
  }
  line(times);
  if (hidden) {
    line("   (command, directory and output are shown to the job's owner only)");
  } else {
    line("   Command=" + CommandText(r.argv));
    line("   WorkDir=" + TerminalText(r.cwd));
    const std::string output = r.output.empty() ? std::string("(the terminal of its gshare run)")
                                                : JobFilePath(r.output, r, user(r.uid));
    std::string files = "   StdOut=" + TerminalText(output);
    if (!r.error.empty()) {
      files += " StdErr=" + TerminalText(JobFilePath(r.error, r, user(r.uid)));
    }
    if (r.open_append) files += " OpenMode=append";
    line(files);
    if (!r.dependency.empty() || r.held) {
      line("   Dependency=" + (r.dependency.empty() ? std::string("(null)") : r.dependency) +
           " Held=" + (r.held ? "yes" : "no"));
    }
  }
  const std::string gpu = !r.slot.empty() ? r.slot : r.gpu;
  std::string placement = "   GPU=" + (gpu.empty() ? std::string("any") : TerminalText(gpu)) +
                          " GPUs=" + std::to_string(r.gpus);
  const json mem = job.value("memory", json::object());
  const std::string engine =
      mem.value("engine", r.memory ? std::string(MemoryEngineName(*r.memory)) : std::string());
  placement += " Memory=" + (engine.empty() ? std::string("default") : TerminalText(engine));
  if (job.contains("lease") && job.at("lease").is_string()) {
    std::string lease = job.at("lease").get<std::string>();
    if (lease == "idle" && job.value("idle_seconds", json()).is_number()) {
      lease += " " + FormatSeconds(job.at("idle_seconds").get<double>());
    }
    placement += " Lease=" + lease;
  }
  line(placement);
  // A live job's swaps are the ledger's; an ended job's were recorded when it ended.
  uint64_t out_count = r.swaps_out, in_count = r.swaps_in;
  if (mem.contains("allocated")) {
    out_count = mem.value("swaps_out", uint64_t{0}) + mem.value("checkpoints", uint64_t{0});
    in_count = mem.value("swaps_in", uint64_t{0}) + mem.value("restores", uint64_t{0});
  }
  line("   GPUTime=" + FormatSeconds(r.lease_seconds) +
       " LeaseWait=" + FormatSeconds(r.wait_seconds) + " PeakMem=" + FormatBytes(r.peak_bytes) +
       " Swaps=" + std::to_string(out_count) + "/" + std::to_string(in_count));
  if (mem.contains("allocated")) {
    line("   MemAlloc=" + FormatBytes(mem.value("allocated", uint64_t{0})) +
         " Resident=" + FormatBytes(mem.value("resident", uint64_t{0})) +
         " Swapped=" + FormatBytes(mem.value("swapped", uint64_t{0})) + " Moved=" +
         FormatBytes(mem.value("bytes_out", uint64_t{0}) + mem.value("bytes_in", uint64_t{0})));
  }
  return out;
}

std::string JobCommandText(const nlohmann::json& job) {
  std::string out;
  for (const auto& a : job.value("argv", nlohmann::json::array())) {
    if (!out.empty()) out += ' ';
    out += a.is_string() ? a.get<std::string>() : a.dump();
  }
  const auto slurm = job.find("slurm_job_id");
  if (out.empty() && slurm != job.end() && slurm->is_number_integer()) {
    out = "slurm step " + std::to_string(slurm->get<int64_t>()) + "." +
          job.value("slurm_step", std::string());
  }
  return TerminalText(out);
}

}  // namespace gshare
