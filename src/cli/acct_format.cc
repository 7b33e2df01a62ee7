#include "cli/acct_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "base/terminal_text.h"

namespace gshare {
namespace {

using Value = std::function<std::string(const JobRun&, const AcctContext&)>;

struct FieldSpec {
  const char* name;
  size_t width;
  Value value;
};

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// sacct's names, then gshare's; a second name of one field is an alias.
const std::vector<FieldSpec>& Fields() {
  static const auto* fields = new std::vector<FieldSpec>{
      {"JobID", 8, [](const JobRun& r, const AcctContext&) { return std::to_string(r.job.id); }},
      {"JobName", 24, [](const JobRun& r, const AcctContext&) { return TerminalText(r.job.name); }},
      {"User", 9,
       [](const JobRun& r, const AcctContext& c) { return TerminalText(c.user(r.job.uid)); }},
      {"UID", 6, [](const JobRun& r, const AcctContext&) { return std::to_string(r.job.uid); }},
      {"State", 10, [](const JobRun& r, const AcctContext&) { return AcctStateText(r); }},
      {"Reason", 20,
       [](const JobRun& r, const AcctContext&) {
         return r.job.reason.empty() ? std::string("None") : TerminalText(r.job.reason);
       }},
      {"Submit", 19,
       [](const JobRun& r, const AcctContext&) { return TimeText(r.job.submit_time); }},
      {"Start", 19, [](const JobRun& r, const AcctContext&) { return TimeText(r.job.start_time); }},
      {"End", 19, [](const JobRun& r, const AcctContext&) { return TimeText(r.job.end_time); }},
      {"Elapsed", 10,
       [](const JobRun& r, const AcctContext& c) {
         return AcctDuration(RunElapsed(r.job, c.now));
       }},
      {"Reserved", 10,
       [](const JobRun& r, const AcctContext& c) {
         return AcctDuration(RunReserved(r.job, c.now));
       }},
      {"ExitCode", 8, [](const JobRun& r, const AcctContext&) { return ExitCodeText(r.job); }},
      {"Priority", 10,
       [](const JobRun& r, const AcctContext&) { return std::to_string(r.job.priority); }},
      {"Restarts", 8,
       [](const JobRun& r, const AcctContext&) { return std::to_string(r.job.restarts); }},
      {"GPUTime", 10,
       [](const JobRun& r, const AcctContext&) { return AcctDuration(r.job.lease_seconds); }},
      {"LeaseWait", 10,
       [](const JobRun& r, const AcctContext&) { return AcctDuration(r.job.wait_seconds); }},
      {"PeakMem", 9,
       [](const JobRun& r, const AcctContext&) { return AcctBytes(r.job.peak_bytes); }},
      {"Swaps", 9,
       [](const JobRun& r, const AcctContext&) {
         return std::to_string(r.job.swaps_out) + "/" + std::to_string(r.job.swaps_in);
       }},
      {"GPU", 6,
       [](const JobRun& r, const AcctContext&) {
         const std::string gpu = TerminalText(!r.job.slot.empty() ? r.job.slot : r.job.gpu);
         return gpu.empty() ? std::string("-") : gpu;
       }},
  };
  return *fields;
}

// Other names sacct users type for the same fields.
const char* Alias(const std::string& lower) {
  if (lower == "planned") return "reserved";  // Slurm 23.02 renamed Reserved to Planned
  if (lower == "jobidraw") return "jobid";
  if (lower == "run") return "restarts";
  return nullptr;
}

AcctField Make(const FieldSpec& spec, size_t width) {
  return AcctField{spec.name, width, spec.value};
}

}  // namespace

std::string TimeText(const std::optional<double>& t) {
  if (!t) return "Unknown";
  std::time_t secs = static_cast<std::time_t>(*t);
  std::tm local{};
  if (localtime_r(&secs, &local) == nullptr) return "Unknown";
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &local);
  return buf;
}

Result<std::vector<AcctField>> ParseAcctFormat(std::string_view list) {
  std::vector<AcctField> out;
  size_t begin = 0;
  for (;;) {
    size_t comma = list.find(',', begin);
    std::string_view item = list.substr(
        begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin);
    std::optional<size_t> width;
    std::string_view name = item;
    if (size_t percent = item.find('%'); percent != std::string_view::npos) {
      name = item.substr(0, percent);
      std::string_view digits = item.substr(percent + 1);
      if (digits.empty() || digits.size() > 4 ||
          digits.find_first_not_of("0123456789") != std::string_view::npos ||
          std::stoi(std::string(digits)) == 0) {
        return Status::Error("bad width in \"" + std::string(item) +
                             "\": expected FIELD%N, N from 1 to 9999");
      }
      width = static_cast<size_t>(std::stoi(std::string(digits)));
    }
    if (name.empty()) return Status::Error("empty field name; known: " + AcctFieldNames());
    std::string lower = Lower(name);
    if (const char* alias = Alias(lower)) lower = alias;
    const FieldSpec* found = nullptr;
    for (const FieldSpec& spec : Fields()) {
      if (Lower(spec.name) == lower) found = &spec;
    }
    if (found == nullptr) {
      return Status::Error("unknown field \"" + TerminalText(name) +
                           "\"; known: " + AcctFieldNames());
    }
    out.push_back(Make(*found, width.value_or(found->width)));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return out;
}

std::vector<AcctField> DefaultAcctFormat() {
  return ParseAcctFormat(
             "JobID,JobName,User,State,Start,Elapsed,Reserved,GPUTime,PeakMem,Swaps,ExitCode")
      .value();
}

std::vector<AcctField> LongAcctFormat() { return ParseAcctFormat(AcctFieldNames()).value(); }

std::string AcctFieldNames() {
  std::string names;
  for (const FieldSpec& spec : Fields())
    names += (names.empty() ? "" : ",") + std::string(spec.name);
  return names;
}

namespace {

// `text` in a column of `width` characters (UTF-8 code points): padded, or cut with a '+' at
// its end (sacct's mark).
void AppendCell(std::string* line, const std::string& text, size_t width, bool last) {
  auto starts_char = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; };
  size_t chars = 0;
  size_t cut = std::string::npos;  // the byte where character width-1 begins
  for (size_t i = 0; i < text.size(); ++i) {
    if (!starts_char(text[i])) continue;
    if (chars == (width > 0 ? width - 1 : 0)) cut = i;
    ++chars;
  }
  if (chars <= width) {
    line->append(text);
    if (!last) line->append(width - chars, ' ');
    return;
  }
  line->append(text, 0, cut);
  line->push_back('+');
}

std::string Join(const std::vector<AcctField>& fields, AcctStyle style,
                 const std::function<std::string(const AcctField&)>& cell) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    const bool last = i + 1 == fields.size();
    if (style == AcctStyle::kTable) {
      AppendCell(&line, cell(fields[i]), fields[i].width, last);
      if (!last) line.push_back(' ');
    } else {
      line += cell(fields[i]);
      if (!last || style == AcctStyle::kParsable) line.push_back('|');
    }
  }
  line.push_back('\n');
  return line;
}

}  // namespace

std::string AcctHeader(const std::vector<AcctField>& fields, AcctStyle style) {
  std::string out = Join(fields, style, [](const AcctField& f) { return f.name; });
  if (style == AcctStyle::kTable) {
    out += Join(fields, style, [](const AcctField& f) { return std::string(f.width, '-'); });
  }
  return out;
}

std::string AcctLine(const std::vector<AcctField>& fields, const JobRun& run,
                     const AcctContext& context, AcctStyle style) {
  return Join(fields, style, [&](const AcctField& f) { return f.value(run, context); });
}

nlohmann::json AcctJson(const JobRun& run, const AcctContext& context) {
  const JobRecord& r = run.job;
  auto optional = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  auto array = [&r](int64_t v) { return r.IsArrayTask() ? nlohmann::json(v) : nlohmann::json(); };
  return {{"job_id", r.id},
          {"restarts", r.restarts},
          {"name", r.name},
          {"user", context.user(r.uid)},
          {"uid", r.uid},
          {"state", AcctStateText(run)},
          {"reason", r.reason},
          {"priority", r.priority},
          {"gpu", !r.slot.empty() ? r.slot : r.gpu},
          {"submit_time", r.submit_time},
          {"start_time", optional(r.start_time)},
          {"end_time", optional(r.end_time)},
          {"elapsed_seconds", RunElapsed(r, context.now)},
          {"reserved_seconds", RunReserved(r, context.now)},
          {"gpu_seconds", r.lease_seconds},
          {"lease_wait_seconds", r.wait_seconds},
          {"peak_bytes", r.peak_bytes},
          {"swaps_out", r.swaps_out},
          {"swaps_in", r.swaps_in},
          {"exit_code", optional(r.exit_code)},
          {"signal", optional(r.signal)},
          {"exit", ExitCodeText(r)},
          {"array_job_id", array(r.array_job_id)},
          {"array_task_id", array(r.array_task_id)}};
}

std::string AcctStateText(const JobRun& run) {
  return run.requeued ? "REQUEUED" : JobStateName(run.job.state);
}

std::string ExitCodeText(const JobRecord& r) {
  return std::to_string(r.signal ? 0 : r.exit_code.value_or(0)) + ":" +
         std::to_string(r.signal.value_or(0));
}

std::string AcctDuration(double seconds) {
  const int64_t s = seconds > 0 && std::isfinite(seconds) ? static_cast<int64_t>(seconds) : 0;
  char buf[48];
  const int64_t days = s / 86400;
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days),
                  static_cast<long long>(s / 3600 % 24), static_cast<long long>(s / 60 % 60),
                  static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  }
  return buf;
}

std::string AcctBytes(uint64_t bytes) {
  if (bytes == 0) return "0";
  static const char kUnits[] = {'\0', 'K', 'M', 'G', 'T', 'P'};
  double v = static_cast<double>(bytes);
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < sizeof kUnits) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%lluB", static_cast<unsigned long long>(bytes));
  } else if (v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f%c", v, kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f%c", v, kUnits[unit]);
  }
  return buf;
}

double RunElapsed(const JobRecord& r, double now) {
  if (!r.start_time) return 0;
  return std::max(0.0, r.end_time.value_or(now) - *r.start_time);
}

double RunReserved(const JobRecord& r, double now) {
  // A job cancelled while pending never started: its time in the queue ends with it.
  const double until = r.start_time ? *r.start_time : r.end_time.value_or(now);
  return std::max(0.0, until - r.submit_time);
}

}  // namespace gshare
