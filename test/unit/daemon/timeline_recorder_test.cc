// TimelineRecorder: lease holders become grant and release events per GPU and job, and the
// events reach the store in batches, not one commit each.
#include "daemon/timeline_recorder.h"

#include <doctest/doctest.h>

#include <set>
#include <utility>
#include <vector>

#include "temp_dir.h"

namespace gshare::unit_timeline_recorder {
namespace {

const TimePoint t0{};
TimePoint At(int ms) { return t0 + Millis(ms); }
uint32_t Owner(JobId job) { return static_cast<uint32_t>(1000 + job); }

std::vector<TimelineEvent> Stored(JobStore* store) {
  std::vector<TimelineEvent> out;
  REQUIRE(store
              ->ForEachTimelineEvent(TimelineFilter{},
                                     [&out](const TimelineEvent& e) { out.push_back(e); })
              .ok());
  return out;
}

std::unique_ptr<JobStore> OpenOrDie(const std::string& path) {
  Result<std::unique_ptr<JobStore>> store = JobStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().message());
  return std::move(store.value());
}

TEST_CASE("TimelineRecorder turns lease holders into grants and releases with their reasons") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.File("jobs.db"));
  TimelineRecorder rec(TimelineRecorder::Options{});
  rec.Granting("GPU-0", 1, 111);
  rec.Holding("GPU-0", {1}, "exclusive", Owner, 10, At(0));
  rec.Holding("GPU-0", {1}, "exclusive", Owner, 20, At(1));  // no change: nothing
  // Job 1 hands the GPU to job 2: the release first, then the grant.
  rec.Releasing("GPU-0", 1, "dropped");
  rec.Granting("GPU-0", 2, 222);
  rec.Holding("GPU-0", {2}, "exclusive", Owner, 30, At(2));
  // Gone without a word: reclaimed. A reason told for another change does not linger.
  rec.Releasing("GPU-0", 2, "idle");
  rec.Holding("GPU-0", {2}, "exclusive", Owner, 35, At(3));
  rec.Holding("GPU-0", {}, "exclusive", Owner, 40, At(4));
  REQUIRE(rec.Flush(*store).ok());
  CHECK(rec.buffered() == 0);

  std::vector<TimelineEvent> e = Stored(store.get());
  REQUIRE(e.size() == 4);
  CHECK(e[0].kind == TimelineKind::kGrant);
  CHECK((e[0].job == 1 && e[0].pid == 111 && e[0].uid == 1001 && e[0].time_us == 10));
  CHECK(e[0].detail == "exclusive");
  CHECK(e[1].kind == TimelineKind::kRelease);
  CHECK((e[1].job == 1 && e[1].detail == "dropped" && e[1].time_us == 30));
  CHECK(e[2].kind == TimelineKind::kGrant);
  CHECK((e[2].job == 2 && e[2].pid == 222));
  CHECK(e[3].kind == TimelineKind::kRelease);
  CHECK((e[3].job == 2 && e[3].detail == "reclaimed" && e[3].pid == 222));
}

TEST_CASE("TimelineRecorder keeps GPUs apart, holds of several jobs, and ends all at stop") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.File("jobs.db"));
  TimelineRecorder rec(TimelineRecorder::Options{});
  rec.Holding("GPU-0", {1, 2}, "shared", Owner, 10, At(0));
  rec.Holding("GPU-1", {1}, "exclusive", Owner, 11, At(0));
  rec.Holding("GPU-0", {2}, "shared", Owner, 12, At(0));  // GPU-1 untouched
  rec.EndAll("daemon stopped", 20, At(1));
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
  TimelineRecorder rec(o);
  CHECK_FALSE(rec.NextFlush().has_value());
  CHECK_FALSE(rec.Due(At(10'000)));
  rec.Record(TimelineEvent{}, At(100));
  REQUIRE(rec.NextFlush().has_value());
  CHECK(*rec.NextFlush() == At(350));
  CHECK_FALSE(rec.Due(At(349)));
  CHECK(rec.Due(At(350)));
  rec.Record(TimelineEvent{}, At(120));
  CHECK_FALSE(rec.Due(At(200)));
  rec.Record(TimelineEvent{}, At(130));
  CHECK(rec.Due(At(200)));  // three wait: written at once

  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.File("jobs.db"));
  REQUIRE(rec.Flush(*store).ok());
  CHECK(Stored(store.get()).size() == 3);
  CHECK_FALSE(rec.NextFlush().has_value());
}

TEST_CASE("TimelineRecorder records nothing when recording is off") {
  TimelineRecorder::Options o;
  o.enabled = false;
  TimelineRecorder rec(o);
  rec.Record(TimelineEvent{}, At(0));
  rec.Holding("GPU-0", {1}, "exclusive", Owner, 10, At(0));
  CHECK(rec.buffered() == 0);
  CHECK_FALSE(rec.NextFlush().has_value());
}

}  // namespace
}  // namespace gshare::unit_timeline_recorder
