#include "base/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gshare {

Result<uint64_t> ParseByteSize(std::string_view text) {
  auto bad = [&text]() {
    return Status::Error("not a size: \"" + std::string(text) +
                         "\" (expected bytes or a number with K, M, G, T, KiB.., KB..)");
  };
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0) return bad();
  std::string number(text.substr(0, i));
  char* end = nullptr;
  double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value) || value < 0) return bad();
  std::string unit;
  for (char c : text.substr(i)) {
    if (c != ' ') unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  double scale = 0;
  if (unit.empty() || unit == "b") {
    scale = 1;
  } else {
    const char* prefixes = "kmgt";
    const char* p = unit.empty() ? nullptr : std::strchr(prefixes, unit[0]);
    if (p == nullptr) return bad();
    int power = static_cast<int>(p - prefixes) + 1;
    std::string rest = unit.substr(1);
    if (rest.empty() || rest == "ib") {
      scale = std::pow(1024.0, power);
    } else if (rest == "b") {
      scale = std::pow(1000.0, power);
    } else {
      return bad();
    }
  }
  double bytes = value * scale;
  if (bytes >= 1.8e19) return bad();
  if (scale == 1 && number.find('.') != std::string::npos) return bad();
  return static_cast<uint64_t>(std::llround(bytes));
}

Result<uint64_t> ParseByteSizeOrPercent(std::string_view text, uint64_t whole) {
  if (!text.empty() && text.back() == '%') {
    std::string number(text.substr(0, text.size() - 1));
    char* end = nullptr;
    double pct = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !(pct >= 0 && pct <= 100)) {
      return Status::Error("not a percentage from 0 to 100: \"" + std::string(text) + "\"");
    }
    return static_cast<uint64_t>(static_cast<double>(whole) * pct / 100.0);
  }
  return ParseByteSize(text);
}

std::string FormatBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%lluB", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, v < 10 ? "%.1f%s" : "%.0f%s", v, units[u]);
  }
  return buf;
}

}  // namespace gshare
