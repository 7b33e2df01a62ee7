// Character classes of the parsers' ASCII grammars, independent of the C locale (std::isdigit
// depends on it). Any thread.
#pragma once

#include <string_view>

namespace gshare {

inline bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// `text` without its leading and trailing spaces and tabs; empty when it has nothing else.
inline std::string_view TrimBlanks(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

}  // namespace gshare
