// What each config file was when a daemon read it, so that the daemon can tell later that a
// file changed (it reads its config once, at start). Stamp on the main thread before the
// daemon serves; Changed from the daemon's thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/config.h"

namespace gshare {

class ConfigStamp {
 public:
  // The file at `path` now (made absolute against the working directory): absent, or its
  // inode, size, modification time and content hash. Never fails: a file that cannot be read
  // is stamped absent.
  static ConfigStamp Take(const std::string& path);

  const std::string& path() const { return path_; }
  // Whether the file existed (and could be read) when stamped.
  bool present() const { return present_; }

  // True when the file now differs from the stamp: created, removed, or other content. One
  // stat(2); the file is read only when its inode, size or time differ, so a file that was
  // touched or rewritten with the same bytes is unchanged.
  bool Changed() const;

 private:
  std::string path_;
  bool present_ = false;
  uint64_t inode_ = 0;
  int64_t size_ = 0;
  int64_t mtime_ns_ = 0;
  uint64_t hash_ = 0;  // FNV-1a of the content
};

// A stamp of each file of `sources`, in their order (missing optional ones as absent).
std::vector<ConfigStamp> StampConfigFiles(const ConfigSources& sources);

}  // namespace gshare
