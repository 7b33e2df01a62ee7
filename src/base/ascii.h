// Character classes of the parsers' ASCII grammars, independent of the C locale (std::isdigit
// depends on it). Any thread.
#pragma once

namespace gshare {

inline bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace gshare
