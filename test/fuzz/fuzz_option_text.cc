// libFuzzer target: the parsers of option text (--quantum and config durations, --time,
// --begin, sizes, --dependency and --after). The first byte picks the parser, the rest is the
// text. Round trips that the headers promise are checked: ParseDuration reads FormatDuration
// back, ParseDependencies reads FormatDependencies back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/begin_time.h"
#include "base/byte_size.h"
#include "policy/dependency.h"
#include "base/duration.h"

namespace {

void Duration(std::string_view text) {
  gshare::Result<std::chrono::milliseconds> d = gshare::ParseDuration(text);
  if (!d.ok()) return;
  if (d->count() < 0) abort();
  if (!gshare::ParseDuration(gshare::FormatDuration(d.value())).ok()) abort();
}

void Dependencies(std::string_view text, bool after) {
  gshare::Result<std::vector<gshare::Dependency>> deps =
      after ? gshare::ParseAfter(text) : gshare::ParseDependencies(text);
  if (!deps.ok()) return;
  if (deps->empty()) abort();
  gshare::Result<std::vector<gshare::Dependency>> again =
      gshare::ParseDependencies(gshare::FormatDependencies(deps.value()));
  if (!again.ok() || again.value() != deps.value()) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 7) {
    case 0: Duration(text); break;
    case 1: (void)gshare::ParseTimeLimit(text); break;
    case 2: (void)gshare::ParseBeginTime(text, 1'790'000'000.5); break;
    case 3: {
      gshare::Result<uint64_t> b = gshare::ParseByteSize(text);
      if (b.ok()) (void)gshare::FormatBytes(b.value());
      break;
    }
    case 4: (void)gshare::ParseByteSizeOrPercent(text, 64ull << 30); break;
    case 5: Dependencies(text, false); break;
    case 6: Dependencies(text, true); break;
  }
  return 0;
}
