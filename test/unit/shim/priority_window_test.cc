// The priority window's pure parts: the learnt cost of a submission by shape, the watched
// job's gap forecast and its publication on the board, the admission rule and the turns to
// run beside a busy higher job.
#include <doctest/doctest.h>

#include "lease/beside_turns.h"
#include "lease/kernel_costs.h"
#include "lease/priority_window.h"
#include "lease/quiet_forecast.h"

namespace gshare::shim::unit_priority_window {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST_CASE("KernelCosts: unknown shapes cost nothing known; samples are kept per shape") {
  KernelCosts c;
  CHECK(c.Predict(42) == 0);
  CHECK(c.MeanNs() == 0);
  c.Sample(42, 3 * kMs);
  c.Sample(7, 100'000);
  CHECK(c.Predict(42) == 3 * kMs);
  CHECK(c.Predict(7) == 100'000);
  CHECK(c.Predict(8) == 0);
  CHECK(c.MeanNs() > 100'000);
  CHECK(c.MeanNs() < 3 * kMs);
  c.Sample(0, 5 * kMs);  // key 0 is a key like any other
  CHECK(c.Predict(0) == 5 * kMs);
}

TEST_CASE("KernelCosts: the estimate follows low samples fast and high ones slowly") {
  KernelCosts c;
  c.Sample(1, 8 * kMs);  // inflated: time-sliced with another context
  c.Sample(1, 2 * kMs);
  CHECK(c.Predict(1) == 5 * kMs);  // halfway down
  c.Sample(1, 2 * kMs);
  c.Sample(1, 2 * kMs);
  CHECK(c.Predict(1) < 3 * kMs);
  const int64_t before = c.Predict(1);
  c.Sample(1, 100 * kMs);  // one outlier: capped at 4x, an eighth of the way
  CHECK(c.Predict(1) <= before + (4 * before - before) / 8);
  CHECK(c.Predict(1) > before);
  c.Sample(1, 0);  // ignored
  c.Sample(1, -5);
  CHECK(c.Predict(1) > 0);
}

TEST_CASE("KernelCosts: a full table replaces the least recently written shape") {
  KernelCosts c;
  // Far more shapes than slots: every lookup stays bounded and recent shapes are known.
  for (uint64_t k = 1; k <= 5000; ++k) c.Sample(k * 7919, static_cast<int64_t>(k));
  CHECK(c.Predict(5000 * 7919) == 5000);
  CHECK(c.Predict(4999 * 7919) == 4999);
  int known = 0;
  for (uint64_t k = 1; k <= 5000; ++k) known += c.Predict(k * 7919) != 0;
  CHECK(known <= KernelCosts::kSlots);
  CHECK(known > KernelCosts::kSlots / 2);
}

TEST_CASE("QuietForecast: the second shortest of the recent gaps, after four, at most the last") {
  QuietForecast f;
  f.GapEnded(6 * kMs);
  f.GapEnded(7 * kMs);
  f.GapEnded(5 * kMs);
  CHECK(f.PredictNs() == 0);  // three are not enough
  f.GapEnded(1 * kMs);        // the job came back sooner (its requests queued): capped
  CHECK(f.PredictNs() == 1 * kMs);
  f.GapEnded(6 * kMs);  // a usual gap again: the short one is an outlier
  CHECK(f.PredictNs() == 5 * kMs);
  f.GapEnded(2 * kMs);
  CHECK(f.PredictNs() == 2 * kMs);
  f.GapEnded(6 * kMs);  // two short gaps among the last 16: the second shortest
  CHECK(f.PredictNs() == 2 * kMs);
  // Old gaps leave the history.
  for (int i = 0; i < QuietForecast::kHistory; ++i) f.GapEnded(9 * kMs);
  CHECK(f.PredictNs() == 9 * kMs);
  f.GapEnded(0);  // not a gap
  CHECK(f.PredictNs() == 9 * kMs);
  f.Reset();
  CHECK(f.PredictNs() == 0);
}

TEST_CASE("QuietForecast: the last gaps newest first, zeros where fewer were seen") {
  QuietForecast f;
  int64_t g[4] = {-1, -1, -1, -1};
  f.LastGaps(g, 4);
  CHECK((g[0] == 0 && g[3] == 0));
  f.GapEnded(3 * kMs);
  f.GapEnded(4 * kMs);
  f.LastGaps(g, 4);
  CHECK((g[0] == 4 * kMs && g[1] == 3 * kMs && g[2] == 0 && g[3] == 0));
  for (int i = 0; i < QuietForecast::kHistory + 1; ++i) f.GapEnded((10 + i) * kMs);
  f.LastGaps(g, 4);  // across the ring's wrap
  const int64_t newest = (10 + QuietForecast::kHistory) * kMs;
  CHECK((g[0] == newest && g[1] == newest - kMs && g[2] == newest - 2 * kMs &&
         g[3] == newest - 3 * kMs));
}

TEST_CASE("PublishQuiet: the earliest expected return of the seats still ahead counts") {
  proto::BoardSlot slot{};
  CHECK_FALSE(ReadQuiet(slot).Known());
  PublishQuiet(slot, 100 * kMs, 10 * kMs);
  CHECK(ReadQuiet(slot).until_ns == 110 * kMs);
  CHECK(ReadQuiet(slot).gap_ns == 10 * kMs);
  PublishQuiet(slot, 101 * kMs, 30 * kMs);  // another seat, back later: the first counts
  CHECK(ReadQuiet(slot).until_ns == 110 * kMs);
  PublishQuiet(slot, 102 * kMs, 5 * kMs);  // back sooner
  CHECK(ReadQuiet(slot).until_ns == 107 * kMs);
  PublishQuiet(slot, 200 * kMs, 8 * kMs);  // the old spell is past
  CHECK(ReadQuiet(slot).until_ns == 208 * kMs);
  PublishQuiet(slot, 300 * kMs, 0);  // no forecast: nothing published
  CHECK(ReadQuiet(slot).until_ns == 208 * kMs);
  QuietSpell q = ReadQuiet(slot);
  CHECK_FALSE(q.Overdue(215 * kMs));
  CHECK(q.Overdue(217 * kMs));
}

WindowView View(int64_t queued, int outstanding, int64_t cost, int64_t now, int64_t until,
                int64_t gap, bool waited = false) {
  WindowView v;
  v.queued_ns = queued;
  v.outstanding = outstanding;
  v.cost_ns = cost;
  v.budget_ns = kMs / 2;
  v.now_ns = now;
  v.quiet_until_ns = until;
  v.quiet_gap_ns = gap;
  v.waited_gap_start = waited;
  return v;
}

TEST_CASE("AdmitRule: without a forecast, queued GPU time stays within the budget") {
  CHECK(AdmitRule(View(0, 0, 100'000, 0, 0, 0)) == WindowVerdict::kSubmit);
  CHECK(AdmitRule(View(400'000, 4, 100'000, 0, 0, 0)) == WindowVerdict::kSubmit);
  CHECK(AdmitRule(View(450'000, 4, 100'000, 0, 0, 0)) == WindowVerdict::kWaitOldest);
  // One submission longer than the budget goes alone, when nothing else is queued.
  CHECK(AdmitRule(View(100'000, 1, 3 * kMs, 0, 0, 0)) == WindowVerdict::kWaitOldest);
  CHECK(AdmitRule(View(0, 0, 3 * kMs, 0, 0, 0)) == WindowVerdict::kSubmit);
}

TEST_CASE("AdmitRule: the rest of the higher job's gap admits longer work") {
  const int64_t now = 1000 * kMs;
  // 6 ms left of the gap: a 3 ms GEMM behind 2 ms of queued work fits.
  CHECK(AdmitRule(View(2 * kMs, 5, 3 * kMs, now, now + 6 * kMs, 6 * kMs)) ==
        WindowVerdict::kSubmit);
  // 4 ms left: it waits for the queued work first.
  CHECK(AdmitRule(View(2 * kMs, 5, 3 * kMs, now, now + 4 * kMs, 6 * kMs)) ==
        WindowVerdict::kWaitOldest);
  // 2 ms left, nothing queued: it waits for the start of the next gap.
  CHECK(AdmitRule(View(0, 0, 3 * kMs, now, now + 2 * kMs, 6 * kMs)) ==
        WindowVerdict::kWaitGapStart);
  // Late already (past the forecast, less than a gap): still waits.
  CHECK(AdmitRule(View(0, 0, 3 * kMs, now, now - 2 * kMs, 6 * kMs)) ==
        WindowVerdict::kWaitGapStart);
  // Once it waited for a gap's start it takes that gap's turn (one long submission per gap
  // among the yielding processes), even when it does not fit a whole gap.
  CHECK(AdmitRule(View(0, 0, 9 * kMs, now, now + 6 * kMs, 6 * kMs, true)) ==
        WindowVerdict::kTakeGapTurn);
  // Overdue by more than a gap, it goes without a turn.
  CHECK(AdmitRule(View(0, 0, 9 * kMs, now, now - 7 * kMs, 6 * kMs, true)) ==
        WindowVerdict::kSubmit);
  // Overdue by more than a gap: the forecast no longer holds.
  CHECK(AdmitRule(View(0, 0, 3 * kMs, now, now - 7 * kMs, 6 * kMs)) == WindowVerdict::kSubmit);
  // Three yielding processes share the rest of the gap as they share the budget: together
  // their queued work ends by the higher job's return.
  WindowView three = View(0, 0, 3 * kMs, now, now + 6 * kMs, 6 * kMs);
  three.sharers = 3;
  CHECK(AdmitRule(three) == WindowVerdict::kWaitGapStart);
  three.cost_ns = 2 * kMs;
  CHECK(AdmitRule(three) == WindowVerdict::kSubmit);
  // Several yielding processes fill only part of the rest by default (time-sliced, their work
  // ran late): with half of 6 ms among three, a 2 ms kernel waits for a gap's start.
  CHECK(DefaultGapFillPct(1) == 100);
  CHECK(DefaultGapFillPct(1, /*narrow=*/true) == 0);  // a partition: the gap stays narrow
  three.gap_fill_pct = DefaultGapFillPct(3);
  CHECK(AdmitRule(three) == WindowVerdict::kWaitGapStart);
  three.cost_ns = 1 * kMs;
  CHECK(AdmitRule(three) == WindowVerdict::kSubmit);
  three.gap_fill_pct = 0;  // GSHARE_PRIORITY_GAP_FILL=0: the budget only
  CHECK(AdmitRule(three) == WindowVerdict::kWaitGapStart);
  three.gap_fill_pct = 100;
  three.cost_ns = 2 * kMs;
  // Another process's long submission took this gap's turn: the rest of the gap is its, the
  // others keep to the budget.
  three.gap_turn_taken = true;
  CHECK(AdmitRule(three) == WindowVerdict::kWaitGapStart);
  three.cost_ns = 100'000;
  CHECK(AdmitRule(three) == WindowVerdict::kSubmit);
  three.queued_ns = 450'000;
  three.outstanding = 1;
  CHECK(AdmitRule(three) == WindowVerdict::kWaitOldest);
  // Short work within the budget goes near the gap's end too.
  CHECK(AdmitRule(View(0, 0, 100'000, now, now + 50'000, 6 * kMs)) == WindowVerdict::kSubmit);
}

TEST_CASE("AdmitRule: an MPS client is bounded only while the higher job is busy, never stopped") {
  WindowView v;
  v.concurrent = true;
  v.budget_ns = 150'000;
  v.queued_ns = 40 * kMs;  // far past the lanes' budget: a stopped lane would wait
  v.outstanding = 20;
  v.cost_ns = 3 * kMs;
  v.now_ns = 100 * kMs;
  v.quiet_until_ns = 110 * kMs;  // a forecast gap would make a time-sliced lane wait too
  v.quiet_gap_ns = 20 * kMs;
  v.higher_busy = false;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmit);  // the higher job idle: no bound
  v.higher_busy = true;
  v.concurrent_budget_ns = 0;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmit);  // 0: client priority alone orders them
  v.concurrent_budget_ns = 1 * kMs;
  CHECK(AdmitRule(v) == WindowVerdict::kWaitOldest);  // busy: past the bound waits for the oldest
  v.queued_ns = 0;
  v.outstanding = 0;
  CHECK(AdmitRule(v) ==
        WindowVerdict::kSubmit);  // alone longer than the bound: goes, never starves
  v.cost_ns = 500'000;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmit);
  v.queued_ns = 600'000;
  v.outstanding = 1;
  CHECK(AdmitRule(v) == WindowVerdict::kWaitOldest);
  // The same view outside MPS keeps the lanes' rule: past the budget (no gap forecast), wait
  // for the oldest.
  v.concurrent = false;
  v.quiet_until_ns = v.quiet_gap_ns = 0;
  CHECK(AdmitRule(v) == WindowVerdict::kWaitOldest);
}

TEST_CASE("AdmitRule: an MPS client with an SM partition goes narrow beside the busy higher job") {
  WindowView v;
  v.concurrent = true;
  v.can_narrow = true;
  v.budget_ns = 150'000;
  v.concurrent_budget_ns = 1 * kMs;
  v.queued_ns = 40 * kMs;  // far past every bound: a windowed client would wait
  v.outstanding = 20;
  v.cost_ns = 3 * kMs;
  v.now_ns = 100 * kMs;
  v.higher_busy = true;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmitNarrow);  // busy: part of the SMs, never waits
  v.queued_ns = 0;
  v.outstanding = 0;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmitNarrow);  // however little is queued

  // Idle with a forecast: every SM while the queued work ends by its return.
  v.higher_busy = false;
  v.quiet_until_ns = 110 * kMs;  // back in 10 ms
  v.quiet_gap_ns = 12 * kMs;
  v.gap_fill_pct = 100;
  v.sharers = 1;
  v.queued_ns = 6 * kMs;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmit);  // 6 + 3 <= 10
  v.queued_ns = 8 * kMs;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmitNarrow);  // 8 + 3 > 10: would run into its return
  v.sharers = 2;
  v.gap_fill_pct = 50;  // two clients fill half the rest together: 2.5 ms each
  v.queued_ns = 0;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmitNarrow);
  v.cost_ns = 2 * kMs;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmit);
  // Late but not overdue: its return is any moment, nothing more on every SM.
  v.now_ns = 115 * kMs;
  v.cost_ns = 1;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmitNarrow);
  // Overdue by more than a gap, or no forecast: every SM, within kWideIdleNs queued there.
  v.now_ns = 123 * kMs;
  v.queued_ns = 1 * kMs;
  v.cost_ns = 500'000;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmit);
  v.queued_ns = 40 * kMs;  // a run-ahead the higher job's return would find queued
  v.outstanding = 5;
  CHECK(AdmitRule(v) == WindowVerdict::kWaitOldest);
  v.now_ns = 100 * kMs;
  v.quiet_until_ns = v.quiet_gap_ns = 0;
  CHECK(AdmitRule(v) == WindowVerdict::kWaitOldest);
  v.queued_ns = 0;
  v.outstanding = 0;
  v.cost_ns = 3 * kWideIdleNs;  // alone longer than the bound: goes, never starves
  CHECK(AdmitRule(v) == WindowVerdict::kSubmit);
  // The clients of a GPU share the bound: eight queue an eighth each, not eight times it.
  v.sharers = 1;
  v.gap_fill_pct = 100;
  v.outstanding = 1;
  v.queued_ns = kWideIdleNs / 2;
  v.cost_ns = kWideIdleNs / 4;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmit);
  v.sharers = 8;
  CHECK(AdmitRule(v) == WindowVerdict::kWaitOldest);
  v.queued_ns = kWideIdleNs / 16;
  v.cost_ns = kWideIdleNs / 16;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmit);

  // A submission the partition cannot take (a copy, a graph, a cooperative launch, or a
  // device without one) keeps the windowed rule: busy and past the bound, it waits.
  v.can_narrow = false;
  v.higher_busy = true;
  v.queued_ns = 40 * kMs;
  v.outstanding = 20;
  CHECK(AdmitRule(v) == WindowVerdict::kWaitOldest);
  // Outside MPS a partition is never chosen (time-sliced, the lanes' gaps order them).
  v.can_narrow = true;
  v.concurrent = false;
  CHECK(AdmitRule(v) != WindowVerdict::kSubmitNarrow);
}

TEST_CASE("AdmitRule: without a turn to run beside, a client queues nothing for the busy period") {
  WindowView v;
  v.concurrent = true;
  v.can_narrow = true;
  v.beside_turn = false;  // GSHARE_PRIORITY_BESIDE's turns held by others
  v.budget_ns = 150'000;
  v.cost_ns = 3 * kMs;
  v.now_ns = 100 * kMs;
  v.quiet_until_ns = 110 * kMs;  // idle, back in 10 ms
  v.quiet_gap_ns = 12 * kMs;
  v.gap_fill_pct = 100;
  v.queued_ns = 6 * kMs;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmit);  // what ends by its return still goes
  v.queued_ns = 8 * kMs;
  v.outstanding = 2;
  CHECK(AdmitRule(v) == WindowVerdict::kWaitOldest);  // a turn-holder would go narrow
  v.outstanding = 0;
  v.queued_ns = 0;
  v.cost_ns = 20 * kMs;
  CHECK(AdmitRule(v) == WindowVerdict::kWaitGapStart);
  v.waited_gap_start = true;
  CHECK(AdmitRule(v) == WindowVerdict::kTakeGapTurn);
  v.beside_turn = true;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmitNarrow);
  // Overdue (a long idle): as every client, on every SM within kWideIdleNs.
  v.beside_turn = false;
  v.now_ns = 123 * kMs;
  v.cost_ns = 500'000;
  CHECK(AdmitRule(v) == WindowVerdict::kSubmit);
}

TEST_CASE("beside turns: at most N seats hold one; they end together, then pass on") {
  proto::BoardSlot slot{};
  const uint64_t a = 1u << 3, b = 1u << 5, c = 1u << 9;
  CHECK(TakeBesideTurn(slot, a, 2));
  CHECK(TakeBesideTurn(slot, a, 2));  // held: kept, not taken twice
  CHECK(TakeBesideTurn(slot, b, 2));
  CHECK_FALSE(TakeBesideTurn(slot, c, 2));
  CHECK(slot.beside_seats.load() == (a | b));
  EndBesideTurns(slot);
  CHECK(TakeBesideTurn(slot, c, 2));
  CHECK(TakeBesideTurn(slot, b, 2));
  CHECK_FALSE(TakeBesideTurn(slot, a, 2));
  CHECK(TakeBesideTurn(slot, a, 3));
}

TEST_CASE("beside turns: GSHARE_PRIORITY_BESIDE's values") {
  CHECK(ParseBesideTurns(nullptr) == 1);  // one client beside a busy service by default
  CHECK(ParseBesideTurns("") == 1);
  CHECK(ParseBesideTurns("0") == 0);  // no bound
  CHECK(ParseBesideTurns("1") == 1);
  CHECK(ParseBesideTurns("3") == 3);
  CHECK(ParseBesideTurns("63") == 63);
  CHECK(ParseBesideTurns("64") == 0);  // a turn for every seat bounds nothing
  CHECK(ParseBesideTurns("-2") == 1);  // not a count: the default
  CHECK(ParseBesideTurns("3x") == 1);
  CHECK(ParseBesideTurns("three") == 1);
}

}  // namespace
}  // namespace gshare::shim::unit_priority_window
