#include "base/signal_spec.h"

#include <charconv>
#include <csignal>
#include <cstring>
#include <string>

#include "base/ascii.h"

namespace gshare {
namespace {

// A whole number of at most `max` written in decimal digits alone; nullopt otherwise.
std::optional<unsigned> Decimal(std::string_view text, unsigned max) {
  unsigned v = 0;
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || stop != end || v > max) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int> ParseSignal(std::string_view text) {
  std::string name(text);
  for (char& ch : name) {
    if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
  }
  if (name.rfind("SIG", 0) == 0) name.erase(0, 3);
  if (name.empty()) return std::nullopt;
  if (IsAsciiDigit(name[0])) {
    std::optional<unsigned> n = Decimal(name, NSIG - 1);
    return n && *n > 0 ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
  }
  for (int sig = 1; sig < NSIG; ++sig) {
    const char* abbrev = sigabbrev_np(sig);
    if (abbrev != nullptr && name == abbrev) return sig;
  }
  return std::nullopt;
}

Result<SignalSpec> ParseSignalSpec(std::string_view text) {
  auto bad = [&text](const std::string& why) {
    return Status::Error("--signal \"" + std::string(text) + "\": " + why +
                         " (expected [B:]SIG[@SECONDS], e.g. USR1@120 or B:TERM)");
  };
  SignalSpec spec;
  std::string_view rest = text;
  if (rest.size() >= 2 && rest[1] == ':') {
    if (rest[0] != 'B' && rest[0] != 'b') return bad(std::string("unknown flag ") + rest[0] + ":");
    spec.main_only = true;
    rest.remove_prefix(2);
  }
  const size_t at = rest.find('@');
  std::optional<int> sig = ParseSignal(rest.substr(0, at));
  if (!sig) return bad("not a signal");
  spec.signal = *sig;
  if (at != std::string_view::npos) {
    std::optional<unsigned> s = Decimal(rest.substr(at + 1), kMaxSignalLeadSeconds);
    if (!s) return bad("SECONDS must be 0 to 65535");
    spec.before = std::chrono::seconds(*s);
  }
  return spec;
}

}  // namespace gshare
