// Stream capture and graphs: the CAPTURE_* rows of shim/driver/hooks.def, cuStreamIsCapturing, and
// the graph calls a capturing job makes (create, instantiate, destroy). cuGraphLaunch itself is a
// GATE row (gate_exports.cc) that runs MakeGraphLaunchOp below.
#include <cstring>
#include <memory>

#include "driver.h"
#include "fake_cuda_api.h"
#include "graph.h"

namespace gs_cuda::fake {

Op MakeGraphLaunchOp(const GraphExec* exec, const char* name) {
  Op op;
  op.kind = 'G';
  op.name = name;
  // Holds the ops by shared_ptr: the exec may be destroyed while the launch is still queued.
  op.body = [ops = exec->ops] {
    for (const Op& recorded : *ops) RunOp(recorded);
  };
  return op;
}

namespace {

// Starts capturing the stream into graph, or into a new graph when graph is null.
CUresult BeginCapture(CUstream handle, bool per_thread, CUgraph graph) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  Stream* s;
  if (CUresult r = ResolveStream(handle, per_thread, &s)) return r;
  // As in CUDA, the legacy stream synchronizes with everything and cannot be captured.
  if (s == s->context()->legacy_stream()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  Graph* g;
  if (graph != nullptr) {
    if (!IsHandle(graph, HandleKind::kGraph)) return CUDA_ERROR_INVALID_HANDLE;
    g = reinterpret_cast<Graph*>(graph);
  } else {
    g = new Graph;
  }
  if (!s->BeginCapture(g)) {
    if (graph == nullptr) delete g;
    return CUDA_ERROR_ILLEGAL_STATE;
  }
  if (graph == nullptr) AddHandle(g, HandleKind::kGraph);
  return CUDA_SUCCESS;
}

CUresult EndCapture(CUstream handle, bool per_thread, CUgraph* out) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  Stream* s;
  if (CUresult r = ResolveStream(handle, per_thread, &s)) return r;
  Graph* g = s->EndCapture();
  if (g == nullptr) return CUDA_ERROR_ILLEGAL_STATE;
  *out = reinterpret_cast<CUgraph>(g);
  return CUDA_SUCCESS;
}

CUresult IsCapturing(CUstream handle, bool per_thread, CUstreamCaptureStatus* status) {
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  Stream* s;
  if (CUresult r = ResolveStream(handle, per_thread, &s)) return r;
  *status = s->capturing() ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult Instantiate(CUgraphExec* out, CUgraph graph) {
  if (CUresult r = CheckInit()) return r;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!IsHandle(graph, HandleKind::kGraph)) return CUDA_ERROR_INVALID_HANDLE;
  GraphExec* exec = new GraphExec;
  exec->ops = std::make_shared<const std::vector<Op>>(reinterpret_cast<Graph*>(graph)->ops);
  AddHandle(exec, HandleKind::kGraphExec);
  *out = reinterpret_cast<CUgraphExec>(exec);
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace gs_cuda::fake

namespace gs_cuda {
extern "C" {

CUresult cuStreamBeginCapture(CUstream hStream) noexcept {
  return fake::BeginCapture(hStream, false, nullptr);
}
CUresult cuStreamBeginCapture_ptsz(CUstream hStream) noexcept {
  return fake::BeginCapture(hStream, true, nullptr);
}
CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode) noexcept {
  return fake::BeginCapture(hStream, false, nullptr);
}
CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode) noexcept {
  return fake::BeginCapture(hStream, true, nullptr);
}
CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode*,
                                     const CUgraphEdgeData*, size_t, CUstreamCaptureMode) noexcept {
  if (hGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return fake::BeginCapture(hStream, false, hGraph);
}
CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph, const CUgraphNode*,
                                          const CUgraphEdgeData*, size_t,
                                          CUstreamCaptureMode) noexcept {
  if (hGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return fake::BeginCapture(hStream, true, hGraph);
}
CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) noexcept {
  return fake::EndCapture(hStream, false, phGraph);
}
CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph* phGraph) noexcept {
  return fake::EndCapture(hStream, true, phGraph);
}
CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) noexcept {
  return fake::IsCapturing(hStream, false, captureStatus);
}
CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus) noexcept {
  return fake::IsCapturing(hStream, true, captureStatus);
}

CUresult cuGraphCreate(CUgraph* phGraph, unsigned int) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (phGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fake::Graph* g = new fake::Graph;
  fake::AddHandle(g, fake::HandleKind::kGraph);
  *phGraph = reinterpret_cast<CUgraph>(g);
  return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph,
                                     unsigned long long) noexcept {
  return fake::Instantiate(phGraphExec, hGraph);
}

// The pre-12.0 exports keep their old signature (error node and log buffer); cuda.h 12+ maps
// the name cuGraphInstantiate to cuGraphInstantiateWithFlags, and so does cuGetProcAddress.
CUresult cuGraphInstantiate(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                            char* logBuffer, size_t bufferSize) noexcept {
  if (phErrorNode != nullptr) *phErrorNode = nullptr;
  if (logBuffer != nullptr && bufferSize > 0) logBuffer[0] = '\0';
  return fake::Instantiate(phGraphExec, hGraph);
}
CUresult cuGraphInstantiate_v2(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                               char* logBuffer, size_t bufferSize) noexcept {
  if (phErrorNode != nullptr) *phErrorNode = nullptr;
  if (logBuffer != nullptr && bufferSize > 0) logBuffer[0] = '\0';
  return fake::Instantiate(phGraphExec, hGraph);
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (!fake::IsHandle(hGraphExec, fake::HandleKind::kGraphExec)) return CUDA_ERROR_INVALID_HANDLE;
  fake::DropHandle(hGraphExec);
  delete reinterpret_cast<fake::GraphExec*>(hGraphExec);
  return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph hGraph) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (!fake::IsHandle(hGraph, fake::HandleKind::kGraph)) return CUDA_ERROR_INVALID_HANDLE;
  fake::DropHandle(hGraph);
  delete reinterpret_cast<fake::Graph*>(hGraph);
  return CUDA_SUCCESS;
}

}  // extern "C"
}  // namespace gs_cuda
