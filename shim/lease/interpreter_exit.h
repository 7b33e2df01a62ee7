// Whether the process's Python interpreter is shutting down: CPython's Py_IsFinalizing (3.13
// and later) or _Py_IsFinalizing (3.7-3.12), found once in the process's global scope with
// the real dlsym; false in a process without CPython. CPython sets the flag in
// Py_FinalizeEx after the atexit callbacks, before the modules (and the tensors they hold)
// are torn down; the call reads one atomic word of the runtime and needs no GIL
// (Python/pylifecycle.c). Any thread; lock-free after the first call.
//
// Used by the checkpoint engine: a job's CUDA memory goes with its process anyway, and a
// checkpoint started while the process exits blocks the exit in the driver until it fails,
// seconds later (CUDA error 304; docs/memory.md, "How `checkpoint` works").
#pragma once

namespace gshare::shim {

bool InterpreterFinalizing();

}  // namespace gshare::shim
