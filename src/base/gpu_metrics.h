// What NVML tells about each GPU of the machine for live views (`gshare top`): utilization,
// memory, temperature and power. NVML is loaded with dlopen("libnvidia-ml.so.1") on first use
// and stays initialized for the process; without it (no driver, CI without the fake NVML)
// Sample() returns nothing. A value NVML does not give (a call missing or failing) is -1.
// Source: NVML API reference, nvmlDeviceGetUtilizationRates (percent of the last sample period,
// 1/6 s to 1 s by product), nvmlDeviceGetTemperature (NVML_TEMPERATURE_GPU, °C),
// nvmlDeviceGetPowerUsage (milliwatts), nvmlDeviceGetMemoryInfo (bytes).
// Main thread only (the views that use it have one).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gshare {

struct GpuSample {
  int index = 0;     // NVML's (nvidia-smi's) index
  std::string uuid;  // "GPU-..."
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int util_percent = -1;
  int64_t memory_total = -1;  // bytes
  int64_t memory_used = -1;   // bytes, every process on the GPU
  int temperature_c = -1;
  int power_mw = -1;
};

// One sample of every GPU NVML lists, in index order; empty without NVML. Each call asks NVML
// anew (about 5 calls per GPU).
std::vector<GpuSample> SampleGpus();

}  // namespace gshare
