// fake_app: a stand-in CUDA job for the end-to-end tests. It reaches the driver by one of the
// three routes the shim must cover and launches sleeping "kernels" on the fake libcuda:
//   linked  direct calls to the cu* exports (only fake_app_linked, which links the fake);
//   dlsym   dlopen("libcuda.so.1") + dlsym of the exact export names;
//   gpa     dlsym("cuGetProcAddress_v2") only, then, like cudart, the cuGetProcAddress it
//           returns for version 12000 answers every other lookup (base names).
// Prints "fake_app: done <N>" (N = direct kernel launches = K lines in the fake's log) on
// success; "fake_app: error <what> <code>" on stderr and exit 1 on failure. --swap-check is in
// fake_app_swap.cc, the memory round trips (--vmm, --pool, --ipc-export, ...) in
// fake_app_memory.cc.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fake_app.h"
#include "physical_gpus.h"

namespace fake_app {

void Fail(const char* what, long code) {
  std::fflush(stdout);
  std::fprintf(stderr, "fake_app: error %s %ld\n", what, code);
  std::exit(1);
}

void Launch(const Api& api, const Options& o, CUfunction f, CUstream stream, unsigned ms,
            unsigned grid) {
  // kernelParams[0] points at the duration; the driver reads it at launch.
  if (ms == 0) ms = o.kernel_ms;
  void* params[] = {&ms};
  if (o.ex) {
    CUlaunchConfig config{};
    config.gridDimX = grid;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = config.blockDimY = config.blockDimZ = 1;
    config.hStream = stream;
    CALL(LaunchKernelEx, &config, f, params, nullptr);
  } else {
    CALL(LaunchKernel, f, grid, 1, 1, 1, 1, 1, 0, stream, params, nullptr);
  }
}

void SleepMs(int ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Sleeps until the next instant that is `offset_ms` past a multiple of `period_ms` on
// CLOCK_MONOTONIC (--align-ms): processes on one grid start their steps together.
void SleepToGrid(int period_ms, int offset_ms) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  int64_t ns = now.tv_sec * 1000000000LL + now.tv_nsec;
  int64_t period = period_ms * 1000000LL, offset = offset_ms * 1000000LL;
  int64_t next = ((ns - offset) / period + 1) * period + offset;
  struct timespec at = {static_cast<time_t>(next / 1000000000LL),
                        static_cast<long>(next % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
  }
}

}  // namespace fake_app

// CPython's flag, as libpython exports it (the shim looks it up in the global scope).
std::atomic<int> g_finalizing{0};
extern "C" __attribute__((visibility("default"))) int Py_IsFinalizing() {
  return g_finalizing.load();
}

namespace {

using namespace fake_app;

void Usage() {
  std::fprintf(
      stderr,
      "usage: fake_app [--route linked|dlsym|gpa] [--gpa-version N] [--per-thread]\n"
      "  [--device K]\n"
      "  [--kernels N] [--kernel-ms M] [--gap-ms G [--backlog-after B]] [--sync-every K]\n"
      "  [--threads T]\n"
      "  [--long-every N --long-ms L]\n"
      "  [--null-stream] [--ex] [--capture] [--memcpy] [--fork] [--exit-code C]\n"
      "  [--sleep-ms S] [--vmm BYTES] [--pool BYTES] [--swap-check BYTES]\n"
      "  [--cycles C] [--pieces N] [--leak-to-exit] [--finalizing] [--ipc-export]\n"
      "  [--ipc-serve DIR | --ipc-open DIR]\n"
      "  [--align-ms P [--align-offset-ms O]] [--start-file PATH] [--stop-file PATH]\n"
      "  [--print-mps] [--catch-sigint]\n"
      "--print-mps: after cuInit prints `fake_app: mps <CUDA_MPS_PIPE_DIRECTORY>` (`-`\n"
      "  when unset): whether the driver would have made the process an MPS client\n"
      "--catch-sigint: before cuInit, SIGINT gets a handler that only counts it (no\n"
      "  SA_RESTART), as Python's does; after cuInit prints `fake_app: sigint <count>`\n"
      "--consumer: at each synchronization a second stream waits for an event\n"
      "  recorded on the first, then runs one kernel through cuLaunchKernelEx (logged\n"
      "  under that name), before the cuCtxSynchronize: it must start after the first\n"
      "  stream's kernels ended.\n"
      "--backlog-after B: kernel B (counting from 0) and those after it start without\n"
      "  --gap-ms: a service that fell behind its arrivals serves them back to back.\n"
      "--long-every N --long-ms L: every Nth kernel lasts L ms, on a grid of 2 blocks\n"
      "  instead of 1 (another kernel shape for the shim).\n"
      "--device K: work on device ordinal K (default 0) and its primary context; first\n"
      "  prints 'fake_app: device <K> uuid <GPU-...>' (cuDeviceGetUuid of K).\n"
      "--align-ms P: after each synchronization the next kernel waits for the next\n"
      "  instant O ms past a multiple of P ms on CLOCK_MONOTONIC, instead of --gap-ms\n"
      "  (processes on one grid run their steps in lock step).\n"
      "--pieces N: --swap-check's bulk in N buffers (default 2), so that one eviction\n"
      "  spans many chunks.\n"
      "--leak-to-exit: leaves the --swap-check buffers allocated; at exit, after\n"
      "  gshare's exit handler and before the (fake) driver gives the process's memory\n"
      "  back, prints 'fake_app: device used at exit <bytes>' (FAKE_CUDA_DEVICE_FILE).\n"
      "--finalizing: from 'done' on (through --sleep-ms), Py_IsFinalizing(), which this\n"
      "  program exports as CPython does, returns 1: a Python job shutting down.\n"
      "--ipc-export: cuMemAlloc 1 MiB, cuIpcGetMemHandle of it, and print\n"
      "  'fake_app: ipc export <result>' (the CUresult, 0: a handle), then free it.\n"
      "--ipc-serve DIR: exports a 130 MiB allocation and a 4 KiB one (legacy IPC) into\n"
      "  DIR/handles, waits for DIR/opened, checks what --ipc-open wrote (fake_app_ipc.cc).\n"
      "--ipc-open DIR: opens DIR/handles, checks and overwrites the memory, closes it.\n"
      "--start-file PATH: once the context and module are set up, creates\n"
      "  PATH.ready.<pid> and waits for PATH to exist before its first GPU work: a test\n"
      "  starts several processes' work together, however late each one started.\n"
      "--stop-file PATH: --swap-check runs at least --cycles, then on until PATH exists\n"
      "  (a test ends a job once what it checks has happened).\n");
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto number = [&]() -> long {
      if (i + 1 >= argc) Usage();
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0' || v < 0) Usage();
      return v;
    };
    if (a == "--route" && i + 1 < argc) {
      o.route = argv[++i];
    } else if (a == "--device") {
      o.device = static_cast<int>(number());
    } else if (a == "--gpa-version") {
      o.gpa_version = static_cast<int>(number());
    } else if (a == "--per-thread") {
      o.per_thread = true;
    } else if (a == "--kernels") {
      o.kernels = static_cast<int>(number());
    } else if (a == "--kernel-ms") {
      o.kernel_ms = static_cast<unsigned>(number());
    } else if (a == "--long-every") {
      o.long_every = static_cast<int>(number());
    } else if (a == "--long-ms") {
      o.long_ms = static_cast<unsigned>(number());
    } else if (a == "--gap-ms") {
      o.gap_ms = static_cast<int>(number());
    } else if (a == "--backlog-after") {
      o.backlog_after = static_cast<int>(number());
    } else if (a == "--sync-every") {
      o.sync_every = static_cast<int>(number());
    } else if (a == "--threads") {
      o.threads = static_cast<int>(number());
    } else if (a == "--capture") {
      o.capture = true;
    } else if (a == "--memcpy") {
      o.memcpy_check = true;
    } else if (a == "--fork") {
      o.fork_child = true;
    } else if (a == "--null-stream") {
      o.null_stream = true;
    } else if (a == "--consumer") {
      o.consumer = true;
    } else if (a == "--ex") {
      o.ex = true;
    } else if (a == "--exit-code") {
      o.exit_code = static_cast<int>(number());
    } else if (a == "--align-ms") {
      o.align_ms = static_cast<int>(number());
    } else if (a == "--align-offset-ms") {
      o.align_offset_ms = static_cast<int>(number());
    } else if (a == "--print-mps") {
      o.print_mps = true;
    } else if (a == "--catch-sigint") {
      o.catch_sigint = true;
    } else if (a == "--sleep-ms") {
      o.sleep_ms = static_cast<int>(number());
    } else if (a == "--ipc-export") {
      o.ipc_export = true;
    } else if (a == "--ipc-serve" && i + 1 < argc) {
      o.ipc_serve = argv[++i];
    } else if (a == "--ipc-open" && i + 1 < argc) {
      o.ipc_open = argv[++i];
    } else if (a == "--vmm") {
      o.vmm_bytes = number();
    } else if (a == "--pool") {
      o.pool_bytes = number();
    } else if (a == "--swap-check") {
      o.swap_bytes = number();
    } else if (a == "--cycles") {
      o.cycles = static_cast<int>(number());
    } else if (a == "--pieces") {
      o.pieces = static_cast<int>(number());
      if (o.pieces < 1) Usage();
    } else if (a == "--leak-to-exit") {
      o.leak_to_exit = true;
    } else if (a == "--finalizing") {
      o.finalizing = true;
    } else if (a == "--start-file" && i + 1 < argc) {
      o.start_file = argv[++i];
    } else if (a == "--stop-file" && i + 1 < argc) {
      o.stop_file = argv[++i];
    } else {
      Usage();
    }
  }
  if (o.route != "linked" && o.route != "dlsym" && o.route != "gpa") Usage();
  if (o.threads < 1) Usage();
  return o;
}

void* OpenDriver() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "fake_app: dlopen: %s\n", dlerror());
    Fail("dlopen", 0);
  }
  return lib;
}

Api LoadApi(const Options& o) {
  Api api;
  if (o.route == "linked") {
#ifdef FAKE_APP_LINKED
#define FAKE_APP_LINK(field, name, name_pt, query) \
  api.field = o.per_thread ? &gs_cuda::name_pt : &gs_cuda::name;
    FAKE_APP_FUNCTIONS(FAKE_APP_LINK)
#undef FAKE_APP_LINK
#else
    Fail("route-linked-needs-fake_app_linked", 0);
#endif
  } else if (o.route == "dlsym") {
    void* lib = OpenDriver();
#define FAKE_APP_DLSYM(field, name, name_pt, query) \
  api.field = reinterpret_cast<decltype(api.field)>(dlsym(lib, o.per_thread ? #name_pt : #name));
    FAKE_APP_FUNCTIONS(FAKE_APP_DLSYM)
#undef FAKE_APP_DLSYM
  } else {
    void* lib = OpenDriver();
    auto first = reinterpret_cast<decltype(&gs_cuda::cuGetProcAddress_v2)>(
        dlsym(lib, "cuGetProcAddress_v2"));
    if (first == nullptr) Fail("dlsym-cuGetProcAddress_v2", 0);
    void* p = nullptr;
    CUdriverProcAddressQueryResult status = -1;
    CUresult r = first("cuGetProcAddress", &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (r != CUDA_SUCCESS || p == nullptr) Fail("gpa-cuGetProcAddress", r);
    auto gpa = reinterpret_cast<decltype(&gs_cuda::cuGetProcAddress_v2)>(p);
    const cuuint64_t flags =
        o.per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT;
    // A name the version does not offer stays null; Need() reports it when it is used.
#define FAKE_APP_GPA(field, name, name_pt, query) \
  p = nullptr;                                    \
  gpa(query, &p, o.gpa_version, flags, &status);  \
  api.field = reinterpret_cast<decltype(api.field)>(p);
    FAKE_APP_FUNCTIONS(FAKE_APP_GPA)
#undef FAKE_APP_GPA
    // Both fields asked for "cuCtxSynchronize": keep the one whose signature the version has.
    if (o.gpa_version >= 13000) {
      api.CtxSynchronize = nullptr;
    } else {
      api.CtxSynchronizeIn = nullptr;
    }
  }
  return api;
}

// cuCtxSynchronize of the current context through the revision the route gave: on the gpa
// route at version >= 13000 that is CUDA 13's cuCtxSynchronize_v2, which names the context
// (nullptr: the current one). Fails the program on an error.
void SyncContext(const Api& api) {
  if (api.CtxSynchronize != nullptr) {
    CALL(CtxSynchronize);
  } else {
    CALL(CtxSynchronizeIn, nullptr);
  }
}

// One launching thread: N kernels on its own stream (or the default stream under
// --null-stream), a cuCtxSynchronize after every K.
void LaunchLoop(const Api& api, const Options& o, CUcontext ctx, CUfunction f,
                std::atomic<int>* launched) {
  CALL(CtxSetCurrent, ctx);
  CUstream stream = nullptr;
  if (!o.null_stream) CALL(StreamCreate, &stream, 0);
  CUstream consumer = nullptr;
  CUevent produced = nullptr;
  if (o.consumer) {
    CALL(StreamCreate, &consumer, 0);
    CALL(EventCreate, &produced, 0);
  }
  for (int i = 0; i < o.kernels; ++i) {
    if (o.long_every > 0 && (i + 1) % o.long_every == 0) {
      Launch(api, o, f, stream, o.long_ms, 2);
    } else {
      Launch(api, o, f, stream);
    }
    ++*launched;
    bool synced = o.sync_every > 0 && (i + 1) % o.sync_every == 0;
    if (synced && o.consumer) {
      CALL(EventRecord, produced, stream);
      CALL(StreamWaitEvent, consumer, produced, 0);
      unsigned ms = o.kernel_ms;
      void* params[] = {&ms};
      CUlaunchConfig config{};
      config.gridDimX = config.gridDimY = config.gridDimZ = 1;
      config.blockDimX = config.blockDimY = config.blockDimZ = 1;
      config.hStream = consumer;
      CALL(LaunchKernelEx, &config, f, params, nullptr);
    }
    if (synced) SyncContext(api);
    if (i + 1 < o.kernels) {
      if (synced && o.align_ms > 0) {
        SleepToGrid(o.align_ms, o.align_offset_ms);
      } else if (o.backlog_after < 0 || i + 1 < o.backlog_after) {
        SleepMs(o.gap_ms);
      }
    }
  }
  CALL(StreamSynchronize, stream);
  if (stream != nullptr) CALL(StreamDestroy, stream);
  if (consumer != nullptr) {
    CALL(StreamSynchronize, consumer);
    CALL(StreamDestroy, consumer);
  }
}

// --start-file: says it is ready (PATH.ready.<pid>), then polls for PATH every 5 ms.
void WaitForStart(const std::string& path) {
  const std::string ready = path + ".ready." + std::to_string(getpid());
  int fd = open(ready.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) Fail("start-file-ready", errno);
  close(fd);
  while (access(path.c_str(), F_OK) != 0) SleepMs(5);
}

// A child that exits without touching CUDA, as a DataLoader worker does.
void ForkChild() {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) Fail("fork", errno);
  if (pid == 0) std::exit(0);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) Fail("waitpid", errno);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Fail("fork-child-status", status);
}

}  // namespace

// What device 0 of the fake holds, from the file every process counts in (the fake driver's
// device_usage.cc: one 8-byte counter per device); -1 without one.
void ReportDeviceUsedAtExit() {
  const char* path = std::getenv("FAKE_CUDA_DEVICE_FILE");
  long long used = -1;
  int fd = path != nullptr ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  if (fd >= 0) {
    uint64_t n = 0;
    if (pread(fd, &n, sizeof n, 0) == static_cast<ssize_t>(sizeof n))
      used = static_cast<long long>(n);
    close(fd);
  }
  std::printf("fake_app: device used at exit %lld\n", used);
  std::fflush(stdout);
}

std::atomic<int> g_sigints{0};

void CountSigint(int) { g_sigints.fetch_add(1); }

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  Api api = LoadApi(o);

  if (o.catch_sigint) {
    struct sigaction sa {};
    sa.sa_handler = CountSigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
  }
  CALL(Init, 0);
  if (o.catch_sigint) {
    std::printf("fake_app: sigint %d\n", g_sigints.load());
    std::fflush(stdout);
  }
  if (o.print_mps) {
    const char* pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
    std::printf("fake_app: mps %s\n", pipe != nullptr ? pipe : "-");
    std::fflush(stdout);
  }
  // Registered after cuInit (where the fake driver registers the give-back of the process's
  // memory) and before the first call gshare gates (where the shim registers its exit
  // handler): exit runs the shim's first, then this, then the driver's.
  if (o.leak_to_exit) std::atexit(ReportDeviceUsedAtExit);
  CUdevice dev = 0;
  CALL(DeviceGet, &dev, o.device < 0 ? 0 : o.device);
  if (o.device >= 0) {
    CUuuid uuid;
    CALL(DeviceGetUuid, &uuid, dev);
    char text[gs_cuda::fake::kUuidTextBytes];
    gs_cuda::fake::FormatGpuUuid(reinterpret_cast<const unsigned char*>(uuid.bytes), text);
    std::printf("fake_app: device %d uuid %s\n", o.device, text);
    std::fflush(stdout);
  }
  CUcontext ctx = nullptr;
  CALL(PrimaryCtxRetain, &ctx, dev);
  CALL(CtxSetCurrent, ctx);
  if (o.fork_child) ForkChild();

  static const char kImage[] = "fake cubin";
  CUmodule module = nullptr;
  CALL(ModuleLoadData, &module, kImage);
  CUfunction f = nullptr;
  CALL(ModuleGetFunction, &f, module, "sleep_kernel");

  if (!o.start_file.empty()) WaitForStart(o.start_file);
  if (o.memcpy_check) MemcpyRoundTrip(api);

  std::atomic<int> launched{0};
  if (o.threads == 1) {
    LaunchLoop(api, o, ctx, f, &launched);
  } else {
    std::vector<std::thread> threads;
    for (int t = 0; t < o.threads; ++t) {
      threads.emplace_back([&] { LaunchLoop(api, o, ctx, f, &launched); });
    }
    for (std::thread& t : threads) t.join();
  }

  if (o.capture) CaptureAndReplay(api, o, f);
  if (o.vmm_bytes > 0) VmmRoundTrip(api, o, f, dev);
  if (o.ipc_export) IpcExport(api);
  if (!o.ipc_serve.empty()) IpcServe(api, o.ipc_serve);
  if (!o.ipc_open.empty()) IpcOpen(api, o.ipc_open);
  if (o.pool_bytes > 0) PoolRoundTrip(api, o);
  if (o.swap_bytes > 0) SwapCheck(api, o, f, dev);

  SyncContext(api);
  CALL(ModuleUnload, module);
  CALL(PrimaryCtxRelease, dev);

  std::printf("fake_app: done %d\n", launched.load());
  std::fflush(stdout);
  if (o.finalizing) g_finalizing.store(1);
  SleepMs(o.sleep_ms);
  return o.exit_code;
}
