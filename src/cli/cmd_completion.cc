// `gshare completion bash|zsh|fish`: prints a shell completion script, generated from the
// same CLI11 definitions that parse the command line, so it never lists a stale option.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace gshare {
namespace {

struct Words {
  std::vector<std::string> shorts;  // "-p"
  std::vector<std::string> longs;   // "--priority"
};

Words OptionWords(const CLI::App& app) {
  Words w;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden (internal) options
    for (const std::string& s : opt->get_snames()) w.shorts.push_back("-" + s);
    for (const std::string& l : opt->get_lnames()) w.longs.push_back("--" + l);
  }
  return w;
}

std::string Join(const Words& w) {
  std::string out;
  for (const auto& v : {w.shorts, w.longs}) {
    for (const std::string& s : v) out += (out.empty() ? "" : " ") + s;
  }
  return out;
}

// The names of a command's own subcommands (`kernel install`), each after a space.
std::string SubcommandNames(const CLI::App& app) {
  std::string out;
  for (const CLI::App* sub : app.get_subcommands({})) out += " " + sub->get_name();
  return out;
}

// Commands whose words are job ids: those that steer a job offer the jobs that have not ended
// (`gshare queue`: pending, running, suspended), those that read or restart one offer every job
// (`queue -a`), newest first. The states -t/--state takes are Slurm's codes.
constexpr const char* kLiveIdCommands = "cancel hold release set-priority update suspend resume";
constexpr const char* kAnyIdCommands = "requeue logs wait status";
constexpr const char* kLiveJobIds = "gshare queue --no-header --format=jobid 2>/dev/null";
constexpr const char* kAnyJobIds = "gshare queue -a --no-header --format=jobid 2>/dev/null";
constexpr const char* kStateCodes = "PD R S CD F CA TO LO RQ";

// The command that lists the ids `command` takes, or nullptr when it takes none.
const char* JobIdsFor(const std::string& command) {
  const std::string word = " " + command + " ";
  if ((std::string(" ") + kLiveIdCommands + " ").find(word) != std::string::npos) {
    return kLiveJobIds;
  }
  if ((std::string(" ") + kAnyIdCommands + " ").find(word) != std::string::npos) {
    return kAnyJobIds;
  }
  return nullptr;
}

std::string Bash(const CLI::App& root) {
  std::string subs, cases;
  for (const CLI::App* sub : root.get_subcommands({})) {
    if (sub->get_group().empty()) continue;  // internal commands
    subs += (subs.empty() ? "" : " ") + sub->get_name();
    cases += "    " + sub->get_name() + ") words=\"" + Join(OptionWords(*sub)) +
             SubcommandNames(*sub) + "\" ;;\n";
  }
  return "# gshare completion for bash (also zsh through bashcompinit)\n"
         "_gshare() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} cmd= i words\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    [[ ${COMP_WORDS[i]} == -- ]] && return 0  # the job's command: default completion\n"
         "    case \" " +
         subs +
         " \" in *\" ${COMP_WORDS[i]} \"*) cmd=${COMP_WORDS[i]}; break ;; esac\n"
         "  done\n"
         "  case $cmd in\n"
         "    '') words=\"" +
         subs + " " + Join(OptionWords(root)) + "\" ;;\n" + cases +
         "  esac\n"
         "  local prev=${COMP_WORDS[COMP_CWORD-1]}\n"
         "  if [[ (($prev == -t || $prev == --state) && \" run submit update \" != *\" $cmd \"*) "
         "||\n"
         "        ($cmd == acct && $prev == -s) ]]; then\n"
         "    words=\"" +
         std::string(kStateCodes) +
         "\"\n"
         "  elif [[ $cur != -* && \" " +
         kLiveIdCommands +
         " \" == *\" $cmd \"* ]]; then\n"
         "    words+=\" $(" +
         kLiveJobIds +
         ")\"\n"
         "  elif [[ $cur != -* && \" " +
         kAnyIdCommands +
         " \" == *\" $cmd \"* ]]; then\n"
         "    words+=\" $(" +
         kAnyJobIds +
         ")\"\n"
         "  fi\n"
         "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
         "}\n"
         "complete -o default -F _gshare gshare\n";
}

std::string Fish(const CLI::App& root) {
  std::string out = "# gshare completion for fish\ncomplete -c gshare -f\n";
  auto options = [&out](const CLI::App& app, const std::string& condition) {
    for (const CLI::Option* opt : app.get_options()) {
      if (opt->get_group().empty()) continue;
      std::string line = "complete -c gshare -n '" + condition + "'";
      for (const std::string& s : opt->get_snames()) line += " -s " + s;
      for (const std::string& l : opt->get_lnames()) line += " -l " + l;
      if (opt->get_snames().empty() && opt->get_lnames().empty()) continue;
      out += line + "\n";
    }
  };
  options(root, "__fish_use_subcommand");
  for (const CLI::App* sub : root.get_subcommands({})) {
    if (sub->get_group().empty()) continue;  // internal commands
    std::string help = sub->get_description();
    for (size_t i = 0; (i = help.find('\'', i)) != std::string::npos; i += 2) help.insert(i, "\\");
    out += "complete -c gshare -n '__fish_use_subcommand' -a " + sub->get_name() + " -d '" + help +
           "'\n";
    options(*sub, "__fish_seen_subcommand_from " + sub->get_name());
    if (const char* ids = JobIdsFor(sub->get_name())) {
      out += "complete -c gshare -n '__fish_seen_subcommand_from " + sub->get_name() + "' -a '(" +
             ids + ")'\n";
    }
    if (std::string nested = SubcommandNames(*sub); !nested.empty()) {
      out += "complete -c gshare -n '__fish_seen_subcommand_from " + sub->get_name() + "' -a '" +
             nested.substr(1) + "'\n";
    }
  }
  return out;
}

}  // namespace

void AddCompletionCommand(CLI::App& sub, const GlobalOptions&, Handler* handler) {
  auto shell = std::make_shared<std::string>();
  sub.add_option("shell", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  sub.footer(
      "Examples:\n  source <(gshare completion bash)\n"
      "  gshare completion fish > ~/.config/fish/completions/gshare.fish");
  CLI::App* root = sub.get_parent();
  *handler = [shell, root]() {
    std::string script;
    if (*shell == "fish") {
      script = Fish(*root);
    } else if (*shell == "zsh") {
      script = "autoload -U +X bashcompinit && bashcompinit\n" + Bash(*root);
    } else {
      script = Bash(*root);
    }
    std::fputs(script.c_str(), stdout);
    return 0;
  };
}

}  // namespace gshare
