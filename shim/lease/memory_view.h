// The daemon's view of a GPU's memory for this process's job (kMemoryQuery / kMemoryView,
// gshare/protocol.h): what other jobs hold there that cannot move, and what the job uses, so
// that NVML's answers inside a job read as if the job were alone (hooks/nvml_view.h).
#pragma once

#include "gshare/protocol.h"

namespace gshare::shim {

// Asks the daemon about physical GPU `gpu` (NVML's UUID) on a connection of its own, opened
// and closed here; the lease connection and its thread are not involved, so a process that
// never touched CUDA (nvidia-smi run inside a job) can ask. False when the process is not in
// a gshare job (no GSHARE_JOB_ID), no trusted daemon answers within kAnswerMs, or the daemon
// does not know the job (MemViewMsg::known == 0). Blocks for at most about 2 * kAnswerMs.
// Any thread; not for signal handlers.
bool QueryJobMemory(const proto::GpuUuid& gpu, proto::MemViewMsg* out);

// Sends one `query` frame (q_len bytes of `q`) to the daemon the lease client would use, on a
// connection of its own, and reads one `answer` frame of exactly `out_len` payload bytes into
// `out`; closes. False when no trusted daemon answers so within kAnswerMs per step (the
// payload is then not to be read). Any thread; not for signal handlers.
bool AskDaemonOnce(proto::MsgType query, const void* q, uint32_t q_len, proto::MsgType answer,
                   void* out, uint32_t out_len);

// How long the daemon has to answer (ms). It answers at once from its event loop; a daemon
// that is slower is taken for hung, as the lease client does (GSHARE_DAEMON_TIMEOUT_MS), and
// the caller gives the unvirtualized answer.
inline constexpr int kAnswerMs = 1000;

}  // namespace gshare::shim
