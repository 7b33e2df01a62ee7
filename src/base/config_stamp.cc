#include "base/config_stamp.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

namespace gshare {
namespace {

// The file's content hash, or nullopt when it cannot be read.
std::optional<uint64_t> HashFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  uint64_t hash = 14695981039346656037ULL;
  for (std::istreambuf_iterator<char> it(in), end; it != end; ++it) {
    hash = (hash ^ static_cast<unsigned char>(*it)) * 1099511628211ULL;
  }
  if (in.bad()) return std::nullopt;
  return hash;
}

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

}  // namespace

ConfigStamp ConfigStamp::Take(const std::string& path) {
  ConfigStamp stamp;
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  stamp.path_ = ec ? path : absolute.lexically_normal().string();
  struct stat st {};
  if (stat(stamp.path_.c_str(), &st) != 0) return stamp;
  std::optional<uint64_t> hash = HashFile(stamp.path_);
  if (!hash) return stamp;
  stamp.present_ = true;
  stamp.inode_ = st.st_ino;
  stamp.size_ = st.st_size;
  stamp.mtime_ns_ = MtimeNs(st);
  stamp.hash_ = *hash;
  return stamp;
}

bool ConfigStamp::Changed() const {
  struct stat st {};
  const bool exists = stat(path_.c_str(), &st) == 0;
  if (exists != present_) return true;
  if (!exists) return false;
  if (st.st_ino == inode_ && st.st_size == size_ && MtimeNs(st) == mtime_ns_) return false;
  std::optional<uint64_t> hash = HashFile(path_);
  return !hash || *hash != hash_;
}

std::vector<ConfigStamp> StampConfigFiles(const ConfigSources& sources) {
  std::vector<ConfigStamp> stamps;
  for (const ConfigSource& source : sources.files) stamps.push_back(ConfigStamp::Take(source.path));
  return stamps;
}

}  // namespace gshare
