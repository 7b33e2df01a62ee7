// Python's shutdown, seen from the shim; see interpreter_exit.h.
#include "lease/interpreter_exit.h"

#include <dlfcn.h>

#include <atomic>

#include "driver/real_driver.h"

namespace gshare::shim {
namespace {

using IsFinalizingFn = int (*)();

// nullptr until looked up; kNone when the process has neither symbol.
std::atomic<IsFinalizingFn> g_is_finalizing{nullptr};
int NoInterpreter() { return 0; }
constexpr IsFinalizingFn kNone = &NoInterpreter;

}  // namespace

bool InterpreterFinalizing() {
  IsFinalizingFn fn = g_is_finalizing.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = reinterpret_cast<IsFinalizingFn>(RealDlsym(RTLD_DEFAULT, "Py_IsFinalizing"));
    if (fn == nullptr) {
      fn = reinterpret_cast<IsFinalizingFn>(RealDlsym(RTLD_DEFAULT, "_Py_IsFinalizing"));
    }
    if (fn == nullptr) fn = kNone;
    g_is_finalizing.store(fn, std::memory_order_release);
  }
  return fn() != 0;
}

}  // namespace gshare::shim
