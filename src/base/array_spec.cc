#include "base/array_spec.h"

#include <algorithm>
#include <string>

namespace gshare {
namespace {

// A decimal number of at most 9 digits (every id and limit fits; no overflow to check).
Result<int64_t> Number(std::string_view word, std::string_view what) {
  auto digits = [](std::string_view w) {
    return !w.empty() &&
           std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(word)) {
    return Status::Error(std::string(what) + " \"" + std::string(word) + "\" is not a number");
  }
  if (word.size() > 9) {
    return Status::Error(std::string(what) + " \"" + std::string(word) + "\" is above " +
                         std::to_string(kMaxArrayTaskId));
  }
  return static_cast<int64_t>(std::stoll(std::string(word)));
}

Status TooMany(int64_t count) {
  return Status::Error(std::to_string(count) + " tasks, at most " + std::to_string(kMaxArrayTasks));
}

// Sorts `ids` and drops repeats; fails when more than kMaxArrayTasks are left.
Status Deduplicate(std::vector<int64_t>* ids) {
  std::sort(ids->begin(), ids->end());
  ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
  if (static_cast<int64_t>(ids->size()) > kMaxArrayTasks) {
    return TooMany(static_cast<int64_t>(ids->size()));
  }
  return Status::Ok();
}

}  // namespace

Result<ArraySpec> ParseArraySpec(std::string_view text) {
  ArraySpec spec;
  size_t percent = text.find('%');
  if (percent != std::string_view::npos) {
    Result<int64_t> limit = Number(text.substr(percent + 1), "limit");
    if (!limit.ok()) return limit.status();
    if (limit.value() < 1) return Status::Error("limit %0: at least 1 task must run at once");
    spec.limit = limit.value();
    text = text.substr(0, percent);
  }
  if (text.empty()) return Status::Error("no task ids");
  std::vector<int64_t> ids;
  for (size_t begin = 0; begin <= text.size();) {
    size_t comma = text.find(',', begin);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(begin, comma - begin);
    begin = comma + 1;
    if (item.empty()) return Status::Error("an empty item in the list");
    size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      Result<int64_t> id = Number(item, "task id");
      if (!id.ok()) return id.status();
      ids.push_back(id.value());
    } else {
      std::string_view rest = item.substr(dash + 1);
      int64_t step = 1;
      size_t colon = rest.find(':');
      if (colon != std::string_view::npos) {
        Result<int64_t> s = Number(rest.substr(colon + 1), "step");
        if (!s.ok()) return s.status();
        if (s.value() < 1) return Status::Error("step 0 in \"" + std::string(item) + "\"");
        step = s.value();
        rest = rest.substr(0, colon);
      }
      Result<int64_t> first = Number(item.substr(0, dash), "task id");
      if (!first.ok()) return first.status();
      Result<int64_t> last = Number(rest, "task id");
      if (!last.ok()) return last.status();
      if (last.value() < first.value()) {
        return Status::Error("range \"" + std::string(item) + "\" ends before it begins");
      }
      // Counted before it is expanded: "0-999999999" must not fill memory first.
      const int64_t count = (last.value() - first.value()) / step + 1;
      if (count > kMaxArrayTasks) return TooMany(count);
      for (int64_t id = first.value(); id <= last.value(); id += step) ids.push_back(id);
    }
    // Deduplicated now and then, so that the list never holds much more than the limit.
    if (static_cast<int64_t>(ids.size()) > 2 * kMaxArrayTasks) {
      Status st = Deduplicate(&ids);
      if (!st.ok()) return st;
    }
  }
  Status st = Deduplicate(&ids);
  if (!st.ok()) return st;
  spec.task_ids = std::move(ids);
  return spec;
}

}  // namespace gshare
