// Virtual memory management of the fake driver (cuMemCreate, cuMemAddressReserve, cuMemMap, ...)
// on host virtual memory: a reservation is PROT_NONE address space, a handle owns a memfd of its
// size, a mapping maps the memfd there with MAP_SHARED|MAP_FIXED (so bytes survive unmap/remap of
// one handle), cuMemSetAccess mprotects. Storage is freed (and uncharged from the device) when the
// handle is released and no mapping uses it, as the real driver does. Copies check their bytes
// against the mappings (vmm.h). Any thread (one reader/writer lock).
//
// FAKE_CUDA_FAIL_MEMCREATE_AFTER=N: the (N+1)-th and later valid cuMemCreate calls of the
// process fail with CUDA_ERROR_OUT_OF_MEMORY, for tests of rollback paths;
// FAKE_CUDA_FAIL_MEMCREATE_COUNT=K limits that to K calls, the (N+1)-th to the (N+K)-th (N is 0
// when only the count is set), so that a retry succeeds.
#include "vmm.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "driver.h"
#include "fake_cuda_api.h"
#include "memory.h"

namespace gs_cuda::fake {
namespace {

struct Storage {
  int fd = -1;
  size_t size = 0;
  CUmemAllocationProp prop{};
  int handle_refs = 1;    // cuMemCreate + cuMemRetainAllocationHandle - cuMemRelease
  int map_refs = 0;       // live mappings
  bool imported = false;  // another process's memory (charged to its device there)
};

struct Mapping {
  size_t size;
  size_t offset;
  CUmemGenericAllocationHandle handle;
  CUmemAccess_flags access = CU_MEM_ACCESS_FLAGS_PROT_NONE;
};

struct VmmState {
  // Guards everything below. Ops touching mapped bytes hold it shared (AccessRanges), so a
  // mapping never changes under a copy.
  std::shared_mutex mu;
  std::unordered_map<CUmemGenericAllocationHandle, Storage> storage;  // until freed
  CUmemGenericAllocationHandle next_handle = 0x10000;
  std::map<uintptr_t, size_t> reservations;  // start -> size
  std::map<uintptr_t, Mapping> mappings;     // start -> mapping
};

VmmState& State() {
  static VmmState* s = new VmmState;  // leaked, see driver.h
  return *s;
}

bool Aligned(uint64_t v) { return v % kGranularity == 0; }

// A non-negative number from the environment, or -1 when unset or malformed.
int64_t EnvCount(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  return (end == nullptr || *end != '\0' || n < 0) ? -1 : int64_t{n};
}

// Which cuMemCreate calls fail (0-based, counting valid calls): [first, first + count), with
// count -1 for all after first; first -1 when none fail.
struct FailWindow {
  int64_t first = -1;
  int64_t count = -1;
};

const FailWindow& MemCreateFailures() {
  static const FailWindow window = [] {
    FailWindow w;
    w.first = EnvCount("FAKE_CUDA_FAIL_MEMCREATE_AFTER");
    w.count = EnvCount("FAKE_CUDA_FAIL_MEMCREATE_COUNT");
    if (w.first < 0 && w.count >= 0) w.first = 0;
    return w;
  }();
  return window;
}
std::atomic<int64_t> g_memcreate_calls{0};

// Counts one valid cuMemCreate call; true when the failure knobs make it fail.
bool InjectMemCreateFailure() {
  const FailWindow& w = MemCreateFailures();
  if (w.first < 0) return false;
  int64_t call = g_memcreate_calls.fetch_add(1);
  return call >= w.first && (w.count < 0 || call - w.first < w.count);
}

// REQUIRES: st.mu held. Closes and uncharges storage nobody uses any more.
void MaybeFree(VmmState& st, CUmemGenericAllocationHandle h) {
  auto it = st.storage.find(h);
  if (it == st.storage.end() || it->second.handle_refs > 0 || it->second.map_refs > 0) return;
  close(it->second.fd);
  if (!it->second.imported) Uncharge(it->second.prop.location.id, it->second.size);
  st.storage.erase(it);
}

// REQUIRES: st.mu held. True when [p, p+size) lies inside one reservation.
bool InReservation(VmmState& st, uintptr_t p, size_t size) {
  auto it = st.reservations.upper_bound(p);
  if (it == st.reservations.begin()) return false;
  --it;
  return p >= it->first && p + size <= it->first + it->second;
}

// REQUIRES: st.mu held. The mapping containing p, or end().
std::map<uintptr_t, Mapping>::iterator MappingAt(VmmState& st, uintptr_t p) {
  auto it = st.mappings.upper_bound(p);
  if (it == st.mappings.begin()) return st.mappings.end();
  --it;
  return p < it->first + it->second.size ? it : st.mappings.end();
}

// REQUIRES: st.mu held. True when every byte of [p, p+size) is mapped.
bool FullyMapped(VmmState& st, uintptr_t p, size_t size) {
  uintptr_t at = p;
  while (at < p + size) {
    auto it = MappingAt(st, at);
    if (it == st.mappings.end()) return false;
    at = it->first + it->second.size;
  }
  return true;
}

void* Addr(uintptr_t p) { return reinterpret_cast<void*>(p); }

// REQUIRES: st.mu held (shared is enough). True when the bytes of r may be touched: outside
// every reservation, or mapped throughout with the access r needs.
bool Accessible(VmmState& st, const MemRange& r) {
  if (r.size == 0) return true;
  uintptr_t end = r.start + r.size;
  if (end < r.start) return false;
  // Reservations never overlap: the last one starting before end is the only candidate that
  // can reach past r.start.
  auto res = st.reservations.lower_bound(end);
  if (res == st.reservations.begin()) return true;
  --res;
  if (res->first + res->second <= r.start) return true;
  CUmemAccess_flags need =
      r.write ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_READ;
  for (uintptr_t at = r.start; at < end;) {
    auto m = MappingAt(st, at);
    if (m == st.mappings.end() || (m->second.access & need) != need) return false;
    at = m->first + m->second.size;
  }
  return true;
}

// Turns [p, p+size) back into reserved, inaccessible address space.
bool ReserveAgain(uintptr_t p, size_t size) {
  return mmap(Addr(p), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
              0) != MAP_FAILED;
}

}  // namespace

bool ValidProp(const CUmemAllocationProp* prop) {
  return prop != nullptr && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED &&
         prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
         CheckDevice(prop->location.id) == CUDA_SUCCESS;
}

CUresult Create(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                unsigned long long flags) {
  if (CUresult r = CheckInit()) return r;
  if (handle == nullptr || prop == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
    if (CUresult r = CheckDevice(prop->location.id)) return r;
  }
  if (!ValidProp(prop) || size == 0 || !Aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  // Only file descriptors can be asked for (no fabric, as on a machine without IMEX).
  if ((prop->requestedHandleTypes & ~CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  if (InjectMemCreateFailure()) return CUDA_ERROR_OUT_OF_MEMORY;
  int device = prop->location.id;
  if (CUresult r = Charge(device, size)) return r;
  // The name carries the device, so that a process importing the memory knows where it lies.
  char name[32];
  std::snprintf(name, sizeof name, "fake_cuda_vmm.d%d", device);
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) {
    if (fd >= 0) close(fd);
    Uncharge(device, size);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  CUmemGenericAllocationHandle h = st.next_handle++;
  Storage& s = st.storage[h];
  s.fd = fd;
  s.size = size;
  s.prop = *prop;
  *handle = h;
  return CUDA_SUCCESS;
}

CUresult Release(CUmemGenericAllocationHandle handle) {
  if (CUresult r = CheckInit()) return r;
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  auto it = st.storage.find(handle);
  if (it == st.storage.end() || it->second.handle_refs == 0) return CUDA_ERROR_INVALID_VALUE;
  --it->second.handle_refs;
  MaybeFree(st, handle);
  return CUDA_SUCCESS;
}

CUresult Reserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr) {
  if (CUresult r = CheckInit()) return r;
  if (ptr == nullptr || size == 0 || !Aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) return CUDA_ERROR_INVALID_VALUE;
  size_t align = alignment > kGranularity ? alignment : kGranularity;
  void* base = MAP_FAILED;
  if (addr != 0 && addr % align == 0) {  // a hint, as on the real driver
    base = mmap(Addr(addr), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base != MAP_FAILED && base != Addr(addr)) {
      munmap(base, size);
      base = MAP_FAILED;
    }
  }
  if (base == MAP_FAILED) {
    size_t span = size + align;
    void* raw = mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    uintptr_t aligned = (start + align - 1) / align * align;
    if (aligned > start) munmap(raw, aligned - start);
    if (start + span > aligned + size) munmap(Addr(aligned + size), start + span - aligned - size);
    base = Addr(aligned);
  }
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  st.reservations[reinterpret_cast<uintptr_t>(base)] = size;
  *ptr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(base));
  return CUDA_SUCCESS;
}

CUresult AddressFree(CUdeviceptr ptr, size_t size) {
  if (CUresult r = CheckInit()) return r;
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  auto it = st.reservations.find(static_cast<uintptr_t>(ptr));
  if (it == st.reservations.end() || it->second != size) return CUDA_ERROR_INVALID_VALUE;
  auto m = st.mappings.lower_bound(it->first);
  if (m != st.mappings.end() && m->first < it->first + size) return CUDA_ERROR_INVALID_VALUE;
  munmap(Addr(it->first), size);
  st.reservations.erase(it);
  return CUDA_SUCCESS;
}

CUresult Map(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
             unsigned long long flags) {
  if (CUresult r = CheckInit()) return r;
  uintptr_t p = static_cast<uintptr_t>(ptr);
  if (flags != 0 || size == 0 || !Aligned(p) || !Aligned(size) || !Aligned(offset)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  auto s = st.storage.find(handle);
  if (s == st.storage.end() || s->second.handle_refs == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (offset > s->second.size || size > s->second.size - offset) return CUDA_ERROR_INVALID_VALUE;
  if (!InReservation(st, p, size)) return CUDA_ERROR_INVALID_VALUE;
  auto next = st.mappings.lower_bound(p);
  if (next != st.mappings.end() && next->first < p + size) return CUDA_ERROR_INVALID_VALUE;
  if (MappingAt(st, p) != st.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
  if (mmap(Addr(p), size, PROT_NONE, MAP_SHARED | MAP_FIXED, s->second.fd,
           static_cast<off_t>(offset)) == MAP_FAILED) {
    ReserveAgain(p, size);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ++s->second.map_refs;
  st.mappings[p] = Mapping{size, offset, handle};
  return CUDA_SUCCESS;
}

CUresult Unmap(CUdeviceptr ptr, size_t size) {
  if (CUresult r = CheckInit()) return r;
  uintptr_t p = static_cast<uintptr_t>(ptr);
  if (size == 0 || !Aligned(p) || !Aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  // The range must consist of whole mappings, with no hole.
  if (!FullyMapped(st, p, size)) return CUDA_ERROR_INVALID_VALUE;
  auto first = st.mappings.find(p);
  if (first == st.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
  auto last = st.mappings.lower_bound(p + size);
  auto before_last = std::prev(last);
  if (before_last->first + before_last->second.size != p + size) return CUDA_ERROR_INVALID_VALUE;
  if (!ReserveAgain(p, size)) return CUDA_ERROR_UNKNOWN;
  for (auto it = first; it != last;) {
    CUmemGenericAllocationHandle h = it->second.handle;
    it = st.mappings.erase(it);
    auto s = st.storage.find(h);
    if (s != st.storage.end()) --s->second.map_refs;
    MaybeFree(st, h);
  }
  return CUDA_SUCCESS;
}

CUresult SetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  if (CUresult r = CheckInit()) return r;
  uintptr_t p = static_cast<uintptr_t>(ptr);
  if (desc == nullptr || count == 0 || size == 0 || !Aligned(p) || !Aligned(size)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  for (size_t i = 0; i < count; ++i) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = CheckDevice(desc[i].location.id)) return r;
    if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
        desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
        desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    flags |= desc[i].flags;  // host memory: one protection for all devices
  }
  int prot = flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE
             : flags == CU_MEM_ACCESS_FLAGS_PROT_READ    ? PROT_READ
                                                         : PROT_NONE;
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  if (!FullyMapped(st, p, size)) return CUDA_ERROR_INVALID_VALUE;
  if (mprotect(Addr(p), size, prot) != 0) return CUDA_ERROR_UNKNOWN;
  for (auto it = MappingAt(st, p); it != st.mappings.end() && it->first < p + size; ++it) {
    it->second.access = flags;
  }
  return CUDA_SUCCESS;
}

CUresult GetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) {
  if (CUresult r = CheckInit()) return r;
  if (flags == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (location->type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = CheckDevice(location->id)) return r;
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  auto it = MappingAt(st, static_cast<uintptr_t>(ptr));
  if (it == st.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
  *flags = static_cast<unsigned long long>(it->second.access);
  return CUDA_SUCCESS;
}

CUresult Retain(CUmemGenericAllocationHandle* handle, void* addr) {
  if (CUresult r = CheckInit()) return r;
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  auto it = MappingAt(st, reinterpret_cast<uintptr_t>(addr));
  if (it == st.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
  auto s = st.storage.find(it->second.handle);
  if (s == st.storage.end()) return CUDA_ERROR_INVALID_VALUE;
  ++s->second.handle_refs;
  *handle = it->second.handle;
  return CUDA_SUCCESS;
}

CUresult Properties(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
  if (CUresult r = CheckInit()) return r;
  if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  auto s = st.storage.find(handle);
  if (s == st.storage.end() || s->second.handle_refs == 0) return CUDA_ERROR_INVALID_VALUE;
  *prop = s->second.prop;
  return CUDA_SUCCESS;
}

// A POSIX file descriptor of the handle's storage (a dup of its memfd), when the handle was
// created with that handle type requested; other types are not supported.
CUresult Export(void* shareable, CUmemGenericAllocationHandle handle,
                CUmemAllocationHandleType type, unsigned long long flags) {
  if (CUresult r = CheckInit()) return r;
  if (shareable == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  auto s = st.storage.find(handle);
  if (s == st.storage.end() || s->second.handle_refs == 0) return CUDA_ERROR_INVALID_VALUE;
  if ((s->second.prop.requestedHandleTypes & type) == 0) return CUDA_ERROR_INVALID_VALUE;
  int fd = dup(s->second.fd);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *static_cast<int*>(shareable) = fd;
  return CUDA_SUCCESS;
}

// A handle of the storage behind a file descriptor Export gave (in this process or another):
// the descriptor must be a fake VMM memfd; its size and device come from the memfd itself.
CUresult Import(CUmemGenericAllocationHandle* handle, void* shareable,
                CUmemAllocationHandleType type) {
  if (CUresult r = CheckInit()) return r;
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  int fd = static_cast<int>(reinterpret_cast<intptr_t>(shareable));
  char link[64], target[128] = {};
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  int device = -1;
  if (n <= 0 || std::sscanf(target, "/memfd:fake_cuda_vmm.d%d", &device) != 1) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  struct stat sb {};
  if (fstat(fd, &sb) != 0 || sb.st_size <= 0) return CUDA_ERROR_INVALID_VALUE;
  int own = dup(fd);
  if (own < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  VmmState& st = State();
  std::lock_guard<std::shared_mutex> lock(st.mu);
  CUmemGenericAllocationHandle h = st.next_handle++;
  Storage& s = st.storage[h];
  s.fd = own;
  s.size = static_cast<size_t>(sb.st_size);
  s.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  s.prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  s.prop.location.id = device;
  s.prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  s.imported = true;
  *handle = h;
  return CUDA_SUCCESS;
}

CUresult AccessRanges(const MemRange* ranges, size_t count, const std::function<void()>& touch) {
  VmmState& st = State();
  std::shared_lock<std::shared_mutex> lock(st.mu);
  for (size_t i = 0; i < count; ++i) {
    if (!Accessible(st, ranges[i])) return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  if (touch) touch();
  return CUDA_SUCCESS;
}

bool MappedRange(uintptr_t p, uintptr_t* base, size_t* size) {
  VmmState& st = State();
  std::shared_lock<std::shared_mutex> lock(st.mu);
  auto it = MappingAt(st, p);
  if (it == st.mappings.end()) return false;
  *base = it->first;
  *size = it->second.size;
  return true;
}

}  // namespace gs_cuda::fake
