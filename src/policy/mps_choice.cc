#include "policy/mps_choice.h"

namespace gshare {

BatchCap ResolveBatchCap(BatchCap configured, std::optional<int> cuda_driver_version) {
  if (configured != BatchCap::kAuto) return configured;
  if (cuda_driver_version && *cuda_driver_version < kGreenContextsCudaVersion) {
    return BatchCap::kBesideService;
  }
  return BatchCap::kNever;
}

MpsChoice ChooseMps(const MpsJob& job, const MpsGpu& gpu, const MpsSettings& settings) {
  MpsChoice c;
  // The job's own reasons first: a job of several GPUs has no one GPU whose server to ask.
  if (job.isolation) {
    c.why_not = "it asks for isolation (GSHARE_MPS=0)";
  } else if (job.kind == JobKind::kSlurm) {
    c.why_not = "a Slurm step";
  } else if (job.gpus != 1) {
    c.why_not = "it uses several GPUs";
  } else if (job.memory == MemoryEngine::kCheckpoint || job.memory == MemoryEngine::kManaged) {
    c.why_not = "its memory engine (" + std::string(MemoryEngineName(*job.memory)) +
                ") does not run under MPS";
  } else if (!gpu.server_up) {
    c.why_not = "no MPS control daemon on its GPU";
  } else if (gpu.client_uid && *gpu.client_uid != job.uid) {
    c.why_not = "the GPU's MPS server serves another user's jobs";
  } else {
    c.client = true;
    if (job.priority <= settings.batch_max_priority) {
      c.client_priority = 1;
      if (settings.cap == BatchCap::kAlways ||
          (settings.cap == BatchCap::kBesideService && gpu.above_batch_client)) {
        c.active_thread_percentage = settings.batch_thread_percentage;
      }
    }
  }
  return c;
}

std::string ChooseAtArrival(const MpsArrival& arrival, int join_free_percentage) {
  if (join_free_percentage <= 0 || arrival.capacity_bytes == 0) return "";
  if (!arrival.top_priority || *arrival.top_priority <= arrival.priority) return "";
  // free < capacity * pct / 100, in integers: free * 100 < capacity * pct.
  const unsigned __int128 free = arrival.free_bytes;
  const unsigned __int128 floor = static_cast<unsigned __int128>(arrival.capacity_bytes) *
                                  static_cast<unsigned>(join_free_percentage);
  if (free * 100 >= floor) return "";
  return "a client of priority " + std::to_string(*arrival.top_priority) + " left " +
         std::to_string(arrival.free_bytes >> 20) +
         " MiB of its GPU free at its first CUDA call (below " +
         std::to_string(join_free_percentage) + " %: [mps] join_free_percentage)";
}

}  // namespace gshare
