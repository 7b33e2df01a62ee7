// Beside turns: how many of a GPU's yielding MPS clients run beside its busy higher seats at
// once. Beside a service, every client on the SM partition shares the GPU's memory system with
// it, which no SM split divides: eight trainings on the partition stretched a ResNet service's
// own kernels 1.36 x alone, where one to three cost it 1.09-1.12 x (docs/benchmarks.md, "a
// mixed batch cap beside eight trainings"). With GSHARE_PRIORITY_BESIDE = N, only N clients
// hold a turn: one runs beside a busy higher seat, or queues work on the partition in its gap
// for its next busy period. The others wait for its gaps, as a process outside MPS does, and
// the turns are freed at each of its gaps and taken anew, so that they pass around.
// Header-only; any thread of any process (the board's atomics).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "gshare/priority_board.h"

namespace gshare::shim {

// GSHARE_PRIORITY_BESIDE when unset: every client runs beside (no bound).
inline constexpr int kDefaultBesideTurns = 0;

// What GSHARE_PRIORITY_BESIDE's value `text` means: 1..63 turns; 0, no bound, for nullptr, an
// empty string, 0 and anything that is not a whole number in 1..63 (ignored). Pure.
inline int ParseBesideTurns(const char* text) {
  if (text == nullptr || *text == '\0') return kDefaultBesideTurns;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 1 || v >= static_cast<long>(proto::kBoardSeats)) return 0;
  return static_cast<int>(v);
}

// Whether the seat of `own_bit` holds one of `slot`'s `turns` (> 0) turns, taking a free one if
// it has none: one relaxed load while it holds one, a compare-and-swap loop while fewer than
// `turns` bits are set. False when every turn is held by other seats.
inline bool TakeBesideTurn(proto::BoardSlot& slot, uint64_t own_bit, int turns) {
  uint64_t held = slot.beside_seats.load(std::memory_order_relaxed);
  if ((held & own_bit) != 0) return true;
  while (__builtin_popcountll(held) < turns) {
    if (slot.beside_seats.compare_exchange_weak(held, held | own_bit, std::memory_order_acq_rel,
                                                std::memory_order_relaxed)) {
      return true;
    }
    if ((held & own_bit) != 0) return true;
  }
  return false;
}

// The turns end with the busy period they were taken in: a watched seat going idle frees them
// all (before its busy bit clears, so that the clients it wakes race for them anew).
inline void EndBesideTurns(proto::BoardSlot& slot) {
  slot.beside_seats.store(0, std::memory_order_release);
}

}  // namespace gshare::shim
