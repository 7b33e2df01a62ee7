// What the files of fake_vmm_check share: the check macros (each prints "FAIL ..." with its
// place and makes the enclosing function return 1) and the groups of checks. Main thread.
#pragma once

#include <cstdio>

#include "fake_cuda_api.h"

using namespace gs_cuda;

#define C(x)                                                           \
  do {                                                                 \
    CUresult r_ = (x);                                                 \
    if (r_) {                                                          \
      std::printf("FAIL %s = %d %s:%d\n", #x, r_, __FILE__, __LINE__); \
      return 1;                                                        \
    }                                                                  \
  } while (0)
#define E(x, want)                                                                   \
  do {                                                                               \
    CUresult r_ = (x);                                                               \
    if (r_ != (want)) {                                                              \
      std::printf("FAIL %s = %d want %d %s:%d\n", #x, r_, want, __FILE__, __LINE__); \
      return 1;                                                                      \
    }                                                                                \
  } while (0)
#define T(cond)                                                  \
  do {                                                           \
    if (!(cond)) {                                               \
      std::printf("FAIL %s %s:%d\n", #cond, __FILE__, __LINE__); \
      return 1;                                                  \
    }                                                            \
  } while (0)

// In this process (no device file), after the VMM and pool checks: copies and sets into
// reserved but unmapped or inaccessible memory fail with 700 (fake_vmm_check_access.cc).
int CheckIllegalAddress();
// Pinned host memory, copies between it and mapped memory, events, cuMemGetAddressRange,
// cuDeviceTotalMem and the cuGetProcAddress answers for them (fake_vmm_check_access.cc).
int CheckHostMemory();
// Last: a copy whose memory is unmapped after it was queued leaves the sticky error 700, which
// every later submission and synchronization returns (fake_vmm_check_access.cc).
int CheckStickyError();

// In child processes of this program (fake_vmm_check_procs.cc): one device shared through
// FAKE_CUDA_DEVICE_FILE, FAKE_CUDA_CONTEXT_BYTES, FAKE_CUDA_PIN_US_PER_MIB and the
// cuMemCreate failure knobs. self is argv[0].
int CheckProcesses(const char* self);
// A child's side: argv is {self, "--child", mode, args...}. Returns its exit status.
int RunChild(int argc, char** argv);
