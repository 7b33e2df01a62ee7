// Issue 24: the GPU timeline table (schema 10): events appended in batches, read back by
// window, owner and job in the order they were recorded, paged, and bounded by retention.
#include <doctest/doctest.h>

#include <vector>

#include "store/job_store.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace gshare::unit_timeline_store {
namespace {

TimelineEvent Event(int64_t time_us, TimelineKind kind, int64_t job, uint32_t uid) {
  TimelineEvent e;
  e.time_us = time_us;
  e.kind = kind;
  e.gpu = "GPU-0";
  e.job = job;
  e.uid = uid;
  e.pid = 4000 + static_cast<int>(job);
  return e;
}

std::vector<TimelineEvent> Read(JobStore* store, TimelineFilter filter,
                                int64_t* next_after = nullptr) {
  std::vector<TimelineEvent> out;
  Status st = store->ForEachTimelineEvent(
      filter, [&out](const TimelineEvent& e) { out.push_back(e); }, next_after);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return out;
}

std::vector<int64_t> Times(const std::vector<TimelineEvent>& events) {
  std::vector<int64_t> t;
  for (const TimelineEvent& e : events) t.push_back(e.time_us);
  return t;
}

TEST_CASE("Issue 24: timeline events come back as recorded, with the job's name") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.File("jobs.db"));
  CHECK(JobStore::SchemaVersion() >= 10);
  JobRecord r;
  r.name = "train";
  r.uid = 1000;
  r.submit_time = 1;
  Result<int64_t> id = store->Insert(r);
  REQUIRE(id.ok());

  TimelineEvent grant = Event(1'000'000, TimelineKind::kGrant, id.value(), 1000);
  grant.detail = "exclusive";
  TimelineEvent swap = Event(1'500'000, TimelineKind::kSwapIn, id.value(), 1000);
  swap.bytes = 5ull << 30;  // past 32 bits
  swap.ms = 12.5;
  TimelineEvent gone = Event(2'000'000, TimelineKind::kRelease, 99, 1000);  // no such job now
  gone.detail = "idle";
  REQUIRE(store->AppendTimeline({grant, swap, gone}).ok());
  REQUIRE(store->AppendTimeline({}).ok());

  std::vector<TimelineEvent> all = Read(store.get(), TimelineFilter{});
  REQUIRE(all.size() == 3);
  CHECK(all[0].id < all[1].id);
  CHECK(all[0].kind == TimelineKind::kGrant);
  CHECK(all[0].detail == "exclusive");
  CHECK(all[0].job_name == "train");
  CHECK(all[0].gpu == "GPU-0");
  CHECK(all[0].pid == 4000 + id.value());
  CHECK(all[1].bytes == (5ull << 30));
  CHECK(all[1].ms == 12.5);
  CHECK(all[2].job_name.empty());
  CHECK(all[2].detail == "idle");
}

TEST_CASE("Issue 24: a timeline read selects by window, owner and job, page by page") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.File("jobs.db"));
  std::vector<TimelineEvent> batch;
  for (int i = 0; i < 10; ++i) {
    batch.push_back(Event(i * 100, TimelineKind::kGrant, i % 2 == 0 ? 1 : 2, i % 2 == 0 ? 10 : 20));
  }
  batch.push_back(Event(1000, TimelineKind::kDaemonStart, 0, 0));
  REQUIRE(store->AppendTimeline(batch).ok());

  TimelineFilter window;
  window.since_us = 200;
  window.until_us = 500;
  CHECK(Times(Read(store.get(), window)) == std::vector<int64_t>{200, 300, 400, 500});

  TimelineFilter mine;
  mine.uid = 20;  // job 2's owner, and the daemon's own events
  CHECK(Times(Read(store.get(), mine)) == std::vector<int64_t>{100, 300, 500, 700, 900, 1000});

  TimelineFilter job;
  job.jobs = {1};
  CHECK(Times(Read(store.get(), job)) == std::vector<int64_t>{0, 200, 400, 600, 800});

  // Pages of 4: each ends where the next begins, and the last says there is no next.
  TimelineFilter page;
  page.max_rows = 4;
  std::vector<int64_t> seen;
  int pages = 0;
  for (;;) {
    int64_t next = 0;
    for (int64_t t : Times(Read(store.get(), page, &next))) seen.push_back(t);
    ++pages;
    if (next == 0) break;
    page.after_id = next;
  }
  CHECK(pages == 3);
  CHECK(seen.size() == 11);
}

TEST_CASE("Issue 24: timeline retention removes events past their age and the row cap") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.File("jobs.db"));
  std::vector<TimelineEvent> batch;
  for (int i = 0; i < 10; ++i) batch.push_back(Event(i * 100, TimelineKind::kGrant, 1, 10));
  REQUIRE(store->AppendTimeline(batch).ok());

  Result<int64_t> removed = store->DeleteTimeline(300, 1'000);  // older than 300 us
  REQUIRE(removed.ok());
  CHECK(removed.value() == 3);
  CHECK(Times(Read(store.get(), TimelineFilter{})).front() == 300);

  removed = store->DeleteTimeline(0, 4);  // the newest 4 stay
  REQUIRE(removed.ok());
  CHECK(removed.value() == 3);
  CHECK(Times(Read(store.get(), TimelineFilter{})) == std::vector<int64_t>{600, 700, 800, 900});

  removed = store->DeleteTimeline(0, 100);  // fewer than the cap: nothing goes
  REQUIRE(removed.ok());
  CHECK(removed.value() == 0);
}

}  // namespace
}  // namespace gshare::unit_timeline_store
