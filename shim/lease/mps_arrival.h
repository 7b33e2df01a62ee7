// A client's arrival at gshare's MPS server (kMpsJoinQuery / kMpsJoin, gshare/protocol.h): the
// daemon chose MPS when it launched the job, but the driver reads the MPS variables at the
// process's first cuInit, seconds later; there the daemon is asked again, with the GPU's memory
// as it is then (policy/mps_choice.h, ChooseAtArrival).
#pragma once

namespace gshare::shim {

// Called by the cuInit hook before the driver's cuInit, on every call. The first call of a
// process that gshare launched as a client of its MPS server (GSHARE_MPS_CLIENT=1 with
// CUDA_MPS_PIPE_DIRECTORY set) asks the daemon, on a connection of its own, whether it still
// joins; while the daemon answers "not yet" (kMpsJoinWait: a higher client left too little free,
// [mps] join_wait_seconds not passed) the caller sleeps kMpsJoinRetryMs and asks again, with no
// context made, having said why once on stderr (not under GSHARE_QUIET), until a signal it
// catches ends the wait (the daemon then decides at once); when not, the MPS
// variables (CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY, CUDA_MPS_CLIENT_PRIORITY,
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, GSHARE_MPS_CLIENT) leave the process's environment before the
// driver reads them: the process, and the processes it starts from then on, run outside MPS, and
// ConcurrentLanes() is false. No answer (no daemon, an unknown job, kAnswerMs passed): it joins, as
// launched. The environment is changed while no other thread of the process is expected in the
// driver (its first cuInit); unsetenv is not safe against a getenv of another thread at that
// instant. Blocks the first caller for the daemon's wait plus at most about 2 * kAnswerMs per
// question (memory_view.h); callers meanwhile wait for it; later calls cost one atomic load. Any
// thread; not for signal handlers.
void BeforeCuInit();

// Whether BeforeCuInit took this process out of MPS. Any thread; lock-free.
bool LeftMps();

// Whether the environment names this process a client of gshare's MPS server now
// (GSHARE_MPS_CLIENT=1 with CUDA_MPS_PIPE_DIRECTORY set: include/gshare/job_env.h): as gshare
// launched it, until BeforeCuInit takes it out. Reads the environment; any thread.
bool LaunchedAsMpsClient();

}  // namespace gshare::shim
