// fake_gpus_check (ctest fake_gpus_check): the fake machine with several GPUs. In child
// processes of this program (argv {self, "--child", mode}, environment set per case):
// CUDA_VISIBLE_DEVICES parsing at cuInit, the physical index in the op log, and a checkpoint
// restore with GPU pairs that moves a process's charged bytes to another GPU. In this
// process: the fake NVML (dlopened from FAKE_NVML_PATH) against the fake driver's UUIDs.
// Main thread; prints "FAIL ..." and exits 1 at the first wrong answer.
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check_child.h"
#include "fake_vmm_check.h"  // the check macros
#include "gshare/cuda_checkpoint.h"
#include "physical_gpus.h"

namespace {

namespace ck = gshare::cuda_checkpoint;
using gs_cuda::fake::kUuidTextBytes;

constexpr size_t kMiB = 1u << 20;
constexpr int kGpus = 4;  // FAKE_CUDA_DEVICES of every case

std::string UuidText(int physical) {
  unsigned char b[gs_cuda::fake::kUuidBytes];
  gs_cuda::fake::PhysicalGpuUuid(physical, b);
  char text[kUuidTextBytes];
  gs_cuda::fake::FormatGpuUuid(b, text);
  return text;
}

// The physical index cuDeviceGetUuid names for ordinal, or -1.
int PhysicalOf(CUdevice ordinal) {
  CUuuid u;
  if (cuDeviceGetUuid(&u, ordinal) != CUDA_SUCCESS) return -1;
  return gs_cuda::fake::PhysicalGpuOfUuid(reinterpret_cast<unsigned char*>(u.bytes), kGpus);
}

// --- children ---

// "list": one line "init <r> count <n> phys <p0> <p1> ...", then "past <r>" (cuDeviceGet of
// the first ordinal past the count).
int ChildList() {
  CUresult r = cuInit(0);
  int n = 0;
  if (r == CUDA_SUCCESS) C(cuDeviceGetCount(&n));
  std::printf("init %d count %d phys", r, n);
  for (int i = 0; i < n; ++i) std::printf(" %d", PhysicalOf(i));
  CUdevice d;
  std::printf("\npast %d\n", r == CUDA_SUCCESS ? cuDeviceGet(&d, n) : -1);
  return 0;
}

CUresult KernelOn(CUdevice ordinal) {
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  unsigned ms = 1;
  void* params[] = {&ms};
  static const char kImage[] = "fake cubin";
  if (CUresult r = cuDevicePrimaryCtxRetain(&ctx, ordinal)) return r;
  if (CUresult r = cuCtxSetCurrent(ctx)) return r;
  if (CUresult r = cuModuleLoadData(&mod, kImage)) return r;
  if (CUresult r = cuModuleGetFunction(&fn, mod, "sleep_kernel")) return r;
  if (CUresult r = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr)) return r;
  return cuCtxSynchronize();
}

// "log": one kernel on ordinal 0, then one on ordinal 1.
int ChildLog() {
  C(cuInit(0));
  C(KernelOn(0));
  C(KernelOn(1));
  return 0;
}

// "hold": 8 MiB on ordinal 0, "ready"; after a line on stdin a kernel on ordinal 0, then
// "phys <p>" (cuDeviceGetUuid of ordinal 0) and "free <b>" (cuMemGetInfo), frees, exits.
int ChildHold() {
  C(cuInit(0));
  CUcontext ctx;
  C(cuDevicePrimaryCtxRetain(&ctx, 0));
  C(cuCtxSetCurrent(ctx));
  CUdeviceptr p;
  C(cuMemAlloc_v2(&p, 8 * kMiB));
  std::printf("ready\n");
  std::fflush(stdout);
  char ch;
  while (read(0, &ch, 1) == 1 && ch != '\n') {
  }
  C(KernelOn(0));
  size_t free_bytes, total;
  C(cuMemGetInfo_v2(&free_bytes, &total));
  std::printf("phys %d\nfree %zu\n", PhysicalOf(0), free_bytes);
  C(cuMemFree_v2(p));
  return 0;
}

// --- the parent's side ---

using fake_check::Child;
using fake_check::Finish;
using fake_check::ReadLine;

std::string ReadFile(const std::string& path) {
  std::string s;
  char buf[4096];
  int fd = open(path.c_str(), O_RDONLY);
  ssize_t n;
  while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  if (fd >= 0) close(fd);
  return s;
}

// Physical GPU index's counter in the device file (8 bytes at 8*index), or ~0.
uint64_t FileCounter(const std::string& path, int index) {
  uint64_t v = ~0ull;
  int fd = open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    if (pread(fd, &v, sizeof v, 8 * index) != sizeof v) v = ~0ull;
    close(fd);
  }
  return v;
}

int CheckVisible(const char* self) {
  const std::string u1 = UuidText(1), u3 = UuidText(3);
  std::string u3_upper = u3;
  for (size_t i = 4; i < u3_upper.size(); ++i) u3_upper[i] = static_cast<char>(toupper(u3[i]));
  struct Case {
    const char* name;
    std::string visible;  // "-" : unset
    std::string want;
  } cases[] = {
      {"unset", "-", "init 0 count 4 phys 0 1 2 3"},
      {"indexes", "2,0", "init 0 count 2 phys 2 0"},
      {"uuids", u3 + ",1", "init 0 count 2 phys 3 1"},
      {"uuid upper case", u3_upper, "init 0 count 1 phys 3"},
      {"invalid stops", "1,x,2", "init 0 count 1 phys 1"},
      {"out of range stops", "1,4,2", "init 0 count 1 phys 1"},
      {"repeat stops", "1,2," + u1 + ",3", "init 0 count 2 phys 1 2"},
      {"empty entry stops", "3,,0", "init 0 count 1 phys 3"},
      {"empty", "", "init 100 count 0 phys"},
      {"none valid", "GPU-0,1", "init 100 count 0 phys"},
      {"negative", "-1", "init 100 count 0 phys"},
  };
  for (const Case& k : cases) {
    std::vector<std::string> env = {"FAKE_CUDA_DEVICES=4"};
    if (k.visible != "-") env.push_back("CUDA_VISIBLE_DEVICES=" + k.visible);
    Child c = fake_check::Spawn(self, {"list"}, env);
    std::string got = ReadLine(c), past = ReadLine(c);
    int rc = Finish(c);
    bool init_ok = k.want.rfind("init 0", 0) == 0;
    if (rc != 0 || got != k.want ||
        (init_ok && past != "past " + std::to_string(CUDA_ERROR_INVALID_DEVICE))) {
      std::printf("FAIL visible %s (%s): got '%s' '%s' rc %d, want '%s'\n", k.name,
                  k.visible.c_str(), got.c_str(), past.c_str(), rc, k.want.c_str());
      return 1;
    }
  }
  return 0;
}

// The devices of pid's K lines in the log, in order; "" for malformed lines.
std::vector<std::string> KernelDevices(const std::string& log, pid_t pid) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    if (end == std::string::npos) end = log.size();
    char kind, name[64];
    int p, dev, used = 0;
    unsigned long long s, e;
    std::string line = log.substr(pos, end - pos);
    if (std::sscanf(line.c_str(), "%c %d %llu %llu %63s %d%n", &kind, &p, &s, &e, name, &dev,
                    &used) == 6 &&
        used == static_cast<int>(line.size())) {
      if (kind == 'K' && p == pid) out.push_back(std::to_string(dev));
    } else {
      out.push_back("");
    }
    pos = end + 1;
  }
  return out;
}

int CheckLog(const char* self, const std::string& dir) {
  const std::string log = dir + "/log.txt";
  Child c = fake_check::Spawn(
      self, {"log"}, {"FAKE_CUDA_DEVICES=4", "CUDA_VISIBLE_DEVICES=2,0", "FAKE_CUDA_LOG=" + log});
  pid_t pid = c.pid;
  T(Finish(c) == 0);
  std::vector<std::string> devs = KernelDevices(ReadFile(log), pid);
  T((devs == std::vector<std::string>{"2", "0"}));
  return 0;
}

using NvmlInit = int (*)();
using NvmlGetCount = int (*)(unsigned*);
using NvmlGetHandle = int (*)(unsigned, void**);
using NvmlGetByUuid = int (*)(const char*, void**);
using NvmlGetText = int (*)(void*, char*, unsigned);
using NvmlGetIndex = int (*)(void*, unsigned*);
using NvmlGetMemory = int (*)(void*, unsigned long long*);  // total, free, used

struct Nvml {
  NvmlInit init, shutdown;
  NvmlGetCount count;
  NvmlGetHandle by_index;
  NvmlGetByUuid by_uuid;
  NvmlGetText uuid, name;
  NvmlGetIndex index;
  NvmlGetMemory memory;
};

bool LoadNvml(Nvml* n) {
  void* lib = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return false;
  n->init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
  n->shutdown = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlShutdown"));
  n->count = reinterpret_cast<NvmlGetCount>(dlsym(lib, "nvmlDeviceGetCount_v2"));
  n->by_index = reinterpret_cast<NvmlGetHandle>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  n->by_uuid = reinterpret_cast<NvmlGetByUuid>(dlsym(lib, "nvmlDeviceGetHandleByUUID"));
  n->uuid = reinterpret_cast<NvmlGetText>(dlsym(lib, "nvmlDeviceGetUUID"));
  n->name = reinterpret_cast<NvmlGetText>(dlsym(lib, "nvmlDeviceGetName"));
  n->index = reinterpret_cast<NvmlGetIndex>(dlsym(lib, "nvmlDeviceGetIndex"));
  n->memory = reinterpret_cast<NvmlGetMemory>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
  return n->init && n->shutdown && n->count && n->by_index && n->by_uuid && n->uuid && n->name &&
         n->index && n->memory && dlsym(lib, "nvmlErrorString") != nullptr;
}

// Used bytes NVML reports for physical GPU index, or ~0.
unsigned long long NvmlUsed(const Nvml& n, int index) {
  void* h;
  unsigned long long mem[3];
  if (n.by_index(static_cast<unsigned>(index), &h) != 0 || n.memory(h, mem) != 0) return ~0ull;
  return mem[2];
}

// NVML lists every physical GPU whatever CUDA_VISIBLE_DEVICES says, with the driver's UUIDs
// (this process's ordinals are the physical indexes: it runs with CUDA_VISIBLE_DEVICES unset).
int CheckNvml(const Nvml& n) {
  E(n.count(nullptr), 1);  // not initialized
  setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  C(n.init());
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsigned count = 0;
  C(n.count(&count));
  T(count == kGpus);
  for (int i = 0; i < kGpus; ++i) {
    void *h, *h2;
    char text[96], small[40], name[32];
    unsigned index = 99;
    unsigned long long mem[3];
    C(n.by_index(static_cast<unsigned>(i), &h));
    C(n.uuid(h, text, sizeof text));
    T(text == UuidText(i) && PhysicalOf(i) == i);
    E(n.uuid(h, small, sizeof small), 7);
    C(n.by_uuid(text, &h2));
    T(h2 == h);
    C(n.index(h, &index));
    T(index == static_cast<unsigned>(i));
    C(n.name(h, name, sizeof name));
    T(std::strcmp(name, "Fake GPU") == 0);
    C(n.memory(h, mem));
    T(mem[0] == 64 * kMiB && mem[2] == 0 && mem[1] == mem[0]);
  }
  void* h;
  E(n.by_index(kGpus, &h), 2);
  E(n.by_uuid(UuidText(kGpus).c_str(), &h), 6);
  E(n.by_uuid("GPU-not-a-uuid", &h), 6);
  return 0;
}

// A child that sees every GPU, physical GPU 1 as its ordinal 0, holds 8 MiB there; it is
// checkpointed and restored onto GPU 2 with GPU pairs: the bytes move between the counters,
// and its later kernel and cuDeviceGetUuid name GPU 2. As with the real driver, pairs that
// leave a GPU out, or name no GPU, are refused and the process stays checkpointed.
int CheckRestoreOnto(const char* self, const std::string& dir, const Nvml& nvml) {
  const std::string file = dir + "/devices", log = dir + "/restore.log";
  Child c = fake_check::Spawn(self, {"hold"},
                              {"FAKE_CUDA_DEVICES=4", "CUDA_VISIBLE_DEVICES=1,0,2,3",
                               "FAKE_CUDA_DEVICE_FILE=" + file, "FAKE_CUDA_LOG=" + log});
  setenv("FAKE_CUDA_DEVICE_FILE", file.c_str(), 1);  // for NVML; this process's cuInit is done
  T(ReadLine(c) == "ready");
  T(FileCounter(file, 1) == 8 * kMiB && FileCounter(file, 2) == 0);
  T(NvmlUsed(nvml, 1) == 8 * kMiB);
  ck::LockArgs lock{};
  ck::CheckpointArgs checkpoint{};
  ck::UnlockArgs unlock{};
  C(cuCheckpointProcessLock(c.pid, &lock));
  C(cuCheckpointProcessCheckpoint(c.pid, &checkpoint));
  T(FileCounter(file, 1) == 0);
  // GPU 1 and 2 trade places; 0 and 3 stay.
  ck::GpuPair pairs[4];
  for (int p = 0; p < 4; ++p) {
    gs_cuda::fake::PhysicalGpuUuid(p, pairs[p].old_uuid);
    gs_cuda::fake::PhysicalGpuUuid(p == 1 ? 2 : p == 2 ? 1 : p, pairs[p].new_uuid);
  }
  ck::RestoreArgs restore{};
  restore.gpu_pairs = &pairs[1];
  restore.gpu_pairs_count = 1;  // GPUs 0, 2 and 3 left out
  E(cuCheckpointProcessRestore(c.pid, &restore), CUDA_ERROR_INVALID_VALUE);
  restore.gpu_pairs = pairs;
  restore.gpu_pairs_count = 4;
  unsigned char kept[16];
  std::memcpy(kept, pairs[3].new_uuid, 16);
  gs_cuda::fake::PhysicalGpuUuid(kGpus, pairs[3].new_uuid);  // names no GPU
  E(cuCheckpointProcessRestore(c.pid, &restore), CUDA_ERROR_INVALID_VALUE);
  int state = -1;
  C(cuCheckpointProcessGetState(c.pid, &state));
  T(state == ck::kCheckpointed);
  T(FileCounter(file, 1) == 0 && FileCounter(file, 2) == 0);
  std::memcpy(pairs[3].new_uuid, kept, 16);
  C(cuCheckpointProcessRestore(c.pid, &restore));
  T(FileCounter(file, 1) == 0 && FileCounter(file, 2) == 8 * kMiB);
  T(NvmlUsed(nvml, 1) == 0 && NvmlUsed(nvml, 2) == 8 * kMiB);
  C(cuCheckpointProcessUnlock(c.pid, &unlock));
  T(write(c.in, "\n", 1) == 1);
  T(ReadLine(c) == "phys 2");
  T(ReadLine(c) == "free " + std::to_string(56 * kMiB));
  pid_t pid = c.pid;
  T(Finish(c) == 0);
  T(FileCounter(file, 1) == 0 && FileCounter(file, 2) == 0);
  std::vector<std::string> devs = KernelDevices(ReadFile(log), pid);
  T((devs == std::vector<std::string>{"2"}));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--child") == 0) {
    std::string mode = argv[2];
    if (mode == "list") return ChildList();
    if (mode == "log") return ChildLog();
    if (mode == "hold") return ChildHold();
    return 2;
  }
  char dir[] = "/tmp/fake_gpus_check.XXXXXX";
  if (mkdtemp(dir) == nullptr) return 1;
  // This process: four GPUs, all visible, and the agent directory the children listen in.
  unsetenv("CUDA_VISIBLE_DEVICES");
  setenv("FAKE_CUDA_DEVICES", "4", 1);
  setenv("FAKE_CUDA_MEM_BYTES", "67108864", 1);
  setenv("FAKE_CUDA_CHECKPOINT_DIR", dir, 1);
  unsetenv("FAKE_CUDA_DEVICE_FILE");
  unsetenv("FAKE_CUDA_LOG");
  C(cuInit(0));
  Nvml nvml;
  T(LoadNvml(&nvml));
  if (CheckVisible(argv[0]) || CheckLog(argv[0], dir) || CheckNvml(nvml) ||
      CheckRestoreOnto(argv[0], dir, nvml)) {
    return 1;
  }
  C(nvml.shutdown());
  E(nvml.shutdown(), 1);
  setenv("FAKE_CUDA_DEVICES", "0", 1);
  E(nvml.init(), 9);  // no GPU: as without a driver
  std::string rm = std::string("rm -rf ") + dir;
  if (std::system(rm.c_str()) != 0) return 1;
  std::printf("fake_gpus_check: ok\n");
  return 0;
}
