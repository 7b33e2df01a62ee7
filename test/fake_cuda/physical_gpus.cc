#include "physical_gpus.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gs_cuda::fake {
namespace {

// Groups of the UUID text, in bytes: 4-2-2-2-6.
constexpr int kGroups[] = {4, 2, 2, 2, 6};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || v[0] == '\0') return fallback;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  return (end != nullptr && *end == '\0') ? n : fallback;
}

int PhysicalGpuCount() {
  uint64_t n = EnvNumber("FAKE_CUDA_DEVICES", 1);
  return static_cast<int>(n > kMaxDevices ? kMaxDevices : n);
}

void PhysicalGpuUuid(int index, unsigned char out[kUuidBytes]) {
  char text[kUuidBytes + 1];
  std::snprintf(text, sizeof text, "FAKEGPU-%08x", static_cast<unsigned>(index));
  std::memcpy(out, text, kUuidBytes);
}

void FormatGpuUuid(const unsigned char bytes[kUuidBytes], char out[kUuidTextBytes]) {
  static const char kHex[] = "0123456789abcdef";
  char* p = out;
  std::memcpy(p, "GPU", 3);
  p += 3;
  size_t b = 0;
  for (int g : kGroups) {
    *p++ = '-';
    for (int i = 0; i < g; ++i, ++b) {
      *p++ = kHex[bytes[b] >> 4];
      *p++ = kHex[bytes[b] & 0xf];
    }
  }
  *p = '\0';
}

int PhysicalGpuOfUuid(const unsigned char bytes[kUuidBytes], int count) {
  for (int i = 0; i < count; ++i) {
    unsigned char u[kUuidBytes];
    PhysicalGpuUuid(i, u);
    if (std::memcmp(u, bytes, kUuidBytes) == 0) return i;
  }
  return -1;
}

int PhysicalGpuOfUuidText(const char* text, size_t len, int count) {
  if (text == nullptr || len != kUuidTextBytes - 1 || std::strncmp(text, "GPU", 3) != 0) return -1;
  unsigned char bytes[kUuidBytes];
  size_t pos = 3, b = 0;
  for (int g : kGroups) {
    if (text[pos++] != '-') return -1;
    for (int i = 0; i < g; ++i, ++b, pos += 2) {
      int hi = HexValue(text[pos]), lo = HexValue(text[pos + 1]);
      if (hi < 0 || lo < 0) return -1;
      bytes[b] = static_cast<unsigned char>(hi << 4 | lo);
    }
  }
  return PhysicalGpuOfUuid(bytes, count);
}

}  // namespace gs_cuda::fake
