// `gshare kernel install|list|remove`: Jupyter kernel specs whose kernels run as gshare jobs
// (`gshare run --kernel NAME [job options] -- PYTHON -m ipykernel_launcher ...`), so that a
// notebook in JupyterLab, Notebook or VS Code is a job named after it. Exit status: 0; 1 error
// (a file that cannot be written or removed, no such spec); 2 bad usage (a bad name or job
// option, an interpreter without ipykernel, a spec that is not gshare's).
#include <fcntl.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/terminal_text.h"
#include "cli/cli.h"
#include "cli/job_options.h"
#include "cli/kernel_spec.h"
#include "ipc/job_json.h"

extern char** environ;

namespace gshare {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Where specs go: --user (default), --sys-prefix (the interpreter's sys.prefix), --prefix DIR.
struct Location {
  bool user = false;
  bool sys_prefix = false;
  std::string prefix;
  std::string python;  // --python; empty: python3 from PATH
};

struct InstallOptions {
  std::string name = kDefaultKernelName;
  std::string display_name;
  Location where;
  JobOptions job;
};

struct RemoveOptions {
  std::string name;
  Location where;
};

int KernelUsage(const std::string& message) {
  spdlog::error("{}", message);
  return kExitUsage;
}

int KernelError(const std::string& message) {
  spdlog::error("{}", message);
  return kExitError;
}

struct Interpreter {
  std::string executable;  // its sys.executable
  std::string prefix;      // its sys.prefix
};

// Runs `python -c ...` (looked up in PATH without a '/') and reads its sys.executable and
// sys.prefix; with `ipykernel`, it must also import ipykernel. Errors are one line.
Result<Interpreter> AskPython(const std::string& python, bool ipykernel) {
  std::string code = "import sys; print(sys.executable); print(sys.prefix)";
  if (ipykernel) code += "; import ipykernel";
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Status::Error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  // A traceback is no message for the user: the one line below says what is missing.
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> args = {python, "-c", code};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; spawned == 0 && (n = read(out[0], buf, sizeof buf)) != 0;) {
    if (n > 0) text.append(buf, static_cast<size_t>(n));
    if (n < 0 && errno != EINTR) break;
  }
  close(out[0]);
  if (spawned != 0) {
    return Status::Error("cannot run the interpreter " + python + ": " + std::strerror(spawned));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Interpreter found;
  const size_t eol = text.find('\n');
  if (eol != std::string::npos) {
    found.executable = text.substr(0, eol);
    found.prefix = text.substr(eol + 1, text.find('\n', eol + 1) - eol - 1);
  }
  if (found.prefix.empty()) {
    return Status::Error("cannot run the interpreter " + python + " (is it Python 3?)");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string named = found.executable.empty() || found.executable == python
                                  ? python
                                  : python + " (" + found.executable + ")";
    return Status::Error(named + " cannot import ipykernel: install it for that interpreter " +
                         "(Debian: apt install python3-ipykernel; else: " + python +
                         " -m pip install ipykernel)");
  }
  if (found.executable.empty()) found.executable = python;
  return found;
}

// The kernels directory `where` names; asks the interpreter for --sys-prefix unless `known`
// already holds its answer.
Result<std::string> KernelsDir(const Location& where, const Interpreter* known) {
  if (!where.prefix.empty()) return PrefixKernelsDir(fs::absolute(where.prefix).string());
  if (!where.sys_prefix) return UserKernelsDir(ProcessEnv());
  if (known != nullptr) return PrefixKernelsDir(known->prefix);
  Result<Interpreter> python = AskPython(where.python.empty() ? "python3" : where.python, false);
  if (!python.ok()) return python.status();
  return PrefixKernelsDir(python->prefix);
}

// The job options given, each as --LONG=VALUE (one token, so that a value starting with '-'
// stays a value), with --chdir and --output made absolute: a kernel starts in whatever
// directory the notebook server picks.
std::vector<std::string> GivenJobOptions(const JobOptions& opt, const JobRecord& resolved) {
  std::vector<std::string> out;
  for (const auto& [long_name, option] : opt.options) {
    if (option->count() == 0) continue;
    for (const std::string& value : option->results()) {
      std::string v = value;
      if (long_name == "chdir" || long_name == "output") {
        v = fs::path(long_name == "chdir" ? resolved.cwd : resolved.output).lexically_normal();
        if (v.size() > 1 && v.back() == '/') v.pop_back();
      }
      out.push_back("--" + long_name + "=" + v);
      if (long_name == "chdir" || long_name == "output") break;  // the last one counts
    }
  }
  return out;
}

int InstallKernel(const GlobalOptions& global, InstallOptions& opt) {
  if (Status name = CheckKernelName(opt.name); !name.ok()) {
    return KernelUsage("kernel install: " + name.message());
  }
  opt.job.MarkGiven();
  for (const char* waits : {"dependency", "after", "hold", "begin"}) {
    if (opt.job.given.count(waits) != 0) {
      return KernelUsage(std::string("kernel install: --") + waits +
                         " is not for kernels: a notebook's kernel must start when it opens");
    }
  }
  Result<Config> config = LoadConfig(DefaultConfigSources(global.config_path));
  if (!config.ok()) return KernelError("kernel install: " + config.status().message());
  Result<Interpreter> python =
      AskPython(opt.where.python.empty() ? "python3" : opt.where.python, true);
  if (!python.ok()) return KernelUsage("kernel install: " + python.status().message());
  // Resolved as `gshare run` will resolve them when the kernel starts, so that a bad option
  // fails now and not in the notebook.
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  Result<JobRecord> record = ResolveJobOptions(
      opt.job, {python->executable, "-m", "ipykernel_launcher"}, config.value(), now);
  if (!record.ok()) return KernelUsage("kernel install: " + record.status().message());

  KernelSpecArgs args;
  std::error_code ec;
  args.gshare = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) return KernelError("kernel install: cannot find the gshare executable: " + ec.message());
  args.name = opt.name;
  if (global.config_path) {
    args.options.push_back("--config=" + fs::absolute(*global.config_path).string());
  }
  for (std::string& o : GivenJobOptions(opt.job, record.value())) args.options.push_back(o);
  args.python = python->executable;
  args.display_name = opt.display_name;

  Result<std::string> dir = KernelsDir(opt.where, &python.value());
  if (!dir.ok()) return KernelError("kernel install: " + dir.status().message());
  const std::string spec_dir = dir.value() + "/" + opt.name;
  const bool replacing = fs::exists(spec_dir + "/kernel.json", ec);
  if (Status written = WriteKernelSpec(spec_dir, KernelSpecJson(args)); !written.ok()) {
    return KernelError("kernel install: " + written.message());
  }
  if (replacing) spdlog::info("replaced the kernel spec {} in {}", opt.name, dir.value());
  std::printf("%s/kernel.json\n", spec_dir.c_str());
  return 0;
}

struct Found {
  std::string name;
  std::string dir;  // the spec's directory
  json spec;
};

// Every gshare spec in the directories Jupyter searches, in its order, by name in each.
std::vector<Found> FindSpecs() {
  Result<Interpreter> python = AskPython("python3", false);  // its sys.prefix, when there is one
  std::vector<Found> found;
  for (const std::string& dir : KernelSearchDirs(ProcessEnv(), python.ok() ? python->prefix : "")) {
    std::error_code ec;
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (e.is_directory(ec)) names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      Result<json> spec = ReadKernelSpec(dir + "/" + name);
      if (spec.ok() && IsGshareKernelSpec(spec.value())) {
        found.push_back({name, dir + "/" + name, std::move(spec.value())});
      }
    }
  }
  return found;
}

// `word` as a shell reads it back: single-quoted unless it has only safe characters.
std::string ShellWord(const std::string& word) {
  const bool safe = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("@%+=:,./_-", c) != nullptr;
  });
  if (safe) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

int ListKernels(bool json_output) {
  std::vector<Found> specs = FindSpecs();
  if (json_output) {
    json doc{{"schema_version", kJsonSchemaVersion}, {"kernels", json::array()}};
    for (const Found& f : specs) {
      std::vector<std::string> command = KernelSpecCommand(f.spec);
      const json display = f.spec.value("display_name", json(""));
      doc["kernels"].push_back({{"name", f.name},
                                {"directory", f.dir},
                                {"display_name", display.is_string() ? display : json("")},
                                {"options", KernelSpecOptions(f.spec)},
                                {"python", command.empty() ? "" : command.front()},
                                {"argv", f.spec["argv"]}});
    }
    std::printf("%s\n", ToJsonText(doc, 2).c_str());
    return 0;
  }
  size_t name_width = 4, dir_width = 9;
  for (const Found& f : specs) {
    name_width = std::max(name_width, TerminalText(f.name).size());
    dir_width = std::max(dir_width, TerminalText(f.dir).size());
  }
  const int nw = static_cast<int>(name_width), dw = static_cast<int>(dir_width);
  std::printf("%-*s  %-*s  %s\n", nw, "NAME", dw, "DIRECTORY", "OPTIONS");
  for (const Found& f : specs) {
    std::string options;
    for (const std::string& o : KernelSpecOptions(f.spec)) {
      options += (options.empty() ? "" : " ") + ShellWord(o);
    }
    std::printf("%-*s  %-*s  %s\n", nw, TerminalText(f.name).c_str(), dw,
                TerminalText(f.dir).c_str(), options.empty() ? "-" : TerminalText(options).c_str());
  }
  return 0;
}

int RemoveKernel(const RemoveOptions& opt) {
  if (Status name = CheckKernelName(opt.name); !name.ok()) {
    return KernelUsage("kernel remove: " + name.message());
  }
  Result<std::string> dir = KernelsDir(opt.where, nullptr);
  if (!dir.ok()) return KernelError("kernel remove: " + dir.status().message());
  const std::string spec_dir = dir.value() + "/" + opt.name;
  std::error_code ec;
  if (!fs::exists(spec_dir + "/kernel.json", ec)) {
    return KernelError("kernel remove: no kernel spec " + opt.name + " in " + dir.value());
  }
  Result<json> spec = ReadKernelSpec(spec_dir);
  if (!spec.ok() || !IsGshareKernelSpec(spec.value())) {
    return KernelUsage("kernel remove: " + spec_dir +
                       " is not a gshare kernel spec; remove it with: jupyter kernelspec remove " +
                       opt.name);
  }
  fs::remove_all(spec_dir, ec);
  if (ec) return KernelError("kernel remove: cannot remove " + spec_dir + ": " + ec.message());
  std::printf("%s\n", spec_dir.c_str());
  return 0;
}

void AddLocation(CLI::App& app, Location* where, bool python) {
  CLI::Option* user = app.add_flag("--user", where->user, "The user's kernels (default)");
  CLI::Option* sys = app.add_flag("--sys-prefix", where->sys_prefix,
                                  "The kernels of the interpreter's sys.prefix (a venv, conda)");
  CLI::Option* prefix =
      app.add_option("--prefix", where->prefix, "The kernels of DIR/share/jupyter/kernels")
          ->check(CLI::Validator(
              [](std::string& dir) { return dir.empty() ? std::string("empty") : std::string(); },
              "DIR"));
  user->excludes(sys)->excludes(prefix);
  sys->excludes(prefix);
  if (python) {
    app.add_option("--python", where->python,
                   "The kernel's interpreter (default: python3 from PATH); needs ipykernel");
  } else {
    app.add_option("--python", where->python, "Whose sys.prefix --sys-prefix means");
  }
}

}  // namespace

void AddKernelCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  sub.require_subcommand(1);
  auto install_opt = std::make_shared<InstallOptions>();
  CLI::App* install_cmd = sub.add_subcommand(
      "install", "Write a kernel spec whose kernels run as gshare jobs with these job options");
  AddJobOptions(*install_cmd, &install_opt->job);
  for (auto& [long_name, option] : install_opt->job.options) {
    // Refused by Install (a kernel must start at once): not offered either.
    if (long_name == "dependency" || long_name == "after" || long_name == "hold" ||
        long_name == "begin") {
      option->group("");
    }
    if (long_name != "name") continue;
    // --name names the kernel, as for `ipykernel install`; the job's name is -J.
    install_cmd->remove_option(option);
    option = install_cmd->add_option("-J,--job-name", install_opt->job.name,
                                     "Job name (default: the notebook's file name)");
  }
  install_cmd->add_option("--name", install_opt->name, "Kernel name (default: gshare)");
  install_cmd->add_option("--display-name", install_opt->display_name,
                          "Name in the notebook's kernel menu (default: Python 3 (gshare))");
  AddLocation(*install_cmd, &install_opt->where, true);
  install_cmd->footer(
      "Examples:\n"
      "  gshare kernel install                          # kernel \"Python 3 (gshare)\"\n"
      "  gshare kernel install --name gpu-hi -p 10 --display-name 'GPU (priority 10)'\n"
      "  gshare kernel install --sys-prefix --python .venv/bin/python   # in the venv\n"
      "Exit status: 0; 1 error; 2 bad name or option, or no ipykernel for the interpreter.");

  auto list_json = std::make_shared<bool>(false);
  CLI::App* list_cmd = sub.add_subcommand("list", "List the gshare kernel specs Jupyter finds");
  list_cmd->add_flag("--json", *list_json, "Print one JSON document");

  auto remove_opt = std::make_shared<RemoveOptions>();
  CLI::App* remove_cmd = sub.add_subcommand("remove", "Remove a gshare kernel spec");
  remove_cmd->add_option("name", remove_opt->name, "Kernel name")->required();
  AddLocation(*remove_cmd, &remove_opt->where, false);
  remove_cmd->footer(
      "Exit status: 0; 1 no such spec, or it cannot be removed; 2 the spec is not gshare's.");

  sub.footer(
      "Examples:\n"
      "  gshare kernel install -p 5      # then pick \"Python 3 (gshare)\" in the notebook\n"
      "  gshare kernel list\n"
      "  gshare kernel remove gshare");
  *handler = [install_cmd, list_cmd, install_opt, list_json, remove_opt, &global]() {
    if (install_cmd->parsed()) return InstallKernel(global, *install_opt);
    if (list_cmd->parsed()) return ListKernels(*list_json);
    return RemoveKernel(*remove_opt);
  };
}

}  // namespace gshare
