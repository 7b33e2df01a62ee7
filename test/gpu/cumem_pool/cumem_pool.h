// An allocator shaped as serving engines' sleep mode (vLLM's CuMemAllocator, "sleep mode" in the
// vLLM docs; SGLang's torch_memory_saver): every allocation is a reserved address range backed by
// one cuMemCreate handle mapped there (CUDA Programming Guide, "Virtual Memory Management").
// Sleep copies the allocations of the chosen tags to pinned host memory and unmaps and releases
// their handles, keeping the address ranges; wake creates and maps new handles at the same
// addresses and copies the saved bytes back, so that CUDA graphs captured over them replay
// unchanged. Allocations of tags not offloaded come back with undefined contents (an engine
// refills its KV cache).
//
// The library reaches the driver with dlopen("libcuda.so.1") + dlsym, as such engines' C
// extensions do through their link to libcuda. PyTorch loads it as a pluggable allocator
// (torch.cuda.memory.CUDAPluggableAllocator(path, "gs_cumem_alloc", "gs_cumem_free")); a C++
// program can call the same functions (cumem_pool_check.cc).
//
// Threads: every function may be called from any thread; one mutex orders them. The calling
// thread must have the allocation device's context current (PyTorch's allocator does).
// Errors: functions returning int return 0 or the failing CUresult; gs_cumem_error() names the
// last failing driver call. Sizes are bytes.
#pragma once

#include <sys/types.h>

extern "C" {

// PyTorch's pluggable allocator signature: size in bytes, device ordinal, stream (unused: the
// memory is ready when returned). Returns nullptr when the driver refuses (PyTorch then raises
// its out-of-memory error).
void* gs_cumem_alloc(ssize_t size, int device, void* stream);
// Unmaps and releases the allocation at `ptr` (asleep or awake) and frees its address range.
void gs_cumem_free(void* ptr, ssize_t size, int device, void* stream);

// The tag (0..31) the next allocations get: an engine tags weights and its KV cache apart.
void gs_cumem_set_tag(int tag);

// Synchronizes the current context, then for every awake allocation: copies it to pinned host
// memory when its tag's bit is set in `offload_tags`, and unmaps and releases its handle.
int gs_cumem_sleep(unsigned offload_tags);
// Creates and maps a handle for every asleep allocation at its address, sets read-write access
// from its device, and copies the saved bytes back (synchronous).
int gs_cumem_wake(void);

// Bytes of the allocations whose tag's bit is set in `tags`, awake ones only when `awake_only`.
unsigned long long gs_cumem_bytes(unsigned tags, int awake_only);
// "cuMemCreate: 2" for the last failing driver call, "" when none failed.
const char* gs_cumem_error(void);
}
