// TimelineRecorder: lease holders become grant and release events per GPU and job, the events
// reach the store in batches, not one commit each, and retention keeps the newest.
#include "daemon/state/timeline_recorder.h"

#include <doctest/doctest.h>

#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "daemon/job_records.h"
#include "temp_dir.h"

namespace gshare::unit_timeline_recorder {
namespace {

uint32_t Owner(JobId job) { return static_cast<uint32_t>(1000 + job); }

// A recorder on a manual clock whose wall time starts at 0: an event at `ms` has time_us
// ms * 1000.
struct Recorder {
  explicit Recorder(TimelineRecorder::Options o = {}) : rec(o, clock, Owner) {}
  ManualClock clock{0.0};
  TimelineRecorder rec;
  // Moves the clock to `ms` after its start.
  void At(int ms) {
    clock.Advance(std::chrono::duration_cast<Millis>(Millis(ms) - (clock.Now() - start)));
  }
  const TimePoint start = clock.Now();
};

std::vector<TimelineEvent> Stored(JobStore* store) {
  std::vector<TimelineEvent> out;
  REQUIRE(store
              ->ForEachTimelineEvent(TimelineFilter{},
                                     [&out](const TimelineEvent& e) { out.push_back(e); })
              .ok());
  return out;
}

TEST_CASE("TimelineRecorder turns lease holders into grants and releases with their reasons") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenStoreOrFail(dir.File("jobs.db"));
  Recorder r;
  TimelineRecorder& rec = r.rec;
  rec.Granting("GPU-0", 1, 111);
  r.At(10);
  rec.Holding("GPU-0", {1}, "exclusive");
  r.At(20);
  rec.Holding("GPU-0", {1}, "exclusive");  // no change: nothing
  // Job 1 hands the GPU to job 2: the release first, then the grant.
  rec.Releasing("GPU-0", 1, "dropped");
  rec.Granting("GPU-0", 2, 222);
  r.At(30);
  rec.Holding("GPU-0", {2}, "exclusive");
  // Gone without a word: reclaimed. A reason told for another change does not linger.
  rec.Releasing("GPU-0", 2, "idle");
  r.At(35);
  rec.Holding("GPU-0", {2}, "exclusive");
  r.At(40);
  rec.Holding("GPU-0", {}, "exclusive");
  REQUIRE(rec.Flush(*store).ok());
  CHECK(rec.buffered() == 0);

  std::vector<TimelineEvent> e = Stored(store.get());
  REQUIRE(e.size() == 4);
  CHECK(e[0].kind == TimelineKind::kGrant);
  CHECK((e[0].job == 1 && e[0].pid == 111 && e[0].uid == 1001 && e[0].time_us == 10'000));
  CHECK(e[0].detail == "exclusive");
  CHECK(e[1].kind == TimelineKind::kRelease);
  CHECK((e[1].job == 1 && e[1].detail == "dropped" && e[1].time_us == 30'000));
  CHECK(e[2].kind == TimelineKind::kGrant);
  CHECK((e[2].job == 2 && e[2].pid == 222));
  CHECK(e[3].kind == TimelineKind::kRelease);
  CHECK((e[3].job == 2 && e[3].detail == "reclaimed" && e[3].pid == 222));
}

TEST_CASE("TimelineRecorder turns lease waiters into waits: granted, given up, ended at stop") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenStoreOrFail(dir.File("jobs.db"));
  Recorder r;
  TimelineRecorder& rec = r.rec;
  r.At(10);
  rec.Waiting("GPU-0", {1, 2});
  r.At(20);
  rec.Waiting("GPU-0", {1, 2});  // no change: nothing
  r.At(50);
  rec.Holding("GPU-0", {1}, "exclusive");
  rec.Waiting("GPU-0", {2});  // 1 got it
  r.At(70);
  rec.Waiting("GPU-0", {});  // 2 stopped asking
  rec.Waiting("GPU-1", {3});
  r.At(90);
  rec.EndAll("daemon stopped");
  REQUIRE(rec.Flush(*store).ok());
  std::vector<TimelineEvent> e = Stored(store.get());
  std::vector<std::tuple<TimelineKind, int64_t, std::string, double>> got;
  for (const TimelineEvent& x : e) {
    if (x.kind == TimelineKind::kWait || x.kind == TimelineKind::kWaited)
      got.emplace_back(x.kind, x.job, x.detail, x.ms);
  }
  using K = TimelineKind;
  CHECK(got == std::vector<std::tuple<TimelineKind, int64_t, std::string, double>>{
                   {K::kWait, 1, "", 0},
                   {K::kWait, 2, "", 0},
                   {K::kWaited, 1, "granted", 40},
                   {K::kWaited, 2, "gave up", 60},
                   {K::kWait, 3, "", 0},
                   {K::kWaited, 3, "gave up", 20}});
}

TEST_CASE("TimelineRecorder keeps GPUs apart, holds of several jobs, and ends all at stop") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenStoreOrFail(dir.File("jobs.db"));
  Recorder r;
  TimelineRecorder& rec = r.rec;
  rec.Holding("GPU-0", {1, 2}, "shared");
  rec.Holding("GPU-1", {1}, "exclusive");
  rec.Holding("GPU-0", {2}, "shared");  // GPU-1 untouched
  rec.EndAll("daemon stopped");
  REQUIRE(rec.Flush(*store).ok());
  std::vector<TimelineEvent> e = Stored(store.get());
  REQUIRE(e.size() == 6);
  CHECK((e[2].kind == TimelineKind::kGrant && e[2].gpu == "GPU-1" && e[2].job == 1));
  CHECK((e[3].kind == TimelineKind::kRelease && e[3].gpu == "GPU-0" && e[3].job == 1));
  // At the stop: job 2 on GPU-0 and job 1 on GPU-1.
  std::set<std::pair<GpuKey, int64_t>> stopped;
  for (size_t i = 4; i < e.size(); ++i) {
    CHECK(e[i].kind == TimelineKind::kRelease);
    CHECK(e[i].detail == "daemon stopped");
    stopped.insert({e[i].gpu, e[i].job});
  }
  CHECK(stopped == std::set<std::pair<GpuKey, int64_t>>{{"GPU-0", 2}, {"GPU-1", 1}});
}

TEST_CASE("TimelineRecorder writes in batches: due after flush_after or flush_events") {
  TimelineRecorder::Options o;
  o.flush_after = Millis(250);
  o.flush_events = 3;
  Recorder r(o);
  TimelineRecorder& rec = r.rec;
  CHECK_FALSE(rec.NextFlush().has_value());
  CHECK_FALSE(rec.Due());
  r.At(100);
  rec.Record(TimelineEvent{});
  REQUIRE(rec.NextFlush().has_value());
  CHECK(*rec.NextFlush() == r.start + Millis(350));
  r.At(349);
  CHECK_FALSE(rec.Due());
  r.At(350);
  CHECK(rec.Due());
  // Another batch: three events are written at once, before flush_after.
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenStoreOrFail(dir.File("jobs.db"));
  rec.Tick(*store);
  CHECK(rec.buffered() == 0);
  rec.Record(TimelineEvent{});
  r.At(360);
  rec.Record(TimelineEvent{});
  CHECK_FALSE(rec.Due());
  rec.Tick(*store);
  CHECK(rec.buffered() == 2);  // not due: kept
  rec.Record(TimelineEvent{});
  CHECK(rec.Due());
  REQUIRE(rec.Flush(*store).ok());
  CHECK(Stored(store.get()).size() == 4);
  CHECK_FALSE(rec.NextFlush().has_value());
}

TEST_CASE("TimelineRecorder records nothing when recording is off") {
  TimelineRecorder::Options o;
  o.enabled = false;
  Recorder r(o);
  TimelineRecorder& rec = r.rec;
  rec.Record(TimelineEvent{});
  rec.Note(TimelineKind::kSwapOut, 1, "GPU-0", 100, 1 << 20);
  rec.Holding("GPU-0", {1}, "exclusive");
  CHECK(rec.buffered() == 0);
  CHECK_FALSE(rec.NextFlush().has_value());
}

TEST_CASE("TimelineRecorder notes events with their owner and the arbiter's holds") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenStoreOrFail(dir.File("jobs.db"));
  Recorder r;
  r.At(5);
  r.rec.Note(TimelineKind::kSwapOut, 3, "GPU-0", 300, 1 << 20, 2.5, "why");
  r.rec.Note(TimelineKind::kDaemonStart, 0, "", 1);  // the daemon's own: uid 0
  Arbiter arbiter{Arbiter::Options{}};
  arbiter.AddJob(4, 0, Millis(0), 0);
  arbiter.AddConn(41, 4, 400);
  arbiter.Request(41, "GPU-0", r.clock.Now());
  r.rec.SyncHolds(arbiter, {"GPU-0", "GPU-1"});
  r.rec.Tick(*store, /*force=*/true);
  std::vector<TimelineEvent> e = Stored(store.get());
  REQUIRE(e.size() == 3);
  CHECK((e[0].kind == TimelineKind::kSwapOut && e[0].job == 3 && e[0].uid == 1003));
  CHECK((e[0].pid == 300 && e[0].bytes == 1 << 20 && e[0].ms == 2.5 && e[0].detail == "why"));
  CHECK(e[0].time_us == 5'000);
  CHECK((e[1].kind == TimelineKind::kDaemonStart && e[1].uid == 0));
  CHECK((e[2].kind == TimelineKind::kGrant && e[2].job == 4 && e[2].gpu == "GPU-0"));
  CHECK(e[2].detail == "exclusive");
}

TEST_CASE("TimelineRecorder's retention removes events past the age bound and the newest N") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenStoreOrFail(dir.File("jobs.db"));
  Recorder r;
  for (int i = 1; i <= 5; ++i) {
    r.At(i * 1000);
    r.rec.Note(TimelineKind::kSwapIn, static_cast<JobId>(i), "GPU-0", i);
  }
  r.At(10'000);
  Config::Timeline keep;
  keep.keep = Millis(7'500);  // events before 2.5 s go: jobs 1 and 2
  keep.max_events = 0;
  r.rec.ApplyRetention(*store, keep);  // flushes first: the buffered events count
  std::vector<TimelineEvent> e = Stored(store.get());
  REQUIRE(e.size() == 3);
  CHECK(e[0].job == 3);
  keep.keep = Millis(0);
  keep.max_events = 1;
  r.rec.ApplyRetention(*store, keep);
  e = Stored(store.get());
  REQUIRE(e.size() == 1);
  CHECK(e[0].job == 5);
}

}  // namespace
}  // namespace gshare::unit_timeline_recorder
