// The daemon's internal helpers, not shown in --help:
//   `gshare job-supervisor --job ID --socket PATH`: one per submitted job (job_supervisor.h);
//   `gshare checkpoint-helper --fd N`: runs the driver's checkpoint calls (checkpoint_helper.h).
#include "daemon/checkpoint_helper.h"
#include "cli/cli.h"
#include "runner/job_supervisor.h"

namespace gshare {
namespace {

struct SuperviseOptions {
  int64_t job = 0;
  std::string socket;
};

}  // namespace

void AddSuperviseCommand(CLI::App& sub, const GlobalOptions&, Handler* handler) {
  auto opt = std::make_shared<SuperviseOptions>();
  sub.add_option("--job", opt->job, "Job id")->required();
  sub.add_option("--socket", opt->socket, "Daemon socket")->required();
  *handler = [opt]() { return RunSupervisor(opt->job, opt->socket); };
}

void AddCheckpointHelperCommand(CLI::App& sub, const GlobalOptions&, Handler* handler) {
  auto fd = std::make_shared<int>(-1);
  sub.add_option("--fd", *fd, "Socket to the daemon")->required();
  *handler = [fd]() { return RunCheckpointHelper(*fd); };
}

}  // namespace gshare
