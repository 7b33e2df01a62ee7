// Jupyter kernel specs whose kernels run as gshare jobs (`gshare kernel`, `run --kernel`):
// kernel names, the directories Jupyter reads specs from (its rules on Linux), the kernel.json
// gshare writes and how to tell such a spec from others. Main thread (the environment is read).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace gshare {

// The kernel name `kernel install` uses without --name, and the display name without
// --display-name.
inline constexpr const char* kDefaultKernelName = "gshare";
inline constexpr const char* kDefaultKernelDisplayName = "Python 3 (gshare)";

// Reads one environment variable: nullptr when unset. Tests pass a map's lookup.
using EnvLookup = std::function<const char*(const char* name)>;
// The process's environment (std::getenv).
EnvLookup ProcessEnv();

// Ok when `name` is a kernel name Jupyter accepts that is also a plain directory name: 1 to
// 255 ASCII letters, digits, '-', '_' and '.', and not "." or "..". Else a one-line error
// quoting it (escaped: TerminalText).
Status CheckKernelName(const std::string& name);

// The user's kernel specs, where Jupyter on Linux looks first after $JUPYTER_PATH:
// $JUPYTER_DATA_DIR/kernels when that is set and not empty, else
// $XDG_DATA_HOME/jupyter/kernels, else $HOME/.local/share/jupyter/kernels (the password
// database's home when HOME is unset or empty).
std::string UserKernelsDir(const EnvLookup& env);

// The kernel specs of an installation prefix (a sys.prefix, --prefix DIR):
// DIR/share/jupyter/kernels.
std::string PrefixKernelsDir(const std::string& prefix);

// The directories `kernel list` reads, in the order Jupyter searches them: <entry>/kernels for
// each entry of $JUPYTER_PATH, the user's, PrefixKernelsDir(sys_prefix) when sys_prefix is not
// empty, /usr/local/share/jupyter/kernels, /usr/share/jupyter/kernels; each once.
std::vector<std::string> KernelSearchDirs(const EnvLookup& env, const std::string& sys_prefix);

// What a gshare kernel spec holds.
struct KernelSpecArgs {
  std::string gshare;                // absolute path of the gshare binary
  std::string name;                  // the kernel's name (CheckKernelName)
  std::vector<std::string> options;  // `run` options, passed to it as they are
  std::string python;                // absolute path of the interpreter
  std::string display_name;          // empty: kDefaultKernelDisplayName
};

// kernel.json: argv [gshare, "run", "--kernel", name, options..., "--", python, "-m",
// "ipykernel_launcher", "-f", "{connection_file}"], display_name, language "python",
// interrupt_mode "signal" (SIGINT to `gshare run`, which forwards it to the kernel) and
// metadata.gshare.version.
nlohmann::json KernelSpecJson(const KernelSpecArgs& args);

// True when `spec` (a parsed kernel.json) is gshare's: argv[1] and argv[2] are "run" and
// "--kernel".
bool IsGshareKernelSpec(const nlohmann::json& spec);

// The parts of a gshare spec's argv (IsGshareKernelSpec): the options between the kernel name
// and "--", and the kernel's command after "--". Empty when absent.
std::vector<std::string> KernelSpecOptions(const nlohmann::json& spec);
std::vector<std::string> KernelSpecCommand(const nlohmann::json& spec);

// The job name of a kernel started by `run --kernel kernel_name`: the file name without its
// extension of `session_name` ($JPY_SESSION_NAME, the notebook's path under Jupyter Server 2;
// may be nullptr) when that gives one, else kernel_name.
std::string KernelJobName(const char* session_name, const std::string& kernel_name);

// spec_dir/kernel.json, parsed. Errors (one line, naming the file): unreadable, not a JSON
// object.
Result<nlohmann::json> ReadKernelSpec(const std::string& spec_dir);

// Writes `spec` to spec_dir/kernel.json, creating spec_dir and its parents, through a
// temporary file renamed over the old one, so a reader sees the old or the new spec. Errors
// are one line naming the path.
Status WriteKernelSpec(const std::string& spec_dir, const nlohmann::json& spec);

}  // namespace gshare
