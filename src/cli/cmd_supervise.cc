// The daemon's internal helpers, not shown in --help:
//   `gshare job-supervisor --job ID --socket PATH`: one per submitted job (job_supervisor.h);
//   `gshare checkpoint-helper --fd N`: runs the driver's checkpoint calls (checkpoint_helper.h);
//   `gshare mps-linger ...`: quits an MPS control daemon after its jobs (mps_servers.h).
#include "daemon/checkpoint/checkpoint_helper.h"
#include "daemon/gpu/mps_servers.h"
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

void AddMpsLingerCommand(CLI::App& sub, const GlobalOptions&, Handler* handler) {
  auto opt = std::make_shared<MpsLingerOptions>();
  auto runners = std::make_shared<std::vector<pid_t>>();
  sub.add_option("--control", opt->control, "The MPS control program")->required();
  sub.add_option("--pipe", opt->pipe, "The control daemon's pipe folder")->required();
  sub.add_option("--log", opt->log, "Its log folder")->required();
  sub.add_option("--gpu", opt->gpu, "Its GPU (CUDA_VISIBLE_DEVICES)")->required();
  sub.add_option("--lock", opt->lock_path, "The daemon's lock file")->required();
  sub.add_option("--runners", *runners, "The client jobs' runner pids")->delimiter(',')->required();
  *handler = [opt, runners]() {
    opt->runners = *runners;
    return RunMpsLinger(*opt);
  };
}

}  // namespace gshare
