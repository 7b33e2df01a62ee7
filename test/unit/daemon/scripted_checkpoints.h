// A CheckpointService for the daemon's unit tests: requests are recorded and answered only
// when the test says so (`done`), in order; `refuse` makes it refuse them as a helper that
// cannot run does.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/checkpoint/checkpoint_helper.h"

namespace gshare::unit_scripted_checkpoints {

struct ScriptedService final : CheckpointService {
  struct Request {
    CheckpointOp op;
    pid_t pid;
    uint64_t need_bytes;
    std::string gpu;
    std::string from_gpu;
  };
  std::vector<Request> requests;
  uint64_t done = 0;
  bool refuse = false;
  std::string reason = "no driver";

  uint64_t Submit(CheckpointOp op, pid_t pid, uint32_t, uint64_t need_bytes, const std::string& gpu,
                  const std::string& from_gpu) override {
    if (refuse) return 0;
    requests.push_back({op, pid, need_bytes, gpu, from_gpu});
    return requests.size();
  }
  uint64_t last_sent() const override { return requests.size(); }
  uint64_t last_done() const override { return done; }
  const std::string& unavailable_reason() const override { return reason; }
};

}  // namespace gshare::unit_scripted_checkpoints
