#include "base/output_pattern.h"

namespace gshare {

std::string ExpandOutputPattern(std::string_view pattern, int64_t job_id, std::string_view job_name,
                                std::string_view user) {
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
      case '%': out += '%'; break;
      default:
        // Kept whole, so "%5j" stays "%5j" and "%A" stays "%A".
        out += '%';
        out += symbol;
        break;
    }
  }
  return out;
}

}  // namespace gshare
