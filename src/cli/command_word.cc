#include "cli/command_word.h"

#include <algorithm>

namespace gshare {

int EditDistance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::optional<std::string> NearestWord(const std::string& word,
                                       const std::vector<std::string>& candidates) {
  const int limit = word.size() <= 4 ? 1 : 2;
  int best = limit + 1;
  std::vector<std::string> nearest;
  for (const std::string& c : candidates) {
    const int d = EditDistance(word, c);
    if (d > limit) continue;
    if (d < best) {
      best = d;
      nearest = {c};
    } else if (d == best) {
      nearest.push_back(c);
    }
  }
  if (nearest.size() == 1) return nearest.front();
  if (!nearest.empty() || word.empty()) return std::nullopt;  // two as near: no guess
  std::vector<std::string> prefixed;
  for (const std::string& c : candidates) {
    if (c.rfind(word, 0) == 0) prefixed.push_back(c);
  }
  if (prefixed.size() == 1) return prefixed.front();
  return std::nullopt;
}

int CommandWordIndex(int argc, const char* const* argv, std::vector<std::string>* unknown_options) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--config") {
      ++i;
    } else if (a.rfind("--config=", 0) == 0 || a == "-v" || a == "--verbose" || a == "--version" ||
               a == "-h" || a == "--help") {
      continue;
    } else if (!a.empty() && a[0] == '-') {
      if (unknown_options != nullptr) unknown_options->push_back(a);
    } else {
      return i;
    }
  }
  return -1;
}

}  // namespace gshare
