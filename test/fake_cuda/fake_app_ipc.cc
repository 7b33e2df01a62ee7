// --ipc-serve / --ipc-open: two processes share device memory through legacy CUDA IPC, as
// PyTorch's sharing of CUDA tensors and vLLM's custom all-reduce do. The server exports a
// 130 MiB allocation (more than one chunk of the swap engine) and the second of two 4 KiB ones
// (a block inside a slab, at a non-zero offset), each filled with its own pattern, and writes
// both handles to DIR/handles. The opener maps them, checks every byte, opens the big one a
// second time (the same address must come back), writes the inverted patterns over the first
// MiB and the small one, closes all, and creates DIR/opened; the server then checks that it
// sees those bytes. Results are printed as 'fake_app: ipc ...' lines; a mismatch fails.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fake_app.h"

namespace fake_app {
namespace {

constexpr size_t kBig = (130u << 20) + 5;
constexpr size_t kSmall = 4096;
constexpr size_t kWritten = 1u << 20;  // the opener overwrites this much of the big one

unsigned char Big(size_t i) { return static_cast<unsigned char>((i * 7) ^ (i >> 9)); }
unsigned char Small(size_t i) { return static_cast<unsigned char>(0xA5 ^ i); }

bool Exists(const std::string& path) {
  struct stat sb;
  return stat(path.c_str(), &sb) == 0;
}

// Waits up to 60 s for `path`.
void WaitFor(const std::string& path) {
  for (int i = 0; i < 6000 && !Exists(path); ++i) SleepMs(10);
  if (!Exists(path)) Fail("ipc-wait", 0);
}

std::string Hex(const CUipcMemHandle_v1& h) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : h.reserved) {
    out += kDigits[(static_cast<unsigned char>(c) >> 4) & 15];
    out += kDigits[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

CUipcMemHandle_v1 FromHex(const std::string& s) {
  CUipcMemHandle_v1 h{};
  if (s.size() != 2 * sizeof h.reserved) Fail("ipc-handle-text", 0);
  for (size_t i = 0; i < sizeof h.reserved; ++i) {
    h.reserved[i] = static_cast<char>(std::stoi(s.substr(2 * i, 2), nullptr, 16));
  }
  return h;
}

// Whether `n` bytes at p equal pattern(i) (inverted when `invert`) for i in [0, n).
template <class P>
bool Holds(const Api& api, CUdeviceptr p, size_t n, P pattern, bool invert) {
  std::vector<unsigned char> got(n);
  CALL(MemcpyDtoH, got.data(), p, n);
  for (size_t i = 0; i < n; ++i) {
    unsigned char want = pattern(i);
    if (got[i] != static_cast<unsigned char>(invert ? ~want : want)) return false;
  }
  return true;
}

template <class P>
void Fill(const Api& api, CUdeviceptr p, size_t n, P pattern, bool invert) {
  std::vector<unsigned char> data(n);
  for (size_t i = 0; i < n; ++i) {
    data[i] = static_cast<unsigned char>(invert ? ~pattern(i) : pattern(i));
  }
  CALL(MemcpyHtoD, p, data.data(), n);
}

}  // namespace

void IpcServe(const Api& api, const std::string& dir) {
  CUdeviceptr big = 0, first = 0, small = 0;
  CALL(MemAlloc, &big, kBig);
  CALL(MemAlloc, &first, kSmall);
  CALL(MemAlloc, &small, kSmall);
  Fill(api, big, kBig, Big, false);
  Fill(api, small, kSmall, Small, false);
  CUipcMemHandle_v1 hb{}, hs{};
  CUresult rb = Need(api.IpcGetMemHandle, "cuIpcGetMemHandle")(&hb, big);
  CUresult rs = Need(api.IpcGetMemHandle, "cuIpcGetMemHandle")(&hs, small);
  std::printf("fake_app: ipc serve %d %d\n", static_cast<int>(rb), static_cast<int>(rs));
  std::fflush(stdout);
  if (rb != CUDA_SUCCESS || rs != CUDA_SUCCESS) Fail("IpcGetMemHandle", rb ? rb : rs);
  {
    std::ofstream out(dir + "/handles.tmp");
    out << Hex(hb) << "\n" << Hex(hs) << "\n";
  }
  std::rename((dir + "/handles.tmp").c_str(), (dir + "/handles").c_str());
  WaitFor(dir + "/opened");
  bool ok = Holds(api, big, kWritten, Big, true) &&
            Holds(
                api, big + kWritten, kBig - kWritten, [](size_t i) { return Big(i + kWritten); },
                false) &&
            Holds(api, small, kSmall, Small, true);
  std::printf("fake_app: ipc serve saw %s\n", ok ? "ok" : "bad");
  std::fflush(stdout);
  if (!ok) Fail("ipc-serve-saw", 0);
  CALL(MemFree, small);
  CALL(MemFree, first);
  CALL(MemFree, big);
}

void IpcOpen(const Api& api, const std::string& dir) {
  WaitFor(dir + "/handles");
  std::ifstream in(dir + "/handles");
  std::string tb, ts;
  in >> tb >> ts;
  CUipcMemHandle_v1 hb = FromHex(tb), hs = FromHex(ts);
  auto open = Need(api.IpcOpenMemHandle, "cuIpcOpenMemHandle");
  CUdeviceptr big = 0, again = 0, small = 0;
  // A handle with one bit of its exporter's nonce changed (gshare's handles carry it at byte
  // 16), as a handle of an earlier process with the same pid: it must not open.
  CUipcMemHandle_v1 forged = hb;
  forged.reserved[16] = static_cast<char>(forged.reserved[16] ^ 1);
  CUresult r = open(&big, forged, 1);
  std::printf("fake_app: ipc open forged %d\n", static_cast<int>(r));
  std::fflush(stdout);
  r = open(&big, hb, 1);
  if (r != CUDA_SUCCESS) Fail("IpcOpenMemHandle", r);
  r = open(&again, hb, 1);
  if (r != CUDA_SUCCESS) Fail("IpcOpenMemHandle", r);
  r = open(&small, hs, 1);
  if (r != CUDA_SUCCESS) Fail("IpcOpenMemHandle", r);
  bool ok = Holds(api, big, kBig, Big, false) && Holds(api, small, kSmall, Small, false);
  std::printf("fake_app: ipc open read %s same %s\n", ok ? "ok" : "bad",
              big == again ? "yes" : "no");
  std::fflush(stdout);
  if (!ok) Fail("ipc-open-read", 0);
  Fill(api, big, kWritten, Big, true);
  Fill(api, small, kSmall, Small, true);
  CALL(IpcCloseMemHandle, again);
  CALL(IpcCloseMemHandle, big);
  CALL(IpcCloseMemHandle, small);
  // Closed for good: a third close of the address is not an open handle any more.
  r = api.IpcCloseMemHandle(big);
  std::printf("fake_app: ipc open closed %d\n", static_cast<int>(r));
  std::fflush(stdout);
  std::ofstream(dir + "/opened") << "1\n";
}

}  // namespace fake_app
