// How fast fresh anonymous memory is populated (the first half of shim/memory/host_pool.h's
// pinning), by 1..8 threads, with or without transparent huge pages, by touching each page or by
// MADV_POPULATE_WRITE. No GPU needed:
//   g++ -O2 -std=c++20 -o /tmp/host_populate_probe test/bench/host_populate_probe.cc -lpthread
//   /tmp/host_populate_probe 3   # GiB per run; keeps every run's memory (8 x GiB in all) so
//                                # that each run meets memory the VM has not backed yet
#include <sys/mman.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void run(const char* name, size_t bytes, int threads, bool thp, bool madv) {
  char* p = (char*)mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    printf("mmap failed\n");
    return;
  }
  if (thp) madvise(p, bytes, MADV_HUGEPAGE);
  double t0 = now();
  std::vector<std::thread> ts;
  size_t slice = bytes / threads;
  int bad = 0;
  for (int i = 0; i < threads; ++i) {
    ts.emplace_back([=, &bad] {
      char* s = p + i * slice;
      if (madv) {
        if (madvise(s, slice, MADV_POPULATE_WRITE) != 0) bad = 1;
      } else {
        for (size_t off = 0; off < slice; off += 4096) ((volatile char*)s)[off] = 1;
      }
    });
  }
  for (auto& t : ts) t.join();
  double dt = now() - t0;
  printf("%-12s threads=%d thp=%d %.3f s  %.2f GB/s%s\n", name, threads, thp, dt, bytes / dt / 1e9,
         bad ? " (madvise failed)" : "");
  fflush(stdout);
  // kept mapped: the next run must meet memory the VM has not backed yet
}

int main(int argc, char** argv) {
  size_t bytes = (size_t)(argc > 1 ? atoi(argv[1]) : 3) << 30;
  for (int th : {1, 2, 4, 8}) run("touch", bytes, th, true, false);
  for (int th : {1, 4}) run("touch-nothp", bytes, th, false, false);
  for (int th : {1, 4}) run("madv-pop", bytes, th, true, true);
  return 0;
}
