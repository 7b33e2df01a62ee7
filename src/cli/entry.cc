// gshare's command line: parses it with CLI11 from the command table and turns the chosen
// handler's result into the exit code. Errors reach the user here, as one line on stderr.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include <cstdio>

#include "base/logging.h"
#include "cli/cli.h"
#include "cli/command_word.h"
#include "cli/entry.h"

namespace gshare {
namespace {

// --help leads with the examples (each command's footer), right under its description; the
// list of subcommands keeps their one-line descriptions.
class ExamplesFirst : public CLI::Formatter {
 public:
  std::string make_description(const CLI::App* app) const override {
    std::string text = CLI::Formatter::make_description(app);
    if (!app->get_footer().empty()) text += "\n" + app->get_footer() + "\n\n";
    return text;
  }
  std::string make_footer(const CLI::App*) const override { return ""; }
};

}  // namespace

int Main(int argc, char** argv) {
  GlobalOptions global;
  CLI::App app{"gshare: share NVIDIA GPUs among jobs, queue them, run them"};
  app.formatter(std::make_shared<ExamplesFirst>());  // before the subcommands: they inherit it
  app.set_version_flag("--version", std::string("gshare ") + GSHARE_VERSION);
  app.add_option("--config", global.config_path, "Configuration file (TOML)");
  app.add_flag("-v,--verbose", global.verbose, "Log with times and levels");
  app.require_subcommand(1);
  app.fallthrough();
  app.footer(
      "Examples:\n"
      "  gshare run -- python3 train.py          # share the GPU with other gshare jobs\n"
      "  gshare run -p 10 -- python3 eval.py     # higher priority gets the GPU first\n"
      "  gshare submit -t 2:00:00 -- ./train.sh  # queue it; prints the job id\n"
      "  gshare queue                            # pending and running jobs\n"
      "  gshare status                           # who holds which GPU, who waits");
  // What a mistyped command line meant, said before CLI11 says "A subcommand is required".
  std::vector<std::string> unknown_options;
  const int word_at = CommandWordIndex(argc, argv, &unknown_options);
  const std::string word = word_at >= 0 ? argv[word_at] : "";  // the command word, if any
  if (!unknown_options.empty()) {
    SetupLogging(false);
    const std::string& bad = unknown_options.front();
    auto near =
        NearestWord(bad.substr(0, bad.find('=')), {"--help", "--version", "--config", "--verbose"});
    spdlog::error("unknown option {}{} (gshare --help lists the options and commands)", bad,
                  near ? "; did you mean " + *near + "?" : "");
    return kExitUsage;
  }
  std::vector<std::string> help_argv;  // `gshare help CMD` is `gshare CMD --help`
  if (word == "help") {
    for (int i = 0; i < argc; ++i) {
      if (i != word_at) help_argv.push_back(argv[i]);
    }
    if (word_at + 1 < argc) help_argv.push_back("--help");
  }
  const bool asked = [&] {  // --help or --version before any command word
    for (int i = 1; i < argc && (word_at < 0 || i < word_at); ++i) {
      const std::string a = argv[i];
      if (a == "-h" || a == "--help" || a == "--version") return true;
    }
    return false;
  }();
  // The command the line names (kNumCommands: none, or `help`, which names it next).
  size_t named = kNumCommands;
  if (word_at >= 0 && help_argv.empty()) {
    std::vector<std::string> names;
    for (size_t i = 0; i < kNumCommands; ++i) {
      if (word == kCommands[i].name) named = i;
      if (kCommands[i].help[0] != '\0') names.push_back(kCommands[i].name);
    }
    if (named == kNumCommands) {
      SetupLogging(false);
      auto near = NearestWord(word, names);
      spdlog::error("'{}' is not a gshare command{} (gshare --help lists them)", word,
                    near ? "; did you mean '" + *near + "'?" : "");
      return kExitUsage;
    }
  }
  // CLI11 is given the named command alone, unless nothing is named, --help or --version
  // come first, or the command reads the whole table: building every command's options is
  // most of what a short command costs to start, and tests and scripts start gshare often.
  const bool whole_table = named == kNumCommands || asked || kCommands[named].reads_table;
  std::vector<Handler> handlers(kNumCommands);
  std::vector<CLI::App*> subs(kNumCommands, nullptr);
  for (size_t i = 0; i < kNumCommands; ++i) {
    if (!whole_table && i != named) continue;
    CLI::App* sub = app.add_subcommand(kCommands[i].name, kCommands[i].help);
    if (kCommands[i].help[0] == '\0') sub->group("");  // internal: not in --help
    kCommands[i].add(*sub, global, &handlers[i]);
    subs[i] = sub;
  }
  if ((word_at < 0 && !asked) || (!help_argv.empty() && word_at + 1 >= argc)) {
    std::fputs(app.help().c_str(), stdout);  // a bare `gshare` or `gshare help`
    return 0;
  }
  std::vector<char*> help_args;
  for (std::string& a : help_argv) help_args.push_back(a.data());
  try {
    if (help_args.empty()) {
      app.parse(argc, argv);
    } else {
      app.parse(static_cast<int>(help_args.size()), help_args.data());
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    SetupLogging(false);
    spdlog::error("{}", e.what());
    return word == "run" ? kExitRunFailed : kExitUsage;
  }
  SetupLogging(global.verbose);
  for (size_t i = 0; i < kNumCommands; ++i) {
    if (subs[i] != nullptr && subs[i]->parsed()) return handlers[i]();
  }
  return kExitUsage;
}

}  // namespace gshare
