// PriorityLanes: the board file (created, mapped, removed), seats and their messages, and the
// busy bits the daemon clears for processes that cannot: closed, checkpointed, stopped.
#include "daemon/gpu/priority_lanes.h"

#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "daemon/board_view.h"
#include "temp_dir.h"

namespace gshare::unit_priority_lanes {
namespace {

const GpuKey kGpu = "GPU-0";

using unit_board_view::ShimView;

const PriorityLanes::Message* Find(const std::vector<PriorityLanes::Message>& ms, ConnId conn) {
  for (const auto& m : ms) {
    if (m.conn == conn) return &m;
  }
  return nullptr;
}

TEST_CASE("priority lanes: the board is the daemon's own file, zeroed, removed at the end") {
  TempDir dir;
  const std::string path = dir.path() + "/gshare.sock.board";
  {
    PriorityLanes lanes;
    REQUIRE(lanes.Open(path).ok());
    CHECK(lanes.on());
    struct stat st {};
    REQUIRE(stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(st.st_size == static_cast<off_t>(proto::kBoardBytes));
    ShimView shim(path);
    CHECK(shim.board[0].busy.load() == 0);
  }
  CHECK(access(path.c_str(), F_OK) != 0);
  PriorityLanes off;
  CHECK_FALSE(off.Open(dir.path() + "/no/such/dir/board").ok());
  off.Sit(kGpu, 11, 0);  // lanes off: nothing seated, nothing sent
  CHECK(off.TakeMessages().empty());
}

TEST_CASE("priority lanes: seats, messages and the bits cleared for a shim") {
  TempDir dir;
  const std::string path = dir.path() + "/board";
  PriorityLanes lanes;
  REQUIRE(lanes.Open(path).ok());
  ShimView shim(path);
  lanes.Sit(kGpu, 11, 0);   // a training
  lanes.Sit(kGpu, 21, 10);  // a service
  auto ms = lanes.TakeMessages();
  const auto* low = Find(ms, 11);
  const auto* high = Find(ms, 21);
  REQUIRE((low && high));
  CHECK(low->slot == high->slot);
  CHECK(low->seat_plus_one != 0);
  const uint64_t high_bit = uint64_t{1} << (high->seat_plus_one - 1);
  CHECK(low->yield_mask == high_bit);
  CHECK(high->watched);
  CHECK(low->yielders == 1);

  proto::BoardSlot& slot = shim.board[high->slot];
  slot.busy.fetch_or(high_bit);  // the service's shim marks itself busy
  CHECK(lanes.BusyConns() == std::vector<ConnId>{21});
  CHECK(lanes.Json(kGpu).size() == 2);
  uint32_t seq = slot.idle_seq.load();
  SUBCASE("checkpointed: cleared, waiters woken") {
    lanes.Quiet(21);
    CHECK(slot.busy.load() == 0);
    CHECK(slot.idle_seq.load() == seq + 1);
  }
  SUBCASE("closed: cleared, and the training told it yields to nobody") {
    lanes.Leave(21);
    CHECK(slot.busy.load() == 0);
    auto after = lanes.TakeMessages();
    REQUIRE(after.size() == 1);
    CHECK(after[0].conn == 11);
    CHECK(after[0].yield_mask == 0);
  }
  CHECK(lanes.BusyConns().empty());
}

}  // namespace
}  // namespace gshare::unit_priority_lanes
