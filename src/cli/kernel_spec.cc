#include "cli/kernel_spec.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/ascii.h"
#include "base/terminal_text.h"

namespace gshare {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// An environment variable's value, "" when unset.
std::string Get(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  return v == nullptr ? "" : v;
}

std::string Normal(const std::string& dir) {
  std::string p = fs::path(dir).lexically_normal().string();
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

Status CheckKernelName(const std::string& name) {
  // Jupyter's own rule is [a-z0-9._-]+ ignoring case; "." and ".." would name the kernels
  // directory or its parent.
  const bool chars = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsAsciiDigit(c) || c == '-' ||
           c == '_' || c == '.';
  });
  if (name.empty() || name.size() > 255 || !chars || name == "." || name == "..") {
    return Status::Error("bad kernel name \"" + TerminalText(name) +
                         "\": use ASCII letters, digits, '-', '_' and '.'");
  }
  return Status::Ok();
}

std::string UserKernelsDir(const EnvLookup& env) {
  if (std::string data = Get(env, "JUPYTER_DATA_DIR"); !data.empty()) return data + "/kernels";
  if (std::string xdg = Get(env, "XDG_DATA_HOME"); !xdg.empty()) {
    return xdg + "/jupyter/kernels";
  }
  std::string home = Get(env, "HOME");
  if (home.empty()) {
    const struct passwd* pw = getpwuid(getuid());
    if (pw != nullptr && pw->pw_dir != nullptr) home = pw->pw_dir;
  }
  return home + "/.local/share/jupyter/kernels";
}

std::string PrefixKernelsDir(const std::string& prefix) {
  return Normal(prefix + "/share/jupyter/kernels");
}

std::vector<std::string> KernelSearchDirs(const EnvLookup& env, const std::string& sys_prefix) {
  std::vector<std::string> dirs;
  auto add = [&dirs](const std::string& dir) {
    std::string d = Normal(dir);
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  };
  std::istringstream path(Get(env, "JUPYTER_PATH"));
  for (std::string entry; std::getline(path, entry, ':');) {
    if (!entry.empty()) add(entry + "/kernels");
  }
  add(UserKernelsDir(env));
  if (!sys_prefix.empty()) add(PrefixKernelsDir(sys_prefix));
  add("/usr/local/share/jupyter/kernels");
  add("/usr/share/jupyter/kernels");
  return dirs;
}

json KernelSpecJson(const KernelSpecArgs& args) {
  json argv = json::array({args.gshare, "run", "--kernel", args.name});
  for (const std::string& o : args.options) argv.push_back(o);
  for (const char* a :
       {"--", args.python.c_str(), "-m", "ipykernel_launcher", "-f", "{connection_file}"}) {
    argv.push_back(a);
  }
  return json{
      {"argv", argv},
      {"display_name", args.display_name.empty() ? kDefaultKernelDisplayName : args.display_name},
      {"language", "python"},
      {"interrupt_mode", "signal"},
      {"metadata", {{"gshare", {{"version", GSHARE_VERSION}}}}},
  };
}

namespace {

// The spec's argv as strings; empty when it is not an array of strings.
std::vector<std::string> Argv(const json& spec) {
  std::vector<std::string> out;
  if (!spec.is_object() || !spec.contains("argv") || !spec["argv"].is_array()) return out;
  for (const json& a : spec["argv"]) {
    if (!a.is_string()) return {};
    out.push_back(a.get<std::string>());
  }
  return out;
}

}  // namespace

bool IsGshareKernelSpec(const json& spec) {
  std::vector<std::string> argv = Argv(spec);
  return argv.size() >= 4 && argv[1] == "run" && argv[2] == "--kernel";
}

std::vector<std::string> KernelSpecOptions(const json& spec) {
  std::vector<std::string> argv = Argv(spec);
  if (argv.size() < 4) return {};
  auto end = std::find(argv.begin() + 4, argv.end(), "--");
  return std::vector<std::string>(argv.begin() + 4, end);
}

std::vector<std::string> KernelSpecCommand(const json& spec) {
  std::vector<std::string> argv = Argv(spec);
  if (argv.size() < 4) return {};
  auto dashes = std::find(argv.begin() + 4, argv.end(), "--");
  if (dashes == argv.end()) return {};
  return std::vector<std::string>(dashes + 1, argv.end());
}

std::string KernelJobName(const char* session_name, const std::string& kernel_name) {
  if (session_name == nullptr) return kernel_name;
  std::string stem = fs::path(session_name).stem().string();
  return stem.empty() ? kernel_name : stem;
}

Result<json> ReadKernelSpec(const std::string& spec_dir) {
  const std::string path = spec_dir + "/kernel.json";
  std::ifstream in(path);
  if (!in) return Status::Error(path + ": cannot read it");
  json spec = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!spec.is_object()) return Status::Error(path + ": not a JSON object");
  return spec;
}

Status WriteKernelSpec(const std::string& spec_dir, const json& spec) {
  std::error_code ec;
  fs::create_directories(spec_dir, ec);
  if (ec) return Status::Error("cannot create " + spec_dir + ": " + ec.message());
  const std::string path = spec_dir + "/kernel.json";
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << spec.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return Status::Error("cannot write " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    fs::remove(tmp, ec);
    return Status::Error("cannot write " + path);
  }
  return Status::Ok();
}

}  // namespace gshare
