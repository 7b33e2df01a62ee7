// The command table: one row per subcommand (STYLE.md §5).
#include "cli.h"

namespace gshare {

void AddRunCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddStatusCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddSchedulerCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddDaemonCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddCompletionCommand(CLI::App&, const GlobalOptions&, Handler*);

const CommandSpec kCommands[] = {
    {"run", "Run a command in the foreground as a job sharing the GPU", AddRunCommand},
    {"status", "Show GPUs, lease holders and jobs", AddStatusCommand},
    {"scheduler", "Switch lease gating on or off at run time", AddSchedulerCommand},
    {"daemon", "Start, stop or run the arbiter daemon; install a systemd user unit",
     AddDaemonCommand},
    {"completion", "Print a shell completion script (bash, zsh, fish)", AddCompletionCommand},
};
const size_t kNumCommands = sizeof(kCommands) / sizeof(kCommands[0]);

}  // namespace gshare
