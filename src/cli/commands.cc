// The command table: one row per subcommand (name, help, the function that adds it to CLI11),
// so that every subcommand is declared in one place.
#include "cli/cli.h"

namespace gshare {

void AddRunCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddStatusCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddSchedulerCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddDaemonCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddCompletionCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddSubmitCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddQueueCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddAcctCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddCancelCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddHoldCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddReleaseCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddSetPriorityCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddRequeueCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddLogsCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddWaitCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddCleanCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddSuperviseCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddCheckpointHelperCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddMpsLingerCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddSuspendCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddResumeCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddKernelCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddTopCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddMetricsCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddUpdateCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddManCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddTimelineCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddSlurmCommand(CLI::App&, const GlobalOptions&, Handler*);
void AddParallelCommand(CLI::App&, const GlobalOptions&, Handler*);

const CommandSpec kCommands[] = {
    {"run", "Run a command in the foreground as a job sharing the GPU", AddRunCommand},
    {"submit", "Queue a job (prints its id); safe from cron", AddSubmitCommand},
    {"queue", "List pending and running jobs (-a: all)", AddQueueCommand},
    {"parallel", "Set how many jobs run at once per GPU slot (pueue parallel)", AddParallelCommand},
    {"acct", "History: every run of the jobs of a time window (sacct)", AddAcctCommand},
    {"timeline", "Lease holds, drops, swaps and checkpoints per GPU and job: a trace or SVG",
     AddTimelineCommand},
    {"status", "Show GPUs, lease holders and jobs, or one job", AddStatusCommand},
    {"top", "A live view of the GPUs and jobs, with keys to steer them", AddTopCommand},
    {"metrics", "Print Prometheus metrics of the GPUs and jobs (text format)", AddMetricsCommand},
    {"cancel", "Cancel jobs (or send them a signal)", AddCancelCommand},
    {"hold", "Keep pending jobs from starting", AddHoldCommand},
    {"release", "Let held jobs start", AddReleaseCommand},
    {"set-priority", "Change a job's priority", AddSetPriorityCommand},
    {"update", "Change a pending job's name, time limit, dependencies, start time, priority",
     AddUpdateCommand},
    {"suspend", "Suspend running jobs: their GPU memory goes to host memory", AddSuspendCommand},
    {"resume", "Resume suspended jobs", AddResumeCommand},
    {"logs", "Print (-f: follow) a job's output", AddLogsCommand},
    {"wait", "Wait for jobs to end; exit with their status", AddWaitCommand},
    {"requeue", "Put ended or running submitted jobs back in the queue", AddRequeueCommand},
    {"clean", "Delete ended jobs and their logs", AddCleanCommand},
    {"scheduler", "Switch lease gating on or off at run time", AddSchedulerCommand},
    {"daemon", "Start, stop or run the arbiter daemon; install a systemd user unit",
     AddDaemonCommand},
    {"kernel", "Install, list or remove Jupyter kernels that run as gshare jobs", AddKernelCommand},
    {"slurm", "Slurm's hooks: TaskProlog, Prolog and Epilog of the jobs on this node",
     AddSlurmCommand},
    {"completion", "Print a shell completion script (bash, zsh, fish)", AddCompletionCommand, true},
    {"man", "Print the gshare(1) manual page (roff)", AddManCommand, true},
    {"job-supervisor", "", AddSuperviseCommand},            // internal: started by the daemon
    {"checkpoint-helper", "", AddCheckpointHelperCommand},  // internal: started by the daemon
    {"mps-linger", "", AddMpsLingerCommand},                // internal: started by the daemon
};
const size_t kNumCommands = sizeof(kCommands) / sizeof(kCommands[0]);

}  // namespace gshare
