// The columns of `gshare queue` (docs/cli.md): the fixed default table, the long form (-l)
// and --format=FIELD,... with field names from squeue(1) --Format. Pure functions of their
// arguments (the user-name lookup is the caller's): main thread of the CLI.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cli/daemon_glance.h"
#include "model/job_record.h"

namespace gshare {

// What a row's values may depend on besides the job.
struct QueueRowContext {
  double now = 0;                                 // unix seconds: the run time of running jobs
  std::function<std::string(uint32_t uid)> user;  // a user's name
  // The live jobs' leases by job id as the daemon tells them; empty when no daemon answered.
  std::map<int64_t, JobGlance> leases;
};

// REASON of a running job that waits for its GPU lease while another job holds it; one whose
// grant waits for memory shows what it waits for instead (JobGlance::waiting_for).
inline constexpr const char* kLeaseReason = "Lease";
// REASON of a running job whose process waits at its first CUDA call for room to join its GPU's
// MPS server ([mps] join_wait_seconds; docs/design.md "Arrival").
inline constexpr const char* kMpsRoomReason = "MpsRoom";

struct QueueColumn {
  std::string field;   // its --format name
  std::string header;  // its heading
  // Reads the job's argv or cwd, which the streamed summary rows leave out.
  bool needs_full_record = false;
  bool is_state = false;  // coloured by state on a terminal
  // The cell's text, already escaped for a terminal (base/terminal_text.h).
  std::function<std::string(const JobRecord&, const QueueRowContext&)> value;
};

// The columns of a comma-separated list of field names, in its order (any case; a name may
// repeat). Fails on an empty list or item, or an unknown name, with one line that lists the
// known ones.
Result<std::vector<QueueColumn>> ParseQueueFormat(std::string_view list);
// The long form's columns: ID ARRAY ST PRI USER NAME TIME GPU REASON COMMAND.
std::vector<QueueColumn> LongQueueFormat();
// Every field name, comma-separated, in the order docs/cli.md lists them.
std::string QueueFieldNames();

// The table of `rows` under `columns`: each column as wide as its widest cell (or heading
// when `header`), two spaces apart, the last one not padded; nothing is cut. State columns
// are coloured when `color`. Lines end in '\n'.
std::string FormatQueueTable(const std::vector<QueueColumn>& columns,
                             const std::vector<JobRecord>& rows, const QueueRowContext& context,
                             bool header, bool color);

// The terminal colour of a job's state in tables ("" for none).
const char* StateColor(JobState state);
// Slurm's elapsed-time form: M:SS, H:MM:SS, D-HH:MM:SS (negative counts as 0).
std::string ElapsedText(double seconds);
// The run time of `r` so far (running) or in all (ended); 0 before it starts.
double ElapsedSeconds(const JobRecord& r, double now);
// REASON: why a pending job waits; for an ended job what ended it ("exit 1", "signal 9").
std::string ReasonText(const JobRecord& r);
// What a running job that `context` says waits now waits for: room to join an MPS server
// (kMpsRoomReason), or, its lease waiting, what it waits for (JobGlance::waiting_for), else
// kLeaseReason; "" for a job that waits for none of these.
std::string LiveReason(const JobRecord& r, const QueueRowContext& context);
// LiveReason where it has one, else ReasonText.
std::string QueueReason(const JobRecord& r, const QueueRowContext& context);
// `text` cut to at most `columns` characters (UTF-8 code points), its last one "…" when
// cut, and padded with blanks to `columns`.
std::string FitColumn(std::string_view text, size_t columns);
// A job array task as Slurm's squeue shows it, "12_3"; any other job: its id.
std::string JobArrayIdText(const JobRecord& r);
// The command line of `argv` for a terminal: each word escaped as TerminalText does, then
// put in single quotes when it holds blanks, quotes or other shell characters.
std::string CommandText(const std::vector<std::string>& argv);

}  // namespace gshare
