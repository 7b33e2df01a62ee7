// Priority seats: each connection's seat on a GPU, the seats it yields to (strictly higher
// priority), whether it is watched (a lower one yields to it), and the changes to send.
#include "policy/priority_seats.h"

#include <doctest/doctest.h>

namespace gshare::unit_priority_seats {
namespace {

const GpuKey kGpu = "GPU-0";
const GpuKey kOther = "GPU-1";

std::optional<PrioritySeats::Change> ChangeOf(const std::vector<PrioritySeats::Change>& changes,
                                              ConnId conn, const GpuKey& gpu) {
  for (const auto& c : changes) {
    if (c.conn == conn && c.gpu == gpu) return c;
  }
  return std::nullopt;
}

TEST_CASE("priority seats: a lower priority yields to every higher seat, and watches none") {
  PrioritySeats seats;
  CHECK(seats.Sit(kGpu, 3, 11, 0));   // batch
  CHECK(seats.Sit(kGpu, 3, 21, 10));  // service
  CHECK(seats.Sit(kGpu, 3, 31, 5));   // medium
  auto low = seats.SeatOf(11, kGpu), high = seats.SeatOf(21, kGpu), mid = seats.SeatOf(31, kGpu);
  REQUIRE((low && high && mid));
  CHECK(low->slot == 3);
  CHECK(low->seat != high->seat);
  const uint64_t hb = uint64_t{1} << high->seat, mb = uint64_t{1} << mid->seat;
  CHECK(low->yield_mask == (hb | mb));
  CHECK_FALSE(low->watched);
  CHECK(mid->yield_mask == hb);
  CHECK(mid->watched);
  CHECK(high->yield_mask == 0);
  CHECK(high->watched);
  // Another GPU is another table: nothing there outranks the batch job.
  CHECK(seats.Sit(kOther, 4, 11, 0));
  CHECK(seats.SeatOf(11, kOther)->yield_mask == 0);
  CHECK_FALSE(seats.SeatOf(11, kOther)->watched);
}

TEST_CASE("priority seats: one priority yields to nobody; sitting twice keeps the seat") {
  PrioritySeats seats;
  seats.Sit(kGpu, 0, 11, 0);
  seats.Sit(kGpu, 0, 12, 0);  // a second process of the job, or a job of the same priority
  int seat = seats.SeatOf(11, kGpu)->seat;
  CHECK(seats.Sit(kGpu, 0, 11, 0));
  CHECK(seats.SeatOf(11, kGpu)->seat == seat);
  CHECK(seats.SeatOf(11, kGpu)->yield_mask == 0);
  CHECK_FALSE(seats.SeatOf(12, kGpu)->watched);
}

TEST_CASE("priority seats: changes are sent once, and when a seat leaves or a priority changes") {
  PrioritySeats seats;
  seats.Sit(kGpu, 0, 11, 0);
  auto first = seats.TakeChanges();
  REQUIRE(first.size() == 1);
  CHECK(first[0].seat->yield_mask == 0);
  CHECK(seats.TakeChanges().empty());  // nothing new

  seats.Sit(kGpu, 0, 21, 10);
  auto c = seats.TakeChanges();
  REQUIRE(ChangeOf(c, 11, kGpu));
  CHECK(ChangeOf(c, 11, kGpu)->seat->yield_mask != 0);
  REQUIRE(ChangeOf(c, 21, kGpu));
  CHECK(ChangeOf(c, 21, kGpu)->seat->watched);

  seats.SetPriority(11, 20);  // set-priority: the batch job now outranks the service
  c = seats.TakeChanges();
  CHECK(ChangeOf(c, 11, kGpu)->seat->yield_mask == 0);
  CHECK(ChangeOf(c, 11, kGpu)->seat->watched);
  CHECK(ChangeOf(c, 21, kGpu)->seat->yield_mask != 0);

  auto freed = seats.Leave(11);
  REQUIRE(freed.size() == 1);
  CHECK(freed[0].slot == 0);
  c = seats.TakeChanges();
  REQUIRE(c.size() == 1);  // the one who left is told nothing
  CHECK(c[0].conn == 21);
  CHECK(c[0].seat->yield_mask == 0);
  CHECK_FALSE(c[0].seat->watched);
  CHECK_FALSE(seats.SeatOf(11, kGpu));
}

TEST_CASE("priority seats: 64 seats per GPU; a freed seat is taken again") {
  PrioritySeats seats;
  for (ConnId c = 1; c <= PrioritySeats::kSeats; ++c) CHECK(seats.Sit(kGpu, 0, c, 0));
  CHECK_FALSE(seats.Sit(kGpu, 0, 1000, 5));
  CHECK_FALSE(seats.SeatOf(1000, kGpu));
  int seat = seats.SeatOf(7, kGpu)->seat;
  seats.Leave(7);
  CHECK(seats.Sit(kGpu, 0, 1000, 5));
  CHECK(seats.SeatOf(1000, kGpu)->seat == seat);
  CHECK(seats.SeatOf(1, kGpu)->yield_mask == uint64_t{1} << seat);
}

}  // namespace
}  // namespace gshare::unit_priority_seats
