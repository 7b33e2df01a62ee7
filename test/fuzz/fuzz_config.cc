// libFuzzer target: gshare.toml as LoadConfig (src/base/config.h) reads it: toml++ and the checks
// of every table and key. The input is the file, handed over as /proc/self/fd/N of a memfd.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("gshare.toml", MFD_CLOEXEC);
  if (fd < 0) abort();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) abort();
  gshare::ConfigSources sources;
  sources.files.push_back({"/proc/self/fd/" + std::to_string(fd), true});
  (void)gshare::LoadConfig(sources);
  return 0;
}
