#include "cli/script_directives.h"

#include <utility>

namespace gshare {
namespace {

constexpr std::string_view kPrefix = "#GSHARE";

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

Status Bad(size_t line_number, std::string_view why) {
  return Status::Error("script line " + std::to_string(line_number) + ": " + std::string(why) +
                       " in " + std::string(kPrefix) + " directive");
}

// Appends the words of `text` (a directive after its prefix) to `words`, as sh(1) splits them.
Status SplitWords(std::string_view text, size_t line_number, std::vector<std::string>* words) {
  size_t i = 0;
  while (true) {
    while (i < text.size() && IsBlank(text[i])) ++i;
    if (i == text.size() || text[i] == '#') return Status::Ok();  // '#' here starts a word
    std::string word;
    while (i < text.size() && !IsBlank(text[i])) {
      char c = text[i++];
      if (c == '\\') {
        if (i == text.size()) return Bad(line_number, "backslash at end of line");
        word += text[i++];
      } else if (c == '\'') {
        size_t close = text.find('\'', i);
        if (close == std::string_view::npos) return Bad(line_number, "unterminated ' quote");
        word += text.substr(i, close - i);
        i = close + 1;
      } else if (c == '"') {
        // sh(1): inside double quotes a backslash is special only before " \ $ ` (and newline).
        while (i < text.size() && text[i] != '"') {
          if (text[i] == '\\' && i + 1 < text.size() &&
              std::string_view("\"\\$`").find(text[i + 1]) != std::string_view::npos) {
            ++i;
          }
          word += text[i++];
        }
        if (i == text.size()) return Bad(line_number, "unterminated \" quote");
        ++i;
      } else {
        word += c;  // a '#' inside a word, as in a#b, is an ordinary character
      }
    }
    words->push_back(std::move(word));
  }
}

}  // namespace

Result<std::vector<std::string>> ParseScriptDirectives(std::string_view script) {
  std::vector<std::string> words;
  size_t line_number = 0;
  for (size_t begin = 0; begin < script.size();) {
    size_t end = script.find('\n', begin);
    if (end == std::string_view::npos) end = script.size();
    std::string_view line = script.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

    if (line.starts_with(kPrefix) &&
        (line.size() == kPrefix.size() || IsBlank(line[kPrefix.size()]))) {
      Status status = SplitWords(line.substr(kPrefix.size()), line_number, &words);
      if (!status.ok()) return status;
      continue;
    }
    size_t first = 0;
    while (first < line.size() && IsBlank(line[first])) ++first;
    if (first < line.size() && line[first] != '#') break;  // the first command: sbatch stops
  }
  return words;
}

}  // namespace gshare
