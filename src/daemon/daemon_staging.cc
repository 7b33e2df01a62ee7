// Idle memory staging (docs/memory.md, "Idle memory is staged"): the IdleStager plans; the
// daemon sends its requests to the shims (kSwapStage).
#include <spdlog/spdlog.h>

#include "daemon/daemon.h"

namespace gshare {

void Daemon::SendStage(ConnId conn, const GpuKey& gpu, uint64_t bytes) {
  const Connection* c = table_.Live(conn);
  if (c == nullptr) return;
  spdlog::info("{}: idle on {}; staging {} bytes of pid {} in host memory", JobName(c->job), gpu,
               bytes, c->pid);
  SendLeaseMsg(conn, proto::MsgType::kSwapStage, gpu, 0, bytes);
}

}  // namespace gshare
