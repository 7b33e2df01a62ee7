// The fake NVML: ${build}/fakenvml/libnvidia-ml.so.1, the few calls gshare makes of NVML
// (src/base/gpu_inventory.cc, src/daemon/checkpoint/checkpoint_helper.cc) answered for the fake
// driver's machine. Like real NVML it ignores CUDA_VISIBLE_DEVICES: it lists all FAKE_CUDA_DEVICES
// physical GPUs, by physical index, with the fake driver's UUIDs (physical_gpus.h). Memory:
// total FAKE_CUDA_MEM_BYTES, used the GPU's FAKE_CUDA_DEVICE_FILE counter (0 without the file,
// or while no process has created it). Any thread; C ABI, results are nvmlReturn_t values.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "physical_gpus.h"

namespace gs_cuda::fake {
namespace {

// nvmlReturn_t (nvml.h).
constexpr int kSuccess = 0;
constexpr int kUninitialized = 1;
constexpr int kInvalidArgument = 2;
constexpr int kNotFound = 6;
constexpr int kInsufficientSize = 7;
constexpr int kDriverNotLoaded = 9;
constexpr int kVersionMismatch = 25;
constexpr int kUnknown = 999;

// nvmlMemory_t (nvml.h), bytes.
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// nvmlMemory_v2_t (nvml.h), bytes.
struct MemoryV2 {
  unsigned version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};

// A handle (nvmlDevice_t) points at one of these; constant, so they need no initialization.
struct Device {
  int index;
};
constexpr std::array<Device, kMaxDevices> kDevices = [] {
  std::array<Device, kMaxDevices> a{};
  for (int i = 0; i < kMaxDevices; ++i) a[i].index = i;
  return a;
}();
void* Handle(int index) { return const_cast<Device*>(&kDevices[index]); }

// nvmlInit* calls not yet matched by nvmlShutdown; the settings are read by the first.
std::atomic<int> g_inits{0};
std::atomic<int> g_count{0};
std::atomic<unsigned long long> g_mem_bytes{0};

// The device's handle into *out, or kInvalidArgument / kUninitialized.
int DeviceOf(void* handle, const Device** out) {
  if (g_inits.load() == 0) return kUninitialized;
  auto* d = static_cast<const Device*>(handle);
  if (d < kDevices.data() || d >= kDevices.data() + g_count.load()) return kInvalidArgument;
  *out = d;
  return kSuccess;
}

// Bytes in use on physical GPU index: its FAKE_CUDA_DEVICE_FILE counter (device_usage.h: a
// little-endian uint64 at offset 8*index), 0 without a file. False when the file exists but
// cannot be read.
bool UsedBytes(int index, unsigned long long* used) {
  *used = 0;
  const char* path = std::getenv("FAKE_CUDA_DEVICE_FILE");
  if (path == nullptr || path[0] == '\0') return true;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  uint64_t v = 0;
  ssize_t n = pread(fd, &v, sizeof v, static_cast<off_t>(8 * index));
  close(fd);
  if (n != 0 && n != static_cast<ssize_t>(sizeof v)) return false;
  *used = v;  // n == 0: a file not grown yet holds nothing
  return true;
}

const char* ErrorText(int code) {
  switch (code) {
    case kSuccess: return "Success";
    case kUninitialized: return "Uninitialized";
    case kInvalidArgument: return "Invalid Argument";
    case kNotFound: return "Not Found";
    case kInsufficientSize: return "Insufficient Size";
    case kDriverNotLoaded: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}

}  // namespace
}  // namespace gs_cuda::fake

namespace fake = gs_cuda::fake;

// The exports: built with hidden visibility, so the calls below are made visible here and the
// version script keeps only nvml* names.
#pragma GCC visibility push(default)
extern "C" {

// NVML_ERROR_DRIVER_NOT_LOADED when the machine has no GPU (FAKE_CUDA_DEVICES=0), as on a
// host without the driver; then nothing is initialized.
int nvmlInit_v2() noexcept {
  int count = fake::PhysicalGpuCount();
  if (count == 0) return fake::kDriverNotLoaded;
  fake::g_count.store(count);
  fake::g_mem_bytes.store(fake::EnvNumber("FAKE_CUDA_MEM_BYTES", 16ull << 30));
  fake::g_inits.fetch_add(1);
  return fake::kSuccess;
}

int nvmlInit() noexcept { return nvmlInit_v2(); }

// The CUDA version the fake driver supports: FAKE_NVML_CUDA_VERSION (default 13000, 13.0).
int nvmlSystemGetCudaDriverVersion_v2(int* version) noexcept {
  if (version == nullptr) return fake::kInvalidArgument;
  *version = static_cast<int>(fake::EnvNumber("FAKE_NVML_CUDA_VERSION", 13000));
  return fake::kSuccess;
}

int nvmlShutdown() noexcept {
  int n = fake::g_inits.load();
  do {
    if (n == 0) return fake::kUninitialized;
  } while (!fake::g_inits.compare_exchange_weak(n, n - 1));
  return fake::kSuccess;
}

const char* nvmlErrorString(int result) noexcept { return fake::ErrorText(result); }

int nvmlDeviceGetCount_v2(unsigned* count) noexcept {
  if (fake::g_inits.load() == 0) return fake::kUninitialized;
  if (count == nullptr) return fake::kInvalidArgument;
  *count = static_cast<unsigned>(fake::g_count.load());
  return fake::kSuccess;
}

int nvmlDeviceGetCount(unsigned* count) noexcept { return nvmlDeviceGetCount_v2(count); }

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) noexcept {
  if (fake::g_inits.load() == 0) return fake::kUninitialized;
  if (device == nullptr || index >= static_cast<unsigned>(fake::g_count.load())) {
    return fake::kInvalidArgument;
  }
  *device = fake::Handle(static_cast<int>(index));
  return fake::kSuccess;
}

// uuid: "GPU-" and 36 hex digits and dashes, either case; NVML_ERROR_NOT_FOUND otherwise.
int nvmlDeviceGetHandleByUUID(const char* uuid, void** device) noexcept {
  if (fake::g_inits.load() == 0) return fake::kUninitialized;
  if (uuid == nullptr || device == nullptr) return fake::kInvalidArgument;
  int index = fake::PhysicalGpuOfUuidText(uuid, std::strlen(uuid), fake::g_count.load());
  if (index < 0) return fake::kNotFound;
  *device = fake::Handle(static_cast<int>(index));
  return fake::kSuccess;
}

// NVML_ERROR_INSUFFICIENT_SIZE when length < 41 (the text and its NUL).
int nvmlDeviceGetUUID(void* device, char* uuid, unsigned length) noexcept {
  const fake::Device* d;
  if (int r = fake::DeviceOf(device, &d)) return r;
  if (uuid == nullptr) return fake::kInvalidArgument;
  if (length < fake::kUuidTextBytes) return fake::kInsufficientSize;
  unsigned char bytes[fake::kUuidBytes];
  fake::PhysicalGpuUuid(d->index, bytes);
  fake::FormatGpuUuid(bytes, uuid);
  return fake::kSuccess;
}

int nvmlDeviceGetIndex(void* device, unsigned* index) noexcept {
  const fake::Device* d;
  if (int r = fake::DeviceOf(device, &d)) return r;
  if (index == nullptr) return fake::kInvalidArgument;
  *index = static_cast<unsigned>(d->index);
  return fake::kSuccess;
}

// NVML_ERROR_UNKNOWN when FAKE_CUDA_DEVICE_FILE exists but cannot be read.
int nvmlDeviceGetMemoryInfo(void* device, fake::Memory* memory) noexcept {
  const fake::Device* d;
  if (int r = fake::DeviceOf(device, &d)) return r;
  if (memory == nullptr) return fake::kInvalidArgument;
  unsigned long long used;
  if (!fake::UsedBytes(d->index, &used)) return fake::kUnknown;
  memory->total = fake::g_mem_bytes.load();
  memory->used = used;
  memory->free = used < memory->total ? memory->total - used : 0;
  return fake::kSuccess;
}

int nvmlDeviceGetHandleByIndex(unsigned index, void** device) noexcept {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

// nvmlMemory_v2_t: as nvmlDeviceGetMemoryInfo with nothing reserved.
// NVML_ERROR_ARGUMENT_VERSION_MISMATCH (25) unless memory->version is nvmlMemory_v2 (its size | 2
// << 24).
int nvmlDeviceGetMemoryInfo_v2(void* device, fake::MemoryV2* memory) noexcept {
  if (memory == nullptr) return fake::kInvalidArgument;
  if (memory->version != (sizeof(fake::MemoryV2) | 2u << 24)) return fake::kVersionMismatch;
  fake::Memory m;
  if (int r = nvmlDeviceGetMemoryInfo(device, &m)) return r;
  memory->total = m.total;
  memory->reserved = 0;
  memory->free = m.free;
  memory->used = m.used;
  return fake::kSuccess;
}

// Live readings of a fake GPU for views (`gshare top`): FAKE_NVML_UTIL percent (default 0),
// 40 °C, 100 W.
int nvmlDeviceGetUtilizationRates(void* device, unsigned* rates) noexcept {  // nvmlUtilization_t
  const fake::Device* d;
  if (int r = fake::DeviceOf(device, &d)) return r;
  if (rates == nullptr) return fake::kInvalidArgument;
  rates[0] = static_cast<unsigned>(fake::EnvNumber("FAKE_NVML_UTIL", 0));  // gpu
  rates[1] = 0;                                                            // memory
  return fake::kSuccess;
}

int nvmlDeviceGetTemperature(void* device, unsigned sensor, unsigned* celsius) noexcept {
  const fake::Device* d;
  if (int r = fake::DeviceOf(device, &d)) return r;
  if (sensor != 0 || celsius == nullptr) return fake::kInvalidArgument;
  *celsius = 40;
  return fake::kSuccess;
}

int nvmlDeviceGetPowerUsage(void* device, unsigned* milliwatts) noexcept {
  const fake::Device* d;
  if (int r = fake::DeviceOf(device, &d)) return r;
  if (milliwatts == nullptr) return fake::kInvalidArgument;
  *milliwatts = 100000;
  return fake::kSuccess;
}

// "Fake GPU"; NVML_ERROR_INSUFFICIENT_SIZE when length < 9.
int nvmlDeviceGetName(void* device, char* name, unsigned length) noexcept {
  static const char kName[] = "Fake GPU";
  const fake::Device* d;
  if (int r = fake::DeviceOf(device, &d)) return r;
  if (name == nullptr) return fake::kInvalidArgument;
  if (length < sizeof kName) return fake::kInsufficientSize;
  std::memcpy(name, kName, sizeof kName);
  return fake::kSuccess;
}

}  // extern "C"
#pragma GCC visibility pop
