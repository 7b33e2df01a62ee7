// GPU counting and --gpu checks. NVML is optional: gshare runs (and is tested) on machines
// without a driver, so it is loaded with dlopen and only narrows what a UUID may be.
#include "base/gpu_inventory.h"

#include "base/ascii.h"

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace gshare {

int CountGpus(int configured) {
  if (configured > 0) return configured;
  int count = 0;
  if (DIR* dir = opendir("/dev")) {
    while (dirent* e = readdir(dir)) {
      const char* name = e->d_name;
      if (std::strncmp(name, "nvidia", 6) != 0 || name[6] == '\0') continue;
      bool digits = true;
      for (const char* p = name + 6; *p != '\0'; ++p) digits = digits && *p >= '0' && *p <= '9';
      if (digits) ++count;
    }
    closedir(dir);
  }
  return count > 0 ? count : 1;
}

namespace {

// The few NVML entry points used, with their C signatures (nvml.h is not needed to build).
using NvmlInit = int (*)();
using NvmlGetCount = int (*)(unsigned*);
using NvmlGetHandle = int (*)(unsigned, void**);
using NvmlGetUuid = int (*)(void*, char*, unsigned);
using NvmlGetCudaVersion = int (*)(int*);
constexpr unsigned kNvmlUuidBuffer = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

// What the daemon reads of NVML, once per process.
struct NvmlFacts {
  std::optional<std::vector<std::string>> uuids;
  std::optional<int> cuda_driver_version;
};

NvmlFacts LoadNvmlFacts() {
  NvmlFacts facts;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return facts;
  auto init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
  auto count = reinterpret_cast<NvmlGetCount>(dlsym(lib, "nvmlDeviceGetCount_v2"));
  auto handle = reinterpret_cast<NvmlGetHandle>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto uuid = reinterpret_cast<NvmlGetUuid>(dlsym(lib, "nvmlDeviceGetUUID"));
  auto shutdown = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlShutdown"));
  auto cuda = reinterpret_cast<NvmlGetCudaVersion>(dlsym(lib, "nvmlSystemGetCudaDriverVersion_v2"));
  unsigned n = 0;
  if (init == nullptr || count == nullptr || handle == nullptr || uuid == nullptr || init() != 0) {
    return facts;  // the library stays loaded: unloading NVML is not worth the risk
  }
  if (int version = 0; cuda != nullptr && cuda(&version) == 0 && version > 0) {
    facts.cuda_driver_version = version;
  }
  std::optional<std::vector<std::string>>& out = facts.uuids;
  if (count(&n) == 0) {
    out.emplace();
    for (unsigned i = 0; i < n; ++i) {
      void* dev = nullptr;
      char buf[kNvmlUuidBuffer] = {};
      if (handle(i, &dev) != 0 || uuid(dev, buf, sizeof buf) != 0) {
        out.reset();  // a partial list would refuse a GPU that exists
        break;
      }
      out->emplace_back(buf);
    }
  }
  if (shutdown != nullptr) shutdown();
  return facts;
}

const NvmlFacts& LoadedNvmlFacts() {
  static const NvmlFacts facts = LoadNvmlFacts();
  return facts;
}

bool SameUuid(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

const std::optional<std::vector<std::string>>& NvmlGpuUuids() { return LoadedNvmlFacts().uuids; }

std::optional<int> NvmlCudaDriverVersion() { return LoadedNvmlFacts().cuda_driver_version; }

bool IsGpuUuidForm(const std::string& spec) {
  static const int kGroups[] = {8, 4, 4, 4, 12};
  if (spec.rfind("GPU-", 0) != 0) return false;
  size_t pos = 4;
  for (size_t g = 0; g < 5; ++g) {
    for (int i = 0; i < kGroups[g]; ++i, ++pos) {
      if (pos >= spec.size() || !std::isxdigit(static_cast<unsigned char>(spec[pos]))) {
        return false;
      }
    }
    if (g < 4) {
      if (pos >= spec.size() || spec[pos] != '-') return false;
      ++pos;
    }
  }
  return pos == spec.size();
}

Status CheckGpuSpecAgainst(const std::string& spec, int gpu_count,
                           const std::optional<std::vector<std::string>>& uuids) {
  if (spec.empty()) return Status::Ok();
  const std::string quoted = "--gpu \"" + spec + "\": ";
  if (std::all_of(spec.begin(), spec.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (spec.size() > 1 && spec[0] == '0') {
      return Status::Error(quoted + "write the index without leading zeros");
    }
    if (gpu_count <= 0) {
      return spec.size() <= 9 ? Status::Ok() : Status::Error(quoted + "no such GPU");
    }
    if (spec.size() > 9 || std::stoi(spec) >= gpu_count) {
      return Status::Error(quoted + "no such GPU (GPUs here: 0.." + std::to_string(gpu_count - 1) +
                           ")");
    }
    return Status::Ok();
  }
  if (!IsGpuUuidForm(spec)) {
    return Status::Error(quoted +
                         "expected a GPU index or a UUID GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
  }
  if (!uuids) return Status::Ok();
  for (const std::string& u : *uuids) {
    if (SameUuid(u, spec)) return Status::Ok();
  }
  return Status::Error(quoted + "no GPU with this UUID (nvidia-smi -L lists them)");
}

std::vector<std::string> SplitGpuList(const std::string& spec) {
  std::vector<std::string> out;
  if (spec.empty()) return out;
  size_t start = 0;
  for (size_t comma; (comma = spec.find(',', start)) != std::string::npos; start = comma + 1) {
    out.push_back(spec.substr(start, comma - start));
  }
  out.push_back(spec.substr(start));
  return out;
}

Status CheckGpuRequestAgainst(const std::string& spec, int count, int gpu_count,
                              const std::optional<std::vector<std::string>>& uuids) {
  if (count < 1 || count > kMaxJobGpus) {
    return Status::Error("--gpus " + std::to_string(count) + ": expected 1.." +
                         std::to_string(kMaxJobGpus));
  }
  if (gpu_count > 0 && count > gpu_count) {
    return Status::Error("--gpus " + std::to_string(count) + ": this machine has " +
                         std::to_string(gpu_count) + " GPU(s)");
  }
  const std::vector<std::string> entries = SplitGpuList(spec);
  if (entries.empty()) return Status::Ok();
  if (static_cast<int>(entries.size()) != count) {
    return Status::Error("--gpu \"" + spec + "\" names " + std::to_string(entries.size()) +
                         " GPU(s) but --gpus is " + std::to_string(count));
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].empty()) return Status::Error("--gpu \"" + spec + "\": an empty entry");
    if (Status st = CheckGpuSpecAgainst(entries[i], gpu_count, uuids); !st.ok()) return st;
    for (size_t k = 0; k < i; ++k) {
      if (SameUuid(entries[k], entries[i])) {
        return Status::Error("--gpu \"" + spec + "\": " + entries[i] + " is named twice");
      }
    }
  }
  return Status::Ok();
}

Status CheckGpuRequest(const std::string& spec, int count, int gpu_count) {
  const bool names_uuid = spec.find("GPU-") != std::string::npos;
  return CheckGpuRequestAgainst(spec, count, gpu_count, names_uuid ? NvmlGpuUuids() : std::nullopt);
}

std::string GpuUuidOf(const std::string& entry) {
  if (IsGpuUuidForm(entry)) {
    std::string lower = entry;  // as NVML and the shim spell it: "GPU-" then lower-case hex
    for (size_t i = 4; i < lower.size(); ++i) {
      lower[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(lower[i])));
    }
    return lower;
  }
  const auto& uuids = NvmlGpuUuids();
  if (!uuids || entry.empty() || entry.size() > 9 ||
      !std::all_of(entry.begin(), entry.end(), IsAsciiDigit)) {
    return "";
  }
  size_t index = std::stoul(entry);
  return index < uuids->size() ? (*uuids)[index] : "";
}

bool ParseGpuUuid(const std::string& uuid, unsigned char out[16]) {
  if (!IsGpuUuidForm(uuid)) return false;
  auto nibble = [](char c) {
    return static_cast<unsigned char>(c <= '9' ? c - '0' : std::tolower(c) - 'a' + 10);
  };
  int n = 0;
  for (size_t i = 4; i + 1 < uuid.size() && n < 16;) {
    if (uuid[i] == '-') {
      ++i;
      continue;
    }
    out[n++] = static_cast<unsigned char>(nibble(uuid[i]) << 4 | nibble(uuid[i + 1]));
    i += 2;
  }
  return n == 16;
}

std::string GpuIndexOf(const std::string& entry) {
  const auto& uuids = NvmlGpuUuids();
  if (!IsGpuUuidForm(entry) || !uuids) return entry;
  for (size_t i = 0; i < uuids->size(); ++i) {
    if (SameUuid((*uuids)[i], entry)) return std::to_string(i);
  }
  return entry;
}

std::string GpuIndexList(const std::string& spec) {
  std::string out;
  for (const std::string& entry : SplitGpuList(spec)) {
    out += (out.empty() ? "" : ",") + GpuIndexOf(entry);
  }
  return out;
}

std::string VisibleDevices(const std::string& slots) {
  std::string out;
  for (const std::string& entry : SplitGpuList(slots)) {
    std::string uuid = GpuUuidOf(entry);
    out += (out.empty() ? "" : ",") + (uuid.empty() ? entry : uuid);
  }
  return out;
}

}  // namespace gshare
