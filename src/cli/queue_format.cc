#include "cli/queue_format.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>

#include "base/terminal_text.h"

namespace gshare {
namespace {

using Value = std::function<std::string(const JobRecord&, const QueueRowContext&)>;

struct FieldSpec {
  const char* field;
  const char* header;
  bool needs_full_record;
  bool is_state;
  Value value;
};

// Slurm's "YYYY-MM-DDTHH:MM:SS" in local time; "N/A" when unset, as squeue prints it.
std::string SqueueTimeText(const std::optional<double>& t) {
  if (!t) return "N/A";
  std::time_t secs = static_cast<std::time_t>(*t);
  std::tm local{};
  localtime_r(&secs, &local);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &local);
  return buf;
}

std::string GpuText(const JobRecord& r) {
  const std::string gpu = TerminalText(!r.slot.empty() ? r.slot : r.gpu);
  return gpu.empty() ? "-" : gpu;
}

// squeue --Format's long names (lower case), and a few of ours where it has none.
const std::vector<FieldSpec>& Fields() {
  static const auto* fields = new std::vector<FieldSpec>{
      {"jobid", "ID", false, false,
       [](const JobRecord& r, const QueueRowContext&) { return std::to_string(r.id); }},
      {"jobarrayid", "ARRAY", false, false,
       [](const JobRecord& r, const QueueRowContext&) { return JobArrayIdText(r); }},
      {"arrayjobid", "ARRAY_JOB", false, false,
       [](const JobRecord& r, const QueueRowContext&) {
         return std::to_string(r.IsArrayTask() ? r.array_job_id : r.id);
       }},
      {"arraytaskid", "TASK", false, false,
       [](const JobRecord& r, const QueueRowContext&) {
         return r.IsArrayTask() ? std::to_string(r.array_task_id) : std::string("N/A");
       }},
      {"state", "STATE", false, true,
       [](const JobRecord& r, const QueueRowContext&) {
         return std::string(JobStateName(r.state));
       }},
      {"statecompact", "ST", false, true,
       [](const JobRecord& r, const QueueRowContext&) {
         return std::string(JobStateCode(r.state));
       }},
      {"priority", "PRI", false, false,
       [](const JobRecord& r, const QueueRowContext&) { return std::to_string(r.priority); }},
      {"username", "USER", false, false,
       [](const JobRecord& r, const QueueRowContext& c) { return TerminalText(c.user(r.uid)); }},
      {"name", "NAME", false, false,
       [](const JobRecord& r, const QueueRowContext&) { return TerminalText(r.name); }},
      {"command", "COMMAND", true, false,
       [](const JobRecord& r, const QueueRowContext&) { return CommandText(r.argv); }},
      {"workdir", "WORKDIR", true, false,
       [](const JobRecord& r, const QueueRowContext&) { return TerminalText(r.cwd); }},
      {"timeused", "TIME", false, false,
       [](const JobRecord& r, const QueueRowContext& c) {
         return ElapsedText(ElapsedSeconds(r, c.now));
       }},
      {"timelimit", "TIME_LIMIT", true, false,
       [](const JobRecord& r, const QueueRowContext&) {
         return r.time_limit_ms > 0 ? ElapsedText(static_cast<double>(r.time_limit_ms) / 1000)
                                    : std::string("UNLIMITED");
       }},
      {"gres", "GPU", false, false,
       [](const JobRecord& r, const QueueRowContext&) { return GpuText(r); }},
      {"reason", "REASON", false, false,
       [](const JobRecord& r, const QueueRowContext& c) {
         return TerminalText(QueueReason(r, c));
       }},
      {"submittime", "SUBMIT_TIME", false, false,
       [](const JobRecord& r, const QueueRowContext&) {
         return SqueueTimeText(std::optional<double>(r.submit_time));
       }},
      {"starttime", "START_TIME", false, false,
       [](const JobRecord& r, const QueueRowContext&) { return SqueueTimeText(r.start_time); }},
      {"endtime", "END_TIME", false, false,
       [](const JobRecord& r, const QueueRowContext&) { return SqueueTimeText(r.end_time); }},
      {"dependency", "DEPENDENCY", true, false,
       [](const JobRecord& r, const QueueRowContext&) {
         return r.dependency.empty() ? std::string("(null)") : TerminalText(r.dependency);
       }},
  };
  return *fields;
}

// Other names users of squeue or of our own tables write for a field.
std::string Canonical(std::string name) {
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (name == "gpu") return "gres";
  if (name == "user") return "username";
  if (name == "st") return "statecompact";
  return name;
}

QueueColumn ColumnOf(const FieldSpec& f) {
  return QueueColumn{f.field, f.header, f.needs_full_record, f.is_state, f.value};
}

size_t CodePoints(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace

Result<std::vector<QueueColumn>> ParseQueueFormat(std::string_view list) {
  std::vector<QueueColumn> columns;
  size_t begin = 0;
  while (true) {
    size_t comma = list.find(',', begin);
    std::string_view item = list.substr(
        begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin);
    if (item.empty())
      return Status::Error("an empty field name (fields: " + QueueFieldNames() + ")");
    const std::string name = Canonical(std::string(item));
    auto known = std::find_if(Fields().begin(), Fields().end(),
                              [&name](const FieldSpec& f) { return name == f.field; });
    if (known == Fields().end()) {
      return Status::Error("unknown field \"" + std::string(item) +
                           "\" (fields: " + QueueFieldNames() + ")");
    }
    columns.push_back(ColumnOf(*known));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return columns;
}

std::vector<QueueColumn> LongQueueFormat() {
  return ParseQueueFormat(
             "jobid,jobarrayid,statecompact,priority,username,name,timeused,gres,"
             "reason,command")
      .value();
}

std::string QueueFieldNames() {
  std::string names;
  for (const FieldSpec& f : Fields()) names += (names.empty() ? "" : ",") + std::string(f.field);
  return names;
}

std::string FormatQueueTable(const std::vector<QueueColumn>& columns,
                             const std::vector<JobRecord>& rows, const QueueRowContext& context,
                             bool header, bool color) {
  std::vector<std::vector<std::string>> cells;
  if (header) {
    std::vector<std::string>& line = cells.emplace_back();
    for (const QueueColumn& c : columns) line.push_back(c.header);
  }
  for (const JobRecord& r : rows) {
    std::vector<std::string>& line = cells.emplace_back();
    for (const QueueColumn& c : columns) line.push_back(c.value(r, context));
  }
  std::vector<size_t> widths(columns.size(), 0);
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], CodePoints(line[i]));
  }
  std::string out;
  for (size_t row = 0; row < cells.size(); ++row) {
    const bool heading = header && row == 0;
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string& cell = cells[row][i];
      const char* paint = color && !heading && columns[i].is_state
                              ? StateColor(rows[row - (header ? 1 : 0)].state)
                              : "";
      out += paint;
      out += cell;
      if (*paint != '\0') out += "\033[0m";
      if (i + 1 < columns.size()) out += std::string(widths[i] - CodePoints(cell) + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

const char* StateColor(JobState state) {
  switch (state) {
    case JobState::kRunning: return "\033[32m";
    case JobState::kPending: return "\033[33m";
    case JobState::kFailed:
    case JobState::kTimeout:
    case JobState::kLost: return "\033[31m";
    case JobState::kCancelled: return "\033[35m";
    case JobState::kSuspended:
    case JobState::kCompleted: return "";
  }
  return "";
}

std::string ElapsedText(double seconds) {
  long long s = static_cast<long long>(std::max(0.0, seconds));
  char buf[48];
  if (s >= 86400) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", s / 86400, s / 3600 % 24,
                  s / 60 % 60, s % 60);
  } else if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  }
  return buf;
}

double ElapsedSeconds(const JobRecord& r, double now) {
  if (!r.start_time) return 0;
  return r.end_time.value_or(now) - *r.start_time;
}

std::string ReasonText(const JobRecord& r) {
  if (!r.reason.empty() || !IsFinal(r.state)) return r.reason;
  if (r.signal) return "signal " + std::to_string(*r.signal);
  if (r.exit_code) return "exit " + std::to_string(*r.exit_code);
  return "";
}

std::string LiveReason(const JobRecord& r, const QueueRowContext& context) {
  if (r.state != JobState::kRunning) return "";
  auto lease = context.leases.find(r.id);
  if (lease == context.leases.end()) return "";
  if (lease->second.mps_arriving) return kMpsRoomReason;
  if (lease->second.lease == "waiting") {
    return lease->second.waiting_for.empty() ? kLeaseReason : lease->second.waiting_for;
  }
  return "";
}

std::string QueueReason(const JobRecord& r, const QueueRowContext& context) {
  std::string live = LiveReason(r, context);
  return live.empty() ? ReasonText(r) : live;
}

std::string FitColumn(std::string_view text, size_t columns) {
  std::string out;
  size_t used = 0;
  const size_t length = CodePoints(text);
  for (size_t i = 0; i < text.size();) {
    // One code point: a lead byte and its continuation bytes.
    size_t next = i + 1;
    while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
    if (length > columns && used + 1 == columns) {
      out += "\u2026";  // …: cut here
      ++used;
      break;
    }
    if (used == columns) break;
    out.append(text.substr(i, next - i));
    ++used;
    i = next;
  }
  out.append(columns - used, ' ');
  return out;
}

std::string JobArrayIdText(const JobRecord& r) {
  if (!r.IsArrayTask()) return std::to_string(r.id);
  return std::to_string(r.array_job_id) + "_" + std::to_string(r.array_task_id);
}

std::string CommandText(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    // Escaped before it is quoted, so that the quoting's own backslashes stay single.
    const std::string word = TerminalText(arg);
    if (!out.empty()) out += ' ';
    const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("-_./=:,+%@").find(c) != std::string_view::npos ||
             (static_cast<unsigned char>(c) & 0x80) != 0;
    });
    if (plain) {
      out += word;
      continue;
    }
    out += '\'';
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

}  // namespace gshare
