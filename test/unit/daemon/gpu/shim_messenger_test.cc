// ShimMessenger: what each message carries and which shim gets it — the GPU named as the shim
// names it after a move, nothing to a closing peer, evictions counted in the ledger, pinning
// asked of an exclusive holder only and only again for a real change, seats and the busy bits
// of processes that are gone; frames captured from the injected Send.
#include "daemon/gpu/shim_messenger.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/gpu_inventory.h"
#include "daemon/board_view.h"
#include "daemon/memory_parts.h"
#include "daemon/table_parts.h"
#include "temp_dir.h"

namespace gshare::unit_shim_messenger {
namespace {

using namespace unit_memory_parts;  // NOLINT: the shared parts of these tests
using unit_board_view::ShimView;

const GpuKey kUuid0 = "GPU-00000000-0000-0000-0000-0000000000aa";
const GpuKey kUuid1 = "GPU-11111111-1111-1111-1111-1111111111bb";

struct MemoryHost : MemoryCoordinator::Host {
  void SendEvictions(const GpuKey&, const MemoryLedger::Plan&) override {}
  uint64_t LastCheckpointSent() const override { return 0; }
};

struct Sent {
  ConnId conn;
  proto::MsgType type;
  proto::LeaseMsg msg;
};

struct Fixture : MemoryParts<MemoryHost> {
  JobTable table;
  PriorityLanes lanes;
  TimelineRecorder timeline{TimelineRecorder::Options{false}, clock,
                            [](JobId) { return uint32_t{0}; }};
  std::vector<Sent> sent;
  ShimMessenger messenger{ShimMessenger::Parts{table, arbiter, ledger, lanes, timeline},
                          [this](ConnId conn, std::string_view frame) {
                            proto::FrameHeader h;
                            std::memcpy(&h, frame.data(), sizeof h);
                            Sent s{conn, static_cast<proto::MsgType>(h.type), {}};
                            REQUIRE(h.length == sizeof s.msg);
                            std::memcpy(&s.msg, frame.data() + sizeof h, sizeof s.msg);
                            sent.push_back(s);
                            return true;
                          }};

  Fixture() {
    proto::GpuUuid u{};
    REQUIRE(ParseGpuUuid(kUuid0, u.bytes));
    REQUIRE(table.NoteGpu(kGpu, u, 0));  // the ledger's "GPU-0", named by kUuid0's bytes
  }
  // Job j's shim: connection j * 10 + 1, pid `pid`.
  Connection& Shim(JobId j, pid_t pid) {
    AddJob(j, 0);
    return unit_table_parts::AddConn(table, j * 10 + 1, j, Connection::Kind::kShim, pid);
  }
};

TEST_CASE("a message names the GPU as its shim does, and none goes to a closing peer") {
  Fixture f;
  Connection& c = f.Shim(1, 100);
  REQUIRE(f.messenger.SendLeaseMsg(11, proto::MsgType::kSwapStage, kGpu, 3, 4096));
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].type == proto::MsgType::kSwapStage);
  CHECK(FormatGpuUuid(f.sent[0].msg.gpu) == kUuid0);
  CHECK(f.sent[0].msg.epoch == 3);
  CHECK(f.sent[0].msg.bytes == 4096);

  f.table.NoteMovedTo(kUuid1);  // moved: the shim still names its old GPU
  c.moved[kGpu] = kUuid1;
  f.messenger.SendStretch(11, kUuid1, Millis(40));
  REQUIRE(f.sent.size() == 2);
  CHECK(f.sent[1].type == proto::MsgType::kStretchGap);
  CHECK(FormatGpuUuid(f.sent[1].msg.gpu) == kUuid0);
  CHECK(f.sent[1].msg.bytes == 40);

  c.closing = true;
  CHECK_FALSE(f.messenger.SendGapWatch(11, kUuid1, true));
  f.messenger.SendStage(11, kUuid1, 1);
  CHECK(f.sent.size() == 2);
}

TEST_CASE("an eviction is sent and counted in the ledger until the victim reports") {
  Fixture f;
  f.Shim(1, 100);
  f.Report(1, 40, 40);
  f.messenger.Evict(11, kGpu, 10 * kGiB);
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].type == proto::MsgType::kEvict);
  CHECK(f.sent[0].msg.bytes == 10 * kGiB);
  CHECK(f.ledger.Totals(1).resident == 30 * kGiB);  // counted as gone already
}

TEST_CASE("only an exclusive holder pins ahead, asked again only when it grew by 256 MiB") {
  Fixture f;
  f.Shim(1, 100);
  f.Shim(2, 200);
  f.Report(1, 40, 40, 0);
  f.Report(2, 60, 30, 0);  // its next turn needs 20 GiB of job 1's
  f.arbiter.Request(11, kGpu, f.clock.Now());
  REQUIRE(f.arbiter.Holder(kGpu) == JobId{1});
  const uint64_t pool = f.ledger.PoolToPin(1, kGpu);
  REQUIRE(pool > 0);
  f.messenger.AskHolderToPin(kGpu);
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].conn == 11);
  CHECK(f.sent[0].type == proto::MsgType::kSwapPrepare);
  CHECK(f.sent[0].msg.bytes == pool);
  f.messenger.AskHolderToPin(kGpu);
  CHECK(f.sent.size() == 1);

  f.arbiter.SetShared(kGpu, true, f.clock.Now());
  f.table.conns.at(11)->prepared.clear();
  f.messenger.AskHolderToPin(kGpu);
  CHECK(f.sent.size() == 1);  // shared: nobody is evicted at a handoff
}

TEST_CASE("seats go to their shims; a gone process's busy bit is cleared at the next check") {
  TempDir dir;
  Fixture f;
  REQUIRE(f.lanes.Open(dir.path() + "/board").ok());
  ShimView shim(dir.path() + "/board");
  f.Shim(1, getpid());
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  REQUIRE(gone > 0);
  REQUIRE(waitpid(gone, nullptr, 0) == gone);
  f.Shim(2, gone);
  f.lanes.Sit(kGpu, 11, 0);
  f.lanes.Sit(kGpu, 21, 10);
  f.messenger.SendSeats();
  REQUIRE(f.sent.size() == 2);
  uint64_t slot = 0, bits = 0;
  for (const Sent& s : f.sent) {
    CHECK(s.type == proto::MsgType::kBoardSeat);
    CHECK(FormatGpuUuid(s.msg.gpu) == kUuid0);
    CHECK(s.msg.reason != 0);  // a seat
    slot = s.msg.epoch;
    bits |= uint64_t{1} << (s.msg.reason - 1);
  }
  shim.board[slot].busy.fetch_or(bits);  // both shims submit
  CHECK_FALSE(f.messenger.NextLanesCheck() == std::nullopt);
  f.messenger.QuietStoppedSeats(f.clock.Now());
  CHECK(f.lanes.BusyConns() == std::vector<ConnId>{11});  // this process runs
  f.lanes.Quiet(11);
  CHECK(f.messenger.NextLanesCheck() == std::nullopt);
}

}  // namespace
}  // namespace gshare::unit_shim_messenger
