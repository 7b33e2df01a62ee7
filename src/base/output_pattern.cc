#include "base/output_pattern.h"

namespace gshare {

std::string ExpandOutputPattern(std::string_view pattern, int64_t job_id, std::string_view job_name,
                                std::string_view user, int64_t array_job_id,
                                std::optional<int64_t> array_task_id) {
  std::string out;
  out.reserve(pattern.size());
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    char symbol = pattern[++i];
    switch (symbol) {
      case 'j': out += std::to_string(job_id); break;
      case 'x': out += job_name; break;
      case 'u': out += user; break;
      case 'A': out += std::to_string(array_task_id ? array_job_id : job_id); break;
      case 'a':
        if (array_task_id) out += std::to_string(*array_task_id);
        break;
      case '%': out += '%'; break;
      default:
        // Kept whole, so "%5j" stays "%5j" and "%J" stays "%J".
        out += '%';
        out += symbol;
        break;
    }
  }
  return out;
}

}  // namespace gshare
