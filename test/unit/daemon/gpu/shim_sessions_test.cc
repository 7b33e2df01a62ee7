// ShimSessions and LeaseOutbox: a shim's hello (the token proves the job; a process of its own
// becomes a job), its lease requests and releases answered with frames, its memory reports and a
// `gshare run`'s memory query, its leaving; the outbox's signals. Against DaemonParts, the
// daemon's own wiring, on a real store in a scratch directory and a manual clock, with the
// frames it sends decoded and its drops recorded.
#include "daemon/gpu/shim_sessions.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/gpu_inventory.h"
#include "base/job_token.h"
#include "daemon/child_processes.h"
#include "daemon/decoded_frame.h"
#include "daemon/job_records.h"
#include "daemon/server/daemon_parts.h"
#include "daemon/table_parts.h"
#include "temp_dir.h"

namespace gshare::unit_shim_sessions {
namespace {

constexpr uint64_t kGiB = 1ull << 30;
const GpuKey kGpu = "GPU-00000000-0000-0000-0000-000000000000";
const uint8_t kToken[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

proto::GpuUuid Uuid(const GpuKey& key) {
  proto::GpuUuid u{};
  REQUIRE(ParseGpuUuid(key, u.bytes));
  return u;
}

template <class Msg>
Frame FrameOf(proto::MsgType type, const Msg& m) {
  return Frame{type, std::string(reinterpret_cast<const char*>(&m), sizeof m)};
}

template <class Msg>
Msg Decode(const Frame& f) {
  Msg m;
  REQUIRE(f.payload.size() == sizeof m);
  std::memcpy(&m, f.payload.data(), sizeof m);
  return m;
}

// DaemonParts on a scratch store, one job at a time on a GPU ([scheduler] sharing = "exclusive":
// jobs whose memory fits would otherwise share it); what it sends is decoded into `sent`, its drops
// are recorded (and mark the connection closing, then Left, as the daemon's Drop does).
struct Fixture {
  TempDir dir;
  DaemonOptions options;
  ManualClock clock;
  std::vector<std::pair<ConnId, Frame>> sent;
  std::map<ConnId, std::string> drops;
  std::vector<ConnId> exempt;
  std::map<ConnId, int> sent_fds;  // the descriptor that went with a connection's frame
  std::unique_ptr<DaemonParts> parts;

  explicit Fixture(Config::Limits limits = {}) {
    options.state_dir = dir.path();
    options.socket_path = dir.path() + "/gshare.sock";
    options.config.scheduler.sharing = "exclusive";
    options.config.limits = limits;
    parts = std::make_unique<DaemonParts>(
        options, clock, OpenStoreOrFail(dir.path() + "/s.db"),
        PeerLinks{[this](ConnId id, std::string_view bytes) {
                    if (parts->table.Live(id) == nullptr) return false;
                    sent.emplace_back(id, unit_decoded_frame::DecodedFrame(bytes));
                    return true;
                  },
                  [this](ConnId id, const std::string& why) {
                    Connection* c = parts->table.Live(id);
                    if (c == nullptr) return;
                    drops[id] = why;
                    c->closing = true;
                    if (c->kind == Connection::Kind::kShim) parts->shims.Left(*c);
                  },
                  [this](ConnId id) { exempt.push_back(id); },
                  [this](ConnId id, std::string_view bytes, int fd) {
                    if (parts->table.Live(id) == nullptr) return false;
                    sent.emplace_back(id, unit_decoded_frame::DecodedFrame(bytes));
                    sent_fds[id] = fd;
                    return true;
                  }});
  }

  // Active job `id` of `uid` whose token is kToken, known to the arbiter.
  ActiveJob& Job(JobId id, uid_t uid) {
    ActiveJob& job = unit_table_parts::AddJob(parts->table, id, uid);
    job.record.token = JobTokenHex(kToken);
    parts->arbiter.AddJob(id, 0, Millis(0), uid);
    return job;
  }
  Connection& Connect(ConnId id, uid_t uid, pid_t pid = 4242) {
    Connection& c = unit_table_parts::AddConn(parts->table, id, 0, Connection::Kind::kUnknown, pid);
    c.uid = uid;
    return c;
  }
  void Hello(Connection& c, uint64_t job, const uint8_t (&token)[16] = kToken) {
    proto::HelloMsg hello{};
    hello.job_id = job;
    hello.pid = c.pid;
    std::memcpy(hello.token, token, sizeof hello.token);
    parts->shims.OnFrame(c, FrameOf(proto::MsgType::kHello, hello));
  }
  void Lease(Connection& c, proto::MsgType type, uint64_t epoch = 0,
             proto::ReleaseReason reason = proto::ReleaseReason::kIdle, const GpuKey& gpu = kGpu) {
    proto::LeaseMsg m{};
    m.gpu = Uuid(gpu);
    m.epoch = epoch;
    m.reason = static_cast<uint32_t>(reason);
    parts->shims.OnFrame(c, FrameOf(type, m));
  }
  void Report(Connection& c, uint64_t allocated, uint64_t swaps_out = 0) {
    proto::MemReportMsg m{};
    m.gpu = Uuid(kGpu);
    m.engine = static_cast<uint32_t>(proto::MemoryEngine::kSwap);
    m.total = 80 * kGiB;
    m.allocated = m.resident = allocated;
    m.swaps_out = swaps_out;
    parts->shims.OnFrame(c, FrameOf(proto::MsgType::kMemReport, m));
  }
  // The lease frames of `type` sent to `conn`, decoded.
  std::vector<proto::LeaseMsg> LeaseFrames(ConnId conn, proto::MsgType type) const {
    std::vector<proto::LeaseMsg> out;
    for (const auto& [id, f] : sent) {
      if (id == conn && f.type == type) out.push_back(Decode<proto::LeaseMsg>(f));
    }
    return out;
  }
  // Shim connection `c` closes (as the daemon's Drop leaves it).
  void Leave(Connection& c) {
    c.closing = true;
    parts->shims.Left(c);
  }
  JobRecord Stored(int64_t id) {
    auto row = parts->store->Get(id);
    REQUIRE(row.ok());
    REQUIRE(row.value());
    return *row.value();
  }
};

TEST_CASE("a hello joins the job whose token it shows, its owner's or root's process only") {
  Fixture fx;
  ActiveJob& job = fx.Job(7, 1000);
  Connection& owner = fx.Connect(1, 1000);
  fx.Hello(owner, 7);
  CHECK(fx.drops.empty());
  CHECK(owner.kind == Connection::Kind::kShim);
  CHECK(owner.job == 7);
  CHECK(job.shims.count(1) == 1);
  CHECK(fx.exempt == std::vector<ConnId>{1});

  Connection& root = fx.Connect(2, 0);
  fx.Hello(root, 7);
  CHECK(root.job == 7);

  const uint8_t wrong[16] = {9};
  fx.Hello(fx.Connect(3, 1000), 7, wrong);
  fx.Hello(fx.Connect(4, 2000), 7);  // another user's process, with the token
  REQUIRE(fx.drops.size() == 2);
  CHECK(fx.drops[3].find("cannot prove it belongs to") != std::string::npos);
  CHECK(fx.drops[4].find("cannot prove it belongs to") != std::string::npos);
  CHECK(job.shims == std::set<ConnId>{1, 2});

  fx.Hello(owner, 7);
  CHECK(fx.drops[1] == "second hello");
}

TEST_CASE("a lease message before the hello drops the connection") {
  Fixture fx;
  Connection& c = fx.Connect(1, 1000);
  fx.Lease(c, proto::MsgType::kLeaseRequest);
  CHECK(fx.drops[1] == "lease message before hello");
  CHECK(fx.sent.empty());
}

TEST_CASE("a process of its own becomes a job, recorded RUNNING, COMPLETED with its last shim") {
  Fixture fx;
  Connection& c = fx.Connect(1, getuid(), getpid());
  fx.Hello(c, 0);
  REQUIRE(c.job != 0);
  const ActiveJob& job = *fx.parts->table.jobs.at(c.job);
  CHECK(job.adhoc);
  JobRecord row = fx.Stored(static_cast<int64_t>(c.job));
  CHECK(row.state == JobState::kRunning);
  CHECK(row.pid == getpid());
  REQUIRE(!row.argv.empty());
  CHECK(row.name == "gshare_unit_tests");

  c.closing = true;
  fx.parts->shims.Left(c);
  CHECK(fx.Stored(static_cast<int64_t>(c.job)).state == JobState::kCompleted);
}

TEST_CASE("a process's connections share one job; a user's processes past the cap join one") {
  Config::Limits limits;
  limits.process_jobs_per_user = 2;
  Fixture fx(limits);
  constexpr uid_t kUser = 1000;
  // 60 connections of one process (this one, so that its start time is read): one job.
  std::set<JobId> jobs;
  for (ConnId id = 1; id <= 60; ++id) {
    Connection& c = fx.Connect(id, kUser, getpid());
    fx.Hello(c, 0);
    jobs.insert(c.job);
  }
  CHECK(fx.drops.empty());
  REQUIRE(jobs.size() == 1);
  const JobId first = *jobs.begin();
  CHECK(fx.parts->table.jobs.size() == 1);
  CHECK(fx.parts->table.jobs.at(first)->shims.size() == 60);

  // The user's other processes (pids with no process here): one more job, then the cap.
  Connection& second = fx.Connect(61, kUser, 999991);
  fx.Hello(second, 0);
  CHECK(second.job != first);
  for (ConnId id = 62; id <= 70; ++id) {
    Connection& c = fx.Connect(id, kUser, static_cast<pid_t>(999930 + id));
    fx.Hello(c, 0);
    CHECK(c.job == second.job);  // the user's newest
  }
  CHECK(fx.parts->table.jobs.size() == 2);
  // Another user's processes, and root's, are not held by this user's cap.
  Connection& other = fx.Connect(71, 2000, 999992);
  fx.Hello(other, 0);
  CHECK(other.job != second.job);
  for (ConnId id = 72; id <= 74; ++id) {
    Connection& c = fx.Connect(id, 0, static_cast<pid_t>(999900 + id));
    fx.Hello(c, 0);
  }
  CHECK(fx.parts->table.jobs.size() == 6);

  // The shared job ends with its last shim; the user's next process makes a job of its own.
  for (ConnId id = 61; id <= 70; ++id) fx.Leave(*fx.parts->table.conns.at(id));
  CHECK(fx.Stored(static_cast<int64_t>(second.job)).state == JobState::kCompleted);
  Connection& next = fx.Connect(75, kUser, 999993);
  fx.Hello(next, 0);
  CHECK(next.job != second.job);
  CHECK(next.job != first);
}

TEST_CASE("a user's shim may name only GPUs of this machine; root's any") {
  Fixture fx;
  const GpuKey made_up = "GPU-deadbeef-dead-beef-dead-beefdeadbeef";
  fx.parts->gpu_uuids = std::vector<std::string>{kGpu};
  fx.Job(7, 1000);
  Connection& a = fx.Connect(1, 1000);
  fx.Hello(a, 7);
  fx.Lease(a, proto::MsgType::kLeaseRequest, 0, proto::ReleaseReason::kIdle, made_up);
  CHECK(fx.drops[1] == "it names a GPU this machine does not have (" + made_up + ")");
  CHECK(fx.parts->table.gpus.empty());
  CHECK(fx.sent.empty());

  Connection& b = fx.Connect(2, 1000);
  fx.Hello(b, 7);
  fx.Lease(b, proto::MsgType::kLeaseRequest);
  CHECK(fx.LeaseFrames(2, proto::MsgType::kLeaseGrant).size() == 1);
  CHECK(fx.parts->table.gpus.size() == 1);

  Connection& root = fx.Connect(3, 0);
  fx.Hello(root, 7);
  fx.Lease(root, proto::MsgType::kLeaseRequest, 0, proto::ReleaseReason::kIdle, made_up);
  CHECK(fx.drops.count(3) == 0);
  CHECK(fx.parts->table.gpus.size() == 2);
}

TEST_CASE("without NVML's list, a user's shims name at most as many new GPUs as there are") {
  Fixture fx;  // gpu_count 1, no list
  fx.Job(7, 1000);
  Connection& a = fx.Connect(1, 1000);
  fx.Hello(a, 7);
  fx.Report(a, kGiB);
  CHECK(fx.parts->table.gpus.size() == 1);
  fx.Lease(a, proto::MsgType::kLeaseRequest, 0, proto::ReleaseReason::kIdle,
           "GPU-deadbeef-dead-beef-dead-beefdeadbeef");
  REQUIRE(fx.drops.count(1) == 1);
  CHECK(fx.drops[1].find("more new GPUs") != std::string::npos);
  CHECK(fx.parts->table.gpus.size() == 1);
  // The GPU already tracked may be named by anyone.
  Connection& b = fx.Connect(2, 2000);
  fx.Hello(b, 0);
  fx.Lease(b, proto::MsgType::kLeaseRequest);
  CHECK(fx.drops.count(2) == 0);
}

TEST_CASE("lease requests are granted in turn: GRANT to the holder, the next after its release") {
  Fixture fx;
  fx.Job(7, 1000);
  fx.Job(8, 1000);
  Connection& a = fx.Connect(1, 1000);
  Connection& b = fx.Connect(2, 1000);
  fx.Hello(a, 7);
  fx.Hello(b, 8);
  fx.Lease(a, proto::MsgType::kLeaseRequest);
  std::vector<proto::LeaseMsg> grants = fx.LeaseFrames(1, proto::MsgType::kLeaseGrant);
  REQUIRE(grants.size() == 1);
  CHECK(FormatGpuUuid(grants[0].gpu) == kGpu);
  CHECK(fx.parts->arbiter.Holder(kGpu) == 7);

  fx.Lease(b, proto::MsgType::kLeaseRequest);
  CHECK(fx.LeaseFrames(2, proto::MsgType::kLeaseGrant).empty());
  CHECK(fx.LeaseFrames(1, proto::MsgType::kLeaseContended).size() == 1);

  fx.Lease(a, proto::MsgType::kLeaseReleased, grants[0].epoch, proto::ReleaseReason::kEarly);
  std::vector<proto::LeaseMsg> next = fx.LeaseFrames(2, proto::MsgType::kLeaseGrant);
  REQUIRE(next.size() == 1);
  CHECK(next[0].epoch > grants[0].epoch);
  CHECK(fx.parts->arbiter.Holder(kGpu) == 8);
}

TEST_CASE("a holder's leaving hands the GPU on; its job keeps its swap counters") {
  Fixture fx;
  ActiveJob& job = fx.Job(7, 1000);
  fx.Job(8, 1000);
  Connection& a = fx.Connect(1, 1000);
  Connection& b = fx.Connect(2, 1000);
  fx.Hello(a, 7);
  fx.Hello(b, 8);
  fx.Report(a, 10 * kGiB, /*swaps_out=*/3);
  CHECK(job.peak_bytes == 10 * kGiB);
  fx.Lease(a, proto::MsgType::kLeaseRequest);
  fx.Lease(b, proto::MsgType::kLeaseRequest);
  REQUIRE(fx.LeaseFrames(2, proto::MsgType::kLeaseGrant).empty());

  a.closing = true;
  fx.parts->shims.Left(a);
  CHECK(fx.LeaseFrames(2, proto::MsgType::kLeaseGrant).size() == 1);
  CHECK(fx.parts->arbiter.Holder(kGpu) == 8);
  CHECK(job.gone_swaps_out == 3);
  CHECK(job.shims.empty());
  CHECK(fx.parts->ledger.Totals(7).allocated == 0);
}

TEST_CASE("a memory query is answered from the ledger only with the job's token") {
  Fixture fx;
  fx.Job(7, 1000);
  Connection& shim = fx.Connect(1, 1000);
  fx.Hello(shim, 7);
  fx.Report(shim, 10 * kGiB);

  auto query = [&](ConnId id, const uint8_t(&token)[16]) {
    Connection& c = fx.Connect(id, 1000);
    proto::MemQueryMsg q{};
    q.job_id = 7;
    std::memcpy(q.token, token, sizeof q.token);
    q.gpu = Uuid(kGpu);
    fx.parts->shims.OnMemoryQuery(c, FrameOf(proto::MsgType::kMemoryQuery, q));
    CHECK(c.kind == Connection::Kind::kCli);
    REQUIRE(!fx.sent.empty());
    REQUIRE(fx.sent.back().first == id);
    REQUIRE(fx.sent.back().second.type == proto::MsgType::kMemoryView);
    return Decode<proto::MemViewMsg>(fx.sent.back().second);
  };
  proto::MemViewMsg seen = query(2, kToken);
  CHECK(seen.known == 1);
  CHECK(seen.job_used >= 10 * kGiB);
  const uint8_t wrong[16] = {9};
  proto::MemViewMsg refused = query(3, wrong);
  CHECK(refused.known == 0);
  CHECK(refused.job_used == 0);

  fx.parts->shims.OnMemoryQuery(shim, FrameOf(proto::MsgType::kMemoryQuery, proto::MemQueryMsg{}));
  CHECK(fx.drops[1] == "a memory query after its hello");
}

TEST_CASE("a host pool query gets its uid's one sealed pool while that uid has a shim") {
  Fixture fx;
  fx.Job(7, 1000);
  fx.Job(8, 1001);
  auto query = [&](ConnId id, uid_t uid, uint64_t job, const uint8_t(&token)[16]) {
    Connection& c = fx.Connect(id, uid);
    proto::HostPoolQueryMsg q{};
    q.job_id = job;
    std::memcpy(q.token, token, sizeof q.token);
    fx.parts->shims.OnHostPoolQuery(c, FrameOf(proto::MsgType::kHostPoolQuery, q));
    CHECK(c.kind == Connection::Kind::kCli);
    REQUIRE(!fx.sent.empty());
    REQUIRE(fx.sent.back().first == id);
    REQUIRE(fx.sent.back().second.type == proto::MsgType::kHostPool);
    return Decode<proto::HostPoolMsg>(fx.sent.back().second);
  };
  // No shim of uid 1000 yet: no pool, none made.
  CHECK(query(10, 1000, 7, kToken).bytes == 0);
  CHECK(!fx.parts->pools.Has(1000));

  Connection& shim = fx.Connect(1, 1000);
  fx.Hello(shim, 7);
  const proto::HostPoolMsg got = query(11, 1000, 7, kToken);
  REQUIRE(got.bytes == fx.parts->pools.FileBytes());
  REQUIRE(fx.sent_fds.count(11) == 1);
  const int fd = fx.sent_fds[11];
  struct stat st;
  REQUIRE(fstat(fd, &st) == 0);
  CHECK(static_cast<uint64_t>(st.st_size) == got.bytes);
  CHECK((got.bytes - proto::kHostPoolHeaderBytes) % proto::kHostPoolBlockBytes == 0);
  const int seals = fcntl(fd, F_GET_SEALS);
  CHECK((seals & F_SEAL_SHRINK) != 0);
  CHECK((seals & F_SEAL_GROW) != 0);
  CHECK(ftruncate(fd, 0) != 0);
  // A second process of the user gets the same file.
  query(12, 1000, 7, kToken);
  CHECK(fx.sent_fds[12] == fd);
  // Another user's job, or a token that does not prove the job: nothing.
  const uint8_t wrong[16] = {9};
  CHECK(query(13, 1000, 7, wrong).bytes == 0);
  CHECK(fx.sent_fds.count(13) == 0);
  CHECK(query(14, 1001, 8, kToken).bytes == 0);  // uid 1001 has no shim
  CHECK(!fx.parts->pools.Has(1001));
  // With a shim of its own, uid 1001 gets a pool of its own, never 1000's.
  Connection& other = fx.Connect(5, 1001);
  fx.Hello(other, 8);
  CHECK(query(15, 1001, 8, kToken).bytes != 0);
  REQUIRE(fx.sent_fds.count(15) == 1);
  CHECK(fx.sent_fds[15] != fd);
  struct stat mine, theirs;
  REQUIRE(fstat(fd, &mine) == 0);
  REQUIRE(fstat(fx.sent_fds[15], &theirs) == 0);
  CHECK(mine.st_ino != theirs.st_ino);

  // The user's last shim leaves: the daemon lets the pool go.
  shim.closing = true;
  fx.parts->shims.Left(shim);
  CHECK(!fx.parts->pools.Has(1000));

  Connection& hello_first = fx.Connect(20, 1000);
  fx.Hello(hello_first, 7);
  fx.parts->shims.OnHostPoolQuery(
      hello_first, FrameOf(proto::MsgType::kHostPoolQuery, proto::HostPoolQueryMsg{}));
  CHECK(fx.drops[20] == "a host pool query after its hello");
}

TEST_CASE("the outbox stops and continues a holder that overstays its grace") {
  Fixture fx;
  const pid_t child = unit_child_processes::GroupLeader();
  fx.parts->outbox.Apply({LeaseAction{LeaseAction::Kind::kStop, 1, kGpu, 0, child}});
  int status = 0;
  REQUIRE(waitpid(child, &status, WUNTRACED) == child);
  CHECK(WIFSTOPPED(status));
  fx.parts->outbox.Apply({LeaseAction{LeaseAction::Kind::kContinue, 1, kGpu, 0, child}});
  REQUIRE(waitpid(child, &status, WCONTINUED) == child);
  CHECK(WIFCONTINUED(status));
  kill(child, SIGKILL);
  CHECK(unit_child_processes::EndSignal(child) == SIGKILL);
}

}  // namespace
}  // namespace gshare::unit_shim_sessions
