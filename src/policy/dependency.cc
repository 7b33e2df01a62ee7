#include "policy/dependency.h"

#include <algorithm>
#include <optional>

#include "base/ascii.h"

namespace gshare {
namespace {

struct TypeName {
  DependencyType type;
  std::string_view name;
};
constexpr TypeName kTypeNames[] = {
    {DependencyType::kAfterOk, "afterok"},
    {DependencyType::kAfterAny, "afterany"},
    {DependencyType::kAfterNotOk, "afternotok"},
    {DependencyType::kSingleton, "singleton"},
};

Status BadDependency(std::string_view text, std::string_view why) {
  return Status::Error("bad dependency \"" + std::string(text) + "\": " + std::string(why));
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (c != b[i]) return false;
  }
  return true;
}

// The parts of `text` between `sep`s; n separators give n+1 parts, some maybe empty.
std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (size_t begin = 0;;) {
    size_t end = text.find(sep, begin);
    parts.push_back(text.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

// A positive decimal job id; `text` is the whole input, for messages.
Result<int64_t> ParseJobId(std::string_view id, std::string_view text) {
  if (id.empty()) return BadDependency(text, "missing job id");
  int64_t value = 0;
  for (char c : id) {
    if (c < '0' || c > '9') {
      return BadDependency(text, "job id \"" + std::string(id) + "\" is not a positive integer");
    }
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, c - '0', &value)) {
      return BadDependency(text, "job id \"" + std::string(id) + "\" is too large");
    }
  }
  if (value == 0) {
    return BadDependency(text, "job id \"" + std::string(id) + "\" is not a positive integer");
  }
  return value;
}

std::string_view NameOf(DependencyType type) {
  for (const TypeName& t : kTypeNames) {
    if (t.type == type) return t.name;
  }
  return "?";  // unreachable for a valid enum value
}

}  // namespace

Result<std::vector<Dependency>> ParseDependencies(std::string_view text) {
  std::string_view t = TrimBlanks(text);
  if (t.empty()) return Status::Error("empty dependency list");
  // Slurm's "afterok:1?afterok:2" means "any one of"; gshare only has "all of".
  if (t.find('?') != std::string_view::npos) {
    return BadDependency(t,
                         "'?' (any one of) is not supported; join dependencies with ',' (all of)");
  }
  std::vector<Dependency> deps;
  // Blanks around entries and ids are forgiven ("afterok:1, afterany:2" as typed by hand).
  for (std::string_view raw : Split(t, ',')) {
    std::string_view entry = TrimBlanks(raw);
    if (entry.empty()) return BadDependency(t, "empty entry (expected TYPE:ID[:ID...])");
    std::vector<std::string_view> fields = Split(entry, ':');
    for (std::string_view& f : fields) f = TrimBlanks(f);
    std::optional<DependencyType> type;
    for (const TypeName& name : kTypeNames) {
      if (EqualsIgnoreCase(fields[0], name.name)) type = name.type;
    }
    if (!type) {
      return BadDependency(t, "unknown type \"" + std::string(fields[0]) +
                                  "\" (use afterok, afterany, afternotok or singleton)");
    }
    if (*type == DependencyType::kSingleton) {
      if (fields.size() != 1) return BadDependency(t, "singleton takes no job id");
      deps.push_back({*type, 0});
      continue;
    }
    if (fields.size() == 1) {
      return BadDependency(t, "missing job id after \"" + std::string(fields[0]) + "\"");
    }
    for (size_t i = 1; i < fields.size(); ++i) {
      Result<int64_t> job = ParseJobId(fields[i], t);
      if (!job.ok()) return job.status();
      deps.push_back({*type, *job});
    }
  }
  return deps;
}

Result<std::vector<Dependency>> ParseAfter(std::string_view text) {
  std::string_view t = TrimBlanks(text);
  if (t.empty()) return Status::Error("empty job id list");
  std::vector<Dependency> deps;
  for (std::string_view id : Split(t, ',')) {
    Result<int64_t> job = ParseJobId(TrimBlanks(id), t);
    if (!job.ok()) return job.status();
    deps.push_back({DependencyType::kAfterOk, *job});
  }
  return deps;
}

std::string FormatDependencies(const std::vector<Dependency>& deps) {
  std::string out;
  for (size_t i = 0; i < deps.size(); ++i) {
    if (i == 0 || deps[i].type != deps[i - 1].type || deps[i].type == DependencyType::kSingleton) {
      if (i > 0) out += ',';
      out += NameOf(deps[i].type);
    }
    if (deps[i].type != DependencyType::kSingleton) out += ':' + std::to_string(deps[i].job);
  }
  return out;
}

std::vector<int64_t> NamedJobs(const std::vector<Dependency>& deps) {
  std::vector<int64_t> jobs;
  for (const Dependency& d : deps) {
    if (d.type != DependencyType::kSingleton) jobs.push_back(d.job);
  }
  return jobs;
}

bool HasSingleton(const std::vector<Dependency>& deps) {
  return std::any_of(deps.begin(), deps.end(),
                     [](const Dependency& d) { return d.type == DependencyType::kSingleton; });
}

DependencyState EvaluateDependency(DependencyType type, std::optional<JobState> job_state) {
  if (!job_state) return DependencyState::kNever;  // no such job: it will never end
  if (!IsFinal(*job_state)) return DependencyState::kWaiting;
  bool completed = *job_state == JobState::kCompleted;
  switch (type) {
    case DependencyType::kAfterOk:
      return completed ? DependencyState::kSatisfied : DependencyState::kNever;
    case DependencyType::kAfterAny: return DependencyState::kSatisfied;
    case DependencyType::kAfterNotOk:
      return completed ? DependencyState::kNever : DependencyState::kSatisfied;
    case DependencyType::kSingleton: return DependencyState::kSatisfied;  // names no job
  }
  return DependencyState::kNever;  // unreachable for a valid enum value
}

DependencyState EvaluateDependencies(
    const std::vector<Dependency>& deps,
    const std::function<std::optional<JobState>(int64_t)>& state_of, bool singleton_waits) {
  DependencyState all = DependencyState::kSatisfied;
  for (const Dependency& dep : deps) {
    if (dep.type == DependencyType::kSingleton) {
      if (singleton_waits) all = DependencyState::kWaiting;
      continue;
    }
    DependencyState one = EvaluateDependency(dep.type, state_of(dep.job));
    if (one == DependencyState::kNever) return one;
    if (one == DependencyState::kWaiting) all = one;
  }
  return all;
}

}  // namespace gshare
