// Beside turns: how many of a GPU's yielding MPS clients run beside its busy higher seats at
// once. Beside a service, every client on the SM partition shares the partition's SMs and the
// GPU's memory system with it: beside eight trainings a ResNet service's median latency was
// 8.9-9.4 ms with every client beside it and 7.4-7.8 ms with one (alone 4.4-8.2 ms), the
// trainings keeping 0-4 points less of their step rate, since one training already fills
// the partition (docs/benchmarks.md, "Beside turns on the H200"). With N turns (default 1),
// only N clients hold one: a holder runs beside a busy higher seat, or queues work on the
// partition in its gap for its next busy period. The others wait for its gaps, as a process
// outside MPS does, and the turns are freed at each of its gaps and taken anew, so that they
// pass around. Header-only; any thread of any process (the board's atomics).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "gshare/priority_board.h"

namespace gshare::shim {

// GSHARE_PRIORITY_BESIDE when unset: one client at a time runs beside.
inline constexpr int kDefaultBesideTurns = 1;

// What GSHARE_PRIORITY_BESIDE's value `text` means: 1..63 turns; 0 (and 64 or more, a turn for
// every seat): no bound, every client runs beside; kDefaultBesideTurns for nullptr, an empty
// string and anything that is not a whole number >= 0 (ignored). Pure.
inline int ParseBesideTurns(const char* text) {
  if (text == nullptr || *text == '\0') return kDefaultBesideTurns;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 0) return kDefaultBesideTurns;
  return v >= static_cast<long>(proto::kBoardSeats) ? 0 : static_cast<int>(v);
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
