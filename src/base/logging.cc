// spdlog to stderr; messages are data for humans, never for stdout.
#include "base/logging.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gshare {
namespace {

// Lines that start with their local time to the millisecond: -v's and debug's with the level
// and pid, a log file's with the usual prefix.
constexpr const char* kDebugPattern = "[%Y-%m-%d %H:%M:%S.%e] [%l] [%P] %v";
constexpr const char* kStampedPattern = "[%Y-%m-%d %H:%M:%S.%e] gshare: %v";

}  // namespace

void SetupLogging(bool verbose) {
  auto logger = spdlog::stderr_logger_mt("gshare");
  if (verbose) {
    logger->set_pattern(kDebugPattern);
    logger->set_level(spdlog::level::debug);
  } else {
    logger->set_pattern("gshare: %v");
    logger->set_level(spdlog::level::info);
  }
  spdlog::set_default_logger(logger);
}

void StampLinesInFiles() {
  struct stat st;
  if (fstat(STDERR_FILENO, &st) != 0 || !S_ISREG(st.st_mode)) return;
  if (spdlog::get_level() <= spdlog::level::debug) return;  // -v's lines carry the time already
  spdlog::set_pattern(kStampedPattern);
}

void ApplyLogLevel(const std::string& level) {
  spdlog::level::level_enum l = spdlog::level::from_str(level);
  if (l <= spdlog::level::debug) spdlog::set_pattern(kDebugPattern);
  spdlog::set_level(l);
}

}  // namespace gshare
