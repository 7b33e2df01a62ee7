// First touch of host memory against later touches: rounds of mmap GIB GiB, MADV_HUGEPAGE,
// 4 threads writing one byte per 4 KiB page, munmap; one line per round with its GB/s. No GPU
// needed. Round 0 meets memory the machine may never have used since boot; later rounds (and
// later processes) get pages freed by earlier ones. Run twice in a row to see whether freed
// memory stays fast (test/bench/host_warm.py rests on the answer):
//   g++ -O2 -std=c++20 -o /tmp/host_first_touch_probe test/bench/host_first_touch_probe.cc
//   -lpthread /tmp/host_first_touch_probe 40 3 && /tmp/host_first_touch_probe 40 2   # GiB, rounds
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

static double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char** argv) {
  size_t gib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 8;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  if (gib == 0 || rounds <= 0) {
    std::fprintf(stderr, "usage: host_first_touch_probe [GIB] [ROUNDS]\n");
    return 2;
  }
  const size_t bytes = gib << 30;
  const int threads = 4;
  for (int r = 0; r < rounds; ++r) {
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      std::perror("mmap");
      return 1;
    }
    char* p = static_cast<char*>(m);
    madvise(p, bytes, MADV_HUGEPAGE);
    double t0 = Now();
    std::vector<std::thread> ts;
    const size_t slice = bytes / threads;
    for (int i = 0; i < threads; ++i) {
      ts.emplace_back([=] {
        volatile char* s = p + i * slice;
        for (size_t off = 0; off < slice; off += 4096) s[off] = 1;
      });
    }
    for (std::thread& t : ts) t.join();
    double dt = Now() - t0;
    std::printf("round %d: %zu GiB in %.2f s = %.2f GB/s\n", r, gib, dt, bytes / dt / 1e9);
    std::fflush(stdout);
    munmap(p, bytes);
  }
  return 0;
}
