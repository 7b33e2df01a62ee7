// gshare's entry point: parses the command line with CLI11 from the command table and
// turns the chosen handler's result into the exit code. Errors reach the user here, as
// one line on stderr.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "base/logging.h"

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

int main(int argc, char** argv) {
  using namespace gshare;
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
  std::vector<Handler> handlers(kNumCommands);
  std::vector<CLI::App*> subs;
  for (size_t i = 0; i < kNumCommands; ++i) {
    CLI::App* sub = app.add_subcommand(kCommands[i].name, kCommands[i].help);
    if (kCommands[i].help[0] == '\0') sub->group("");  // internal: not in --help
    kCommands[i].add(*sub, global, &handlers[i]);
    subs.push_back(sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Which command was meant: the first word that is not an option (or --config's value).
    bool run = false;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--config") {
        ++i;
      } else if (a.empty() || a[0] != '-') {
        run = (a == "run");
        break;
      }
    }
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    SetupLogging(false);
    spdlog::error("{}", e.what());
    return run ? kExitRunFailed : kExitUsage;
  }
  SetupLogging(global.verbose);
  for (size_t i = 0; i < kNumCommands; ++i) {
    if (subs[i]->parsed()) return handlers[i]();
  }
  return kExitUsage;
}
