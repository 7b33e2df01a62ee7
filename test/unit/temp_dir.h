// Test helpers shared by the unit tests: a scratch directory and whole-file reads.
// Test threads only.
#pragma once

#include <stdlib.h>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gshare {

// A fresh directory under $TMPDIR, removed with its contents at scope exit (even when a
// test took the owner's permissions away from it).
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gshare-test-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Writes `text` to File(name) and returns that path.
  std::string Write(const std::string& name, const std::string& text) const {
    std::string p = File(name);
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace gshare
