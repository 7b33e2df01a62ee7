#include "base/job_token.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace gshare {

Result<std::string> NewJobToken() {
  uint8_t bytes[kJobTokenBytes];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Error(std::string("getrandom failed: ") + strerror(errno));
    got += static_cast<size_t>(n);
  }
  return JobTokenHex(bytes);
}

std::string JobTokenHex(const uint8_t* bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string s(2 * kJobTokenBytes, '0');
  for (size_t i = 0; i < kJobTokenBytes; ++i) {
    s[2 * i] = kHex[bytes[i] >> 4];
    s[2 * i + 1] = kHex[bytes[i] & 0xf];
  }
  return s;
}

bool JobTokensEqual(std::string_view a, std::string_view b) {
  if (a.empty() || a.size() != b.size()) return false;
  unsigned diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  }
  return diff == 0;
}

}  // namespace gshare
