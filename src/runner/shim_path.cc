#include "runner/shim_path.h"

#include <cstdlib>
#include <filesystem>

namespace gshare {

std::string FindShim(const std::string& self_exe) {
  if (const char* env = std::getenv("GSHARE_SHIM"); env != nullptr && env[0] != '\0') {
    return env;
  }
  std::filesystem::path dir = std::filesystem::path(self_exe).parent_path();
  for (const auto& candidate : {dir / "libgshare.so", dir / ".." / "lib" / "libgshare.so",
                                dir / ".." / "lib" / "gshare" / "libgshare.so"}) {
    std::error_code ec;
    if (std::filesystem::exists(candidate, ec)) {
      return std::filesystem::weakly_canonical(candidate, ec).string();
    }
  }
  return "";
}

}  // namespace gshare
