// `gshare job-supervisor --job ID --socket PATH`: internal; the daemon starts one per
// submitted job (job_supervisor.h). Not shown in --help.
#include "cli.h"
#include "job_supervisor.h"

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

}  // namespace gshare
