// fake_vmm_check across processes: children of this program (argv {self, "--child", mode, ...})
// share one device through FAKE_CUDA_DEVICE_FILE, pay FAKE_CUDA_CONTEXT_BYTES, time
// FAKE_CUDA_PIN_US_PER_MIB and count the cuMemCreate failure knobs. The parent reads the file's
// counter of device 0 directly (device_usage.h: 8 bytes at offset 0).
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check_child.h"
#include "fake_vmm_check.h"

namespace {

constexpr size_t kMiB = 1u << 20;
constexpr size_t kCapacity = 64 * kMiB;
constexpr size_t kContext = 2 * kMiB;

using fake_check::Child;
using fake_check::Finish;
using fake_check::ReadLine;

// Runs a child to its end; its exit status.
int RunToEnd(const char* self, const char* mode, const std::string& arg,
             const std::vector<std::string>& env) {
  Child c = fake_check::Spawn(self, {mode, arg}, env);
  return Finish(c);
}

// Device 0's counter in the device file.
uint64_t FileCounter(const std::string& path) {
  uint64_t v = ~0ull;
  int fd = open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    if (pread(fd, &v, sizeof v, 0) != sizeof v) v = ~0ull;
    close(fd);
  }
  return v;
}

off_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// --- the children's side ---

CUmemAllocationProp DeviceProp() {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  return prop;
}

int StartCuda() {
  C(cuInit(0));
  CUcontext ctx;
  C(cuDevicePrimaryCtxRetain(&ctx, 0));
  C(cuCtxSetCurrent(ctx));
  return 0;
}

// hold BYTES: cuMemCreate BYTES, say "held", keep it until stdin closes, release, exit().
int ChildHold(size_t bytes) {
  if (StartCuda()) return 1;
  CUmemAllocationProp prop = DeviceProp();
  CUmemGenericAllocationHandle h;
  C(cuMemCreate(&h, bytes, &prop, 0));
  std::printf("held\n");
  std::fflush(stdout);
  char ch;
  while (read(0, &ch, 1) == 1) {
  }
  C(cuMemRelease(h));
  return 0;
}

// probe FREE: free memory is FREE; nothing bigger fits, by any allocator; FREE itself does.
int ChildProbe(size_t want_free) {
  if (StartCuda()) return 1;
  size_t f, t;
  C(cuMemGetInfo_v2(&f, &t));
  T(t == kCapacity);
  T(f == want_free);
  CUmemAllocationProp prop = DeviceProp();
  CUmemGenericAllocationHandle h;
  CUdeviceptr p;
  E(cuMemCreate(&h, f + 2 * kMiB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
  E(cuMemAlloc_v2(&p, f + 1), CUDA_ERROR_OUT_OF_MEMORY);
  E(cuMemAllocAsync(&p, f + 1, nullptr), CUDA_ERROR_OUT_OF_MEMORY);
  C(cuMemCreate(&h, f, &prop, 0));
  C(cuMemGetInfo_v2(&f, &t));
  T(f == 0);
  E(cuMemAlloc_v2(&p, 1), CUDA_ERROR_OUT_OF_MEMORY);
  C(cuMemRelease(h));
  C(cuMemGetInfo_v2(&f, &t));
  T(f == want_free);
  return 0;
}

// leak-exit / leak-_exit BYTES: cuMemAlloc without a free, then exit() or _exit().
int ChildLeak(size_t bytes, bool use_exit) {
  if (StartCuda()) return 1;
  CUdeviceptr p;
  C(cuMemAlloc_v2(&p, bytes));
  std::fflush(stdout);
  if (use_exit) std::exit(0);
  _exit(0);
}

// ctx CODE: retaining the primary context returns CODE.
int ChildContext(int want) {
  C(cuInit(0));
  CUcontext ctx;
  E(cuDevicePrimaryCtxRetain(&ctx, 0), want);
  return 0;
}

// pin BYTES: prints how many microseconds cuMemHostAlloc of BYTES took.
int ChildPin(size_t bytes) {
  if (StartCuda()) return 1;
  timespec a, b;
  void* p;
  clock_gettime(CLOCK_MONOTONIC, &a);
  C(cuMemHostAlloc(&p, bytes, 0));
  clock_gettime(CLOCK_MONOTONIC, &b);
  C(cuMemFreeHost(p));
  long long us = (b.tv_sec - a.tv_sec) * 1000000ll + (b.tv_nsec - a.tv_nsec) / 1000;
  std::printf("%lld\n", us);
  return 0;
}

// knob N: prints the results of N cuMemCreate calls of 2 MiB (each released at once).
int ChildKnob(int n) {
  if (StartCuda()) return 1;
  CUmemAllocationProp prop = DeviceProp();
  std::string out;
  for (int i = 0; i < n; ++i) {
    CUmemGenericAllocationHandle h;
    CUresult r = cuMemCreate(&h, 2 * kMiB, &prop, 0);
    if (r == CUDA_SUCCESS) C(cuMemRelease(h));
    out += (i ? " " : "") + std::to_string(r);
  }
  std::printf("%s\n", out.c_str());
  return 0;
}

}  // namespace

int RunChild(int argc, char** argv) {
  if (argc < 4) return 2;
  std::string mode = argv[2];
  unsigned long long n = std::strtoull(argv[3], nullptr, 10);
  if (mode == "hold") return ChildHold(n);
  if (mode == "probe") return ChildProbe(n);
  if (mode == "leak-exit") return ChildLeak(n, true);
  if (mode == "leak-_exit") return ChildLeak(n, false);
  if (mode == "ctx") return ChildContext(static_cast<int>(n));
  if (mode == "pin") return ChildPin(n);
  if (mode == "knob") return ChildKnob(static_cast<int>(n));
  return 2;
}

int CheckProcesses(const char* self) {
  char dir[] = "/tmp/fake_vmm_check.XXXXXX";
  T(mkdtemp(dir) != nullptr);
  const std::string file = std::string(dir) + "/device";
  const std::vector<std::string> env = {"FAKE_CUDA_DEVICE_FILE=" + file,
                                        "FAKE_CUDA_MEM_BYTES=" + std::to_string(kCapacity),
                                        "FAKE_CUDA_CONTEXT_BYTES=" + std::to_string(kContext)};
  // A holder's 40 MiB and context count for a second process, which sees what is left.
  Child holder = fake_check::Spawn(self, {"hold", std::to_string(40 * kMiB)}, env);
  T(ReadLine(holder) == "held");
  T(FileSize(file) == 512);
  T(FileCounter(file) == 40 * kMiB + kContext);
  T(RunToEnd(self, "probe", std::to_string(kCapacity - 40 * kMiB - 2 * kContext), env) == 0);
  T(FileCounter(file) == 40 * kMiB + kContext);  // the probe's context went with its exit()
  T(Finish(holder) == 0);
  T(FileCounter(file) == 0);
  // exit() gives back what a process still holds; _exit() leaks it in the file.
  T(RunToEnd(self, "leak-exit", std::to_string(10 * kMiB), env) == 0);
  T(FileCounter(file) == 0);
  T(RunToEnd(self, "leak-_exit", std::to_string(10 * kMiB), env) == 0);
  T(FileCounter(file) == 10 * kMiB + kContext);
  // A context that does not fit: out of memory.
  std::vector<std::string> big = env;
  big[2] = "FAKE_CUDA_CONTEXT_BYTES=" + std::to_string(kCapacity - 10 * kMiB);
  T(RunToEnd(self, "ctx", std::to_string(CUDA_ERROR_OUT_OF_MEMORY), big) == 0);
  T(RunToEnd(self, "ctx", "0", env) == 0);
  T(FileCounter(file) == 10 * kMiB + kContext);
  // Pinning cost: 8 MiB at 5 ms per MiB.
  Child pin =
      fake_check::Spawn(self, {"pin", std::to_string(8 * kMiB)}, {"FAKE_CUDA_PIN_US_PER_MIB=5000"});
  long long us = std::atoll(ReadLine(pin).c_str());
  T(Finish(pin) == 0);
  T(us >= 40000);
  // The failure knobs: calls 2 and 3 fail, then creates succeed again; the count alone starts
  // at the first call; the old knob alone fails every call after N.
  Child knob =
      fake_check::Spawn(self, {"knob", "5"},
                        {"FAKE_CUDA_FAIL_MEMCREATE_AFTER=1", "FAKE_CUDA_FAIL_MEMCREATE_COUNT=2"});
  std::string got = ReadLine(knob);
  T(Finish(knob) == 0);
  T(got == "0 2 2 0 0");
  knob = fake_check::Spawn(self, {"knob", "3"}, {"FAKE_CUDA_FAIL_MEMCREATE_COUNT=1"});
  got = ReadLine(knob);
  T(Finish(knob) == 0);
  T(got == "2 0 0");
  knob = fake_check::Spawn(self, {"knob", "4"}, {"FAKE_CUDA_FAIL_MEMCREATE_AFTER=2"});
  got = ReadLine(knob);
  T(Finish(knob) == 0);
  T(got == "0 0 2 2");
  unlink(file.c_str());
  rmdir(dir);
  return 0;
}
