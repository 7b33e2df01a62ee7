// spdlog to stderr; messages are data for humans, never for stdout.
#include "base/logging.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gshare {

void SetupLogging(bool verbose) {
  auto logger = spdlog::stderr_logger_mt("gshare");
  if (verbose) {
    logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] [%P] %v");
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
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] gshare: %v");
}

void ApplyLogLevel(const std::string& level) {
  spdlog::level::level_enum l = spdlog::level::from_str(level);
  if (l <= spdlog::level::debug) spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] [%P] %v");
  spdlog::set_level(l);
}

}  // namespace gshare
