// Graphs of the fake: the ops a stream recorded during capture, and executable instances of
// them that cuGraphLaunch runs as one op. A graph is filled by the one stream capturing into it;
// instances are immutable, so any thread may launch them.
#pragma once

#include <memory>
#include <vector>

#include "stream.h"

namespace gs_cuda::fake {

struct Graph {
  std::vector<Op> ops;  // appended under the capturing stream's mutex
};

struct GraphExec {
  std::shared_ptr<const std::vector<Op>> ops;
};

// The op that launches exec: logged once as kind G under name, it runs the recorded ops in
// order, so it lasts as long as the recorded kernels together.
Op MakeGraphLaunchOp(const GraphExec* exec, const char* name);

}  // namespace gs_cuda::fake
