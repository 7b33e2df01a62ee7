// RequestRouter: who may send what. Every type the daemon takes is sent by each of four peers —
// the job's owner, another user (who even shows the job's token), an admin (root) and the
// owner's uid without the token — and answered as its row below says; a type the router gains
// without a row here fails the test. A connection never changes kind (a shim or a runner that
// sends a CLI request is dropped, its lease undone), and priorities above a ceiling are refused
// on every entry that sets one. Against DaemonParts on a scratch store.
#include "daemon/server/request_router.h"

#include <doctest/doctest.h>
#include <signal.h>

#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/gpu_inventory.h"
#include "daemon/server/daemon_parts.h"
#include "daemon/decoded_frame.h"
#include "daemon/job_records.h"
#include "daemon/table_parts.h"
#include "ipc/job_json.h"
#include "ipc/job_list.h"
#include "ipc/timeline_request.h"
#include "ipc/requests.h"
#include "temp_dir.h"

namespace gshare::unit_request_router {
namespace {

using json = nlohmann::json;
using proto::MsgType;

constexpr uid_t kOwnerUid = 5001;
constexpr uid_t kOtherUid = 5002;
const GpuKey kGpu = "GPU-00000000-0000-0000-0000-000000000000";

enum class Peer { kOwner, kOther, kAdmin, kTokenless };
constexpr Peer kPeers[] = {Peer::kOwner, Peer::kOther, Peer::kAdmin, Peer::kTokenless};
const char* PeerName(Peer p) {
  switch (p) {
    case Peer::kOwner: return "owner";
    case Peer::kOther: return "other user";
    case Peer::kAdmin: return "admin";
    case Peer::kTokenless: return "owner's uid without the token";
  }
  return "?";
}

enum class Outcome { kServed, kRefused, kDropped };
const char* OutcomeName(Outcome o) {
  return o == Outcome::kServed ? "served" : o == Outcome::kRefused ? "refused" : "dropped";
}

template <class Msg>
Frame Binary(MsgType type, const Msg& m) {
  return Frame{type, std::string(reinterpret_cast<const char*>(&m), sizeof m)};
}

// A pending job's options as the CLI sends them (its quantum resolved).
JobRecord Options() {
  JobRecord r = SubmittedJob(JobState::kPending);
  r.quantum_ms = 1000;
  return r;
}

struct Fixture {
  TempDir dir;
  DaemonOptions options;
  ManualClock clock;
  std::map<ConnId, std::vector<Frame>> sent;
  std::map<ConnId, std::string> drops;
  std::unique_ptr<DaemonParts> parts;
  std::unique_ptr<RequestRouter> router;
  bool stopped = false;
  ConnId next_conn = 1;
  std::string last_error;  // the last refusal OutcomeOf read

  Fixture() {
    options.state_dir = dir.path();
    options.socket_path = dir.path() + "/gshare.sock";
    options.system = true;
    parts = std::make_unique<DaemonParts>(
        options, clock, OpenStoreOrFail(dir.path() + "/s.db"),
        PeerLinks{[this](ConnId id, std::string_view bytes) {
                    if (parts->table.Live(id) == nullptr) return false;
                    sent[id].push_back(unit_decoded_frame::DecodedFrame(bytes));
                    return true;
                  },
                  [this](ConnId id, const std::string& why) {  // as Daemon::Drop
                    Connection* c = parts->table.Live(id);
                    if (c == nullptr) return;
                    drops[id] = why;
                    c->closing = true;
                    if (c->kind == Connection::Kind::kShim) parts->shims.Left(*c);
                    if (c->kind == Connection::Kind::kRunner)
                      parts->lifecycle.RunnerLost(c->job, false);
                  },
                  [](ConnId) {},
                  [this](ConnId id, std::string_view bytes, int fd) {
                    if (parts->table.Live(id) == nullptr || fd < 0) return false;
                    sent[id].push_back(unit_decoded_frame::DecodedFrame(bytes));
                    return true;
                  }});
    router = std::make_unique<RequestRouter>(*parts, [this] { stopped = true; });
  }

  Connection& Connect(uid_t uid, pid_t pid = 4242) {
    Connection& c =
        unit_table_parts::AddConn(parts->table, next_conn++, 0, Connection::Kind::kUnknown, pid);
    c.uid = uid;
    return c;
  }
  void Send(Connection& c, MsgType type, const json& req) {
    router->Dispatch(c, Frame{type, req.dump()});
  }
  std::optional<json> LastReply(ConnId id) {
    auto it = sent.find(id);
    if (it == sent.end()) return std::nullopt;
    for (auto f = it->second.rbegin(); f != it->second.rend(); ++f) {
      if (f->type == MsgType::kReply) return json::parse(f->payload);
    }
    return std::nullopt;
  }
  // A JSON request's outcome on connection `id`: dropped, or its reply's "ok".
  Outcome OutcomeOf(ConnId id) {
    if (drops.count(id) != 0) return Outcome::kDropped;
    std::optional<json> reply = LastReply(id);
    REQUIRE_MESSAGE(reply, "no reply");
    if (reply->value("ok", false)) return Outcome::kServed;
    last_error = reply->value("error", std::string());
    return Outcome::kRefused;
  }

  // A `gshare run` of the owner, registered and started; `orphan`: re-adopted after a restart,
  // its runner's connection gone with the daemon that had it.
  int64_t RunningJob(bool orphan) {
    Connection& runner = Connect(kOwnerUid, 4000);
    json req = JobOptionsToJson(Options());
    req["pid"] = 4000;
    Send(runner, MsgType::kRunRegister, req);
    std::optional<json> reply = LastReply(runner.id);
    REQUIRE(reply);
    REQUIRE((*reply)["ok"] == true);
    const int64_t id = (*reply)["job_id"];
    REQUIRE(parts->table.jobs.count(id) == 1);
    if (orphan) {
      parts->table.jobs.at(id)->orphan = true;
      runner.kind = Connection::Kind::kCli;
      runner.job = 0;
    }
    return id;
  }
  const std::string& TokenOf(int64_t id) { return parts->table.jobs.at(id)->record.token; }
  // The 16 bytes a hello carries for job `id`'s token; zero for the tokenless peer.
  void TokenBytes(int64_t id, Peer who, uint8_t (&out)[16]) {
    std::memset(out, 0, sizeof out);
    if (who == Peer::kTokenless) return;
    const std::string& hex = TokenOf(id);
    for (size_t i = 0; i < sizeof out; ++i) out[i] = std::stoi(hex.substr(2 * i, 2), nullptr, 16);
  }
  Connection& PeerConn(Peer who, pid_t pid = 4242) {
    return Connect(who == Peer::kOther ? kOtherUid : who == Peer::kAdmin ? 0 : kOwnerUid, pid);
  }
  // `who` as a shim of a process job of its own.
  Connection& OwnShim(Peer who) {
    Connection& c = PeerConn(who, 5000 + static_cast<int>(who));
    proto::HelloMsg hello{};
    hello.pid = c.pid;
    router->Dispatch(c, Binary(MsgType::kHello, hello));
    REQUIRE(c.kind == Connection::Kind::kShim);
    return c;
  }
};

proto::LeaseMsg LeaseOn(const GpuKey& gpu) {
  proto::LeaseMsg m{};
  REQUIRE(ParseGpuUuid(gpu, m.gpu.bytes));
  return m;
}

// One row: the type, what each peer gets (owner, other, admin, tokenless), and the request as
// each peer sends it, returning what happened.
struct Row {
  MsgType type;
  std::array<Outcome, 4> expected;
  std::function<Outcome(Fixture&, Peer)> send;
};

constexpr Outcome S = Outcome::kServed;
constexpr Outcome R = Outcome::kRefused;
constexpr Outcome D = Outcome::kDropped;

Outcome ShimMessage(Fixture& f, Peer who, MsgType type) {
  Connection& c = f.OwnShim(who);
  if (type == MsgType::kGapReport) {
    proto::GapMsg m{};
    REQUIRE(ParseGpuUuid(kGpu, m.gpu.bytes));
    f.router->Dispatch(c, Binary(type, m));
  } else if (type == MsgType::kMemReport) {
    proto::MemReportMsg m{};
    REQUIRE(ParseGpuUuid(kGpu, m.gpu.bytes));
    m.engine = static_cast<uint32_t>(proto::MemoryEngine::kSwap);
    f.router->Dispatch(c, Binary(type, m));
  } else {
    f.router->Dispatch(c, Binary(type, LeaseOn(kGpu)));
  }
  return f.drops.count(c.id) != 0 ? D : S;
}

// A one-shot query of a job's (kMemoryQuery, kMpsJoinQuery) from `who`, naming a running job
// with `who`'s token for it; the one answer's payload.
template <typename Answer, typename Query>
Answer JobQuery(Fixture& f, Peer who, MsgType type, Query q) {
  const int64_t id = f.RunningJob(false);
  Connection& c = f.PeerConn(who);
  q.job_id = static_cast<uint64_t>(id);
  f.TokenBytes(id, who, q.token);
  f.router->Dispatch(c, Binary(type, q));
  REQUIRE(f.sent[c.id].size() == 1);
  Answer a;
  std::memcpy(&a, f.sent[c.id][0].payload.data(), sizeof a);
  return a;
}

Outcome AdminRequest(Fixture& f, Peer who, MsgType type, const json& req) {
  Connection& c = f.PeerConn(who);
  f.Send(c, type, req);
  return f.OutcomeOf(c.id);
}

std::vector<Row> Rows() {
  std::vector<Row> rows;
  rows.push_back({MsgType::kHello, {S, D, S, D}, [](Fixture& f, Peer who) {
                    const int64_t id = f.RunningJob(false);
                    Connection& c = f.PeerConn(who);
                    proto::HelloMsg hello{};
                    hello.job_id = static_cast<uint64_t>(id);
                    hello.pid = c.pid;
                    f.TokenBytes(id, who, hello.token);
                    f.router->Dispatch(c, Binary(MsgType::kHello, hello));
                    if (f.drops.count(c.id) != 0) return D;
                    CHECK(c.job == static_cast<JobId>(id));
                    return S;
                  }});
  for (MsgType t : {MsgType::kLeaseRequest, MsgType::kLeaseReleased, MsgType::kMemReport,
                    MsgType::kGapReport}) {
    rows.push_back({t, {S, S, S, S}, [t](Fixture& f, Peer who) { return ShimMessage(f, who, t); }});
  }
  rows.push_back({MsgType::kPing, {S, S, S, S}, [](Fixture& f, Peer who) {
                    Connection& c = f.PeerConn(who);
                    proto::PingMsg ping{};
                    ping.seq = 7;
                    f.router->Dispatch(c, Binary(MsgType::kPing, ping));
                    REQUIRE(f.sent[c.id].size() == 1);
                    return f.sent[c.id][0].type == MsgType::kPong ? S : R;
                  }});
  rows.push_back({MsgType::kMemoryQuery, {S, R, S, R}, [](Fixture& f, Peer who) {
                    proto::MemQueryMsg q{};
                    REQUIRE(ParseGpuUuid(kGpu, q.gpu.bytes));
                    const auto v = JobQuery<proto::MemViewMsg>(f, who, MsgType::kMemoryQuery, q);
                    return v.known == 1 ? S : R;
                  }});
  rows.push_back({MsgType::kHostPoolQuery, {S, R, S, R}, [](Fixture& f, Peer who) {
                    const int64_t id = f.RunningJob(false);
                    Connection& c = f.PeerConn(who);
                    // A shim of the asker's uid is connected: the pool exists while one is.
                    Connection& shim = f.Connect(c.uid);
                    shim.kind = Connection::Kind::kShim;
                    proto::HostPoolQueryMsg q{};
                    q.job_id = static_cast<uint64_t>(id);
                    f.TokenBytes(id, who, q.token);
                    f.router->Dispatch(c, Binary(MsgType::kHostPoolQuery, q));
                    REQUIRE(f.sent[c.id].size() == 1);
                    proto::HostPoolMsg m;
                    std::memcpy(&m, f.sent[c.id][0].payload.data(), sizeof m);
                    return m.bytes != 0 ? S : R;
                  }});
  rows.push_back({MsgType::kMpsJoinQuery, {S, R, S, R}, [](Fixture& f, Peer who) {
                    const auto m = JobQuery<proto::MpsJoinMsg>(f, who, MsgType::kMpsJoinQuery,
                                                               proto::MpsJoinQueryMsg{});
                    CHECK(m.join == 1);  // no MPS server here: nothing to leave
                    return m.known == 1 ? S : R;
                  }});
  rows.push_back({MsgType::kRunRegister, {S, S, S, S}, [](Fixture& f, Peer who) {
                    Connection& c = f.PeerConn(who);
                    json req = JobOptionsToJson(Options());
                    req["pid"] = c.pid;
                    f.Send(c, MsgType::kRunRegister, req);
                    const Outcome o = f.OutcomeOf(c.id);
                    if (o == S) CHECK(f.parts->table.jobs.at(c.job)->record.uid == c.uid);
                    return o;
                  }});
  rows.push_back({MsgType::kRunStarted, {D, D, D, D}, [](Fixture& f, Peer who) {
                    const int64_t id = f.RunningJob(true);
                    Connection& c = f.PeerConn(who);
                    f.Send(c, MsgType::kRunStarted, RunStartedRequest{id, 77}.ToJson());
                    return f.OutcomeOf(c.id);
                  }});
  rows.push_back({MsgType::kRunEnded, {S, R, S, R}, [](Fixture& f, Peer who) {
                    const int64_t id = f.RunningJob(true);
                    Connection& c = f.PeerConn(who);
                    RunEndedRequest end{id, JobEnd{}, who == Peer::kTokenless ? "" : f.TokenOf(id)};
                    end.end.exit_code = 0;
                    f.Send(c, MsgType::kRunEnded, end.ToJson());
                    const Outcome o = f.OutcomeOf(c.id);
                    CHECK(f.parts->table.jobs.at(id)->ended == (o == S));
                    return o;
                  }});
  rows.push_back({MsgType::kStatusRequest, {S, S, S, S}, [](Fixture& f, Peer who) {
                    const int64_t id = f.RunningJob(false);
                    Connection& c = f.PeerConn(who);
                    StatusRequest q;
                    q.job_id = id;
                    f.Send(c, MsgType::kStatusRequest, q.ToJson());
                    return f.OutcomeOf(c.id);
                  }});
  rows.push_back({MsgType::kSchedulerSet, {R, R, S, R}, [](Fixture& f, Peer who) {
                    return AdminRequest(f, who, MsgType::kSchedulerSet,
                                        SchedulerSetRequest{false}.ToJson());
                  }});
  rows.push_back({MsgType::kShutdown, {R, R, S, R}, [](Fixture& f, Peer who) {
                    const Outcome o = AdminRequest(f, who, MsgType::kShutdown, json::object());
                    CHECK(f.stopped == (o == S));
                    return o;
                  }});
  rows.push_back({MsgType::kSubmit, {S, S, S, S}, [](Fixture& f, Peer who) {
                    Connection& c = f.PeerConn(who);
                    json req = JobOptionsToJson(Options());
                    req["env"] = json::array();
                    f.Send(c, MsgType::kSubmit, req);
                    return f.OutcomeOf(c.id);
                  }});
  rows.push_back({MsgType::kJobControl, {S, R, S, S}, [](Fixture& f, Peer who) {
                    const int64_t id = f.RunningJob(false);
                    Connection& c = f.PeerConn(who);
                    JobControlRequest q;
                    q.action = "set-priority";
                    q.ids = {id};
                    f.Send(c, MsgType::kJobControl, q.ToJson());
                    REQUIRE(f.OutcomeOf(c.id) == S);
                    f.last_error = f.LastReply(c.id)->at("results")[0].value("error", "");
                    return f.last_error.empty() ? S : R;
                  }});
  rows.push_back({MsgType::kClean, {S, R, S, S}, [](Fixture& f, Peer who) {
                    JobRecord done = SubmittedJob(JobState::kCompleted);
                    done.uid = kOwnerUid;
                    done.end_time = 1;
                    Result<int64_t> id = f.parts->store->Insert(done);
                    REQUIRE(id.ok());
                    Connection& c = f.PeerConn(who);
                    f.Send(c, MsgType::kClean, CleanRequest{0}.ToJson());
                    REQUIRE(f.OutcomeOf(c.id) == S);
                    return f.LastReply(c.id)->at("removed") == json{id.value()} ? S : R;
                  }});
  rows.push_back({MsgType::kRunAttach, {S, R, S, S}, [](Fixture& f, Peer who) {
                    JobRecord r = SubmittedJob(JobState::kRunning);
                    r.uid = kOwnerUid;
                    r.runner_pid = 4300;
                    JobPayload payload;
                    Result<int64_t> id = f.parts->store->Insert(r, &payload);
                    REQUIRE(id.ok());
                    r.id = id.value();
                    unit_table_parts::AddJob(f.parts->table, r.id, r.uid).record = r;
                    Connection& c = f.PeerConn(who, 4300);  // the pid the daemon started
                    f.Send(c, MsgType::kRunAttach, RunAttachRequest{r.id}.ToJson());
                    return f.OutcomeOf(c.id);
                  }});
  rows.push_back({MsgType::kListJobs, {S, S, S, S}, [](Fixture& f, Peer who) {
                    const int64_t id = f.RunningJob(false);
                    Connection& c = f.PeerConn(who);
                    ListJobsRequest q;
                    q.job_id = id;
                    f.Send(c, MsgType::kListJobs, q.ToJson());
                    const Outcome o = f.OutcomeOf(c.id);
                    const json jobs = f.LastReply(c.id)->at("jobs");
                    REQUIRE(jobs.size() == 1);
                    CHECK(jobs[0].value("hidden", false) == (who == Peer::kOther));
                    return o;
                  }});
  rows.push_back({MsgType::kQueueSet, {R, R, S, R}, [](Fixture& f, Peer who) {
                    return AdminRequest(f, who, MsgType::kQueueSet,
                                        QueueSetRequest{true, std::nullopt}.ToJson());
                  }});
  rows.push_back({MsgType::kTimeline, {S, S, S, S}, [](Fixture& f, Peer who) {
                    return AdminRequest(f, who, MsgType::kTimeline, TimelineRequest{}.ToJson());
                  }});
  // No slurmstepd above this test: refused to everyone (slurm_steps_test has a step).
  rows.push_back(
      {MsgType::kSlurmStep, {R, R, R, R}, [](Fixture& f, Peer who) {
         return AdminRequest(f, who, MsgType::kSlurmStep, SlurmStepRequest{"0", ""}.ToJson());
       }});
  rows.push_back({MsgType::kSlurmJob, {R, R, S, R}, [](Fixture& f, Peer who) {
                    SlurmJobRequest q;
                    q.action = "begin";
                    q.job_id = 12;
                    q.uid = kOwnerUid;
                    return AdminRequest(f, who, MsgType::kSlurmJob, q.ToJson());
                  }});
  return rows;
}

TEST_CASE("every request type x {owner, other user, admin, no token}: served as its rule says") {
  const std::vector<Row> rows = Rows();
  std::set<MsgType> covered;
  for (const Row& row : rows) covered.insert(row.type);
  std::set<MsgType> routed;
  for (const RequestRule& rule : RequestRouter::Rules()) routed.insert(rule.type);
  CHECK_MESSAGE(covered == routed, "a type the router takes has no row here, or the reverse");

  for (const Row& row : rows) {
    for (size_t i = 0; i < 4; ++i) {
      Fixture f;
      const Outcome got = row.send(f, kPeers[i]);
      const std::string what = std::string(RequestRouter::RuleOf(row.type)->name) + " from the " +
                               PeerName(kPeers[i]) + ": " + OutcomeName(got) + ", wanted " +
                               OutcomeName(row.expected[i]) + " (" + f.last_error + ")";
      CHECK_MESSAGE(got == row.expected[i], what);
    }
  }
}

TEST_CASE("a type the daemon does not take drops its connection") {
  for (int t = 0; t < 256; ++t) {
    const auto type = static_cast<MsgType>(t);
    if (RequestRouter::RuleOf(type) != nullptr) continue;
    Fixture f;
    Connection& c = f.Connect(kOwnerUid);
    f.router->Dispatch(c, Frame{type, "{}"});
    CHECK_MESSAGE(f.drops.count(c.id) == 1, "type ", t);
  }
}

TEST_CASE("a shim or a runner that sends a CLI request is dropped, and what it held is undone") {
  Fixture f;
  Connection& shim = f.OwnShim(Peer::kOwner);
  f.router->Dispatch(shim, Binary(MsgType::kLeaseRequest, LeaseOn(kGpu)));
  REQUIRE(f.parts->arbiter.Holder(kGpu) == std::optional<JobId>(shim.job));
  f.Send(shim, MsgType::kStatusRequest, json::object());
  CHECK(f.drops.count(shim.id) == 1);
  CHECK(shim.kind == Connection::Kind::kShim);
  CHECK(f.parts->arbiter.Holder(kGpu) !=
        std::optional<JobId>(shim.job));  // Left ran: the lease went with it

  const int64_t id = f.RunningJob(false);
  Connection* runner = nullptr;
  for (auto& [cid, c] : f.parts->table.conns) {
    if (c->kind == Connection::Kind::kRunner && c->job == static_cast<JobId>(id)) runner = c.get();
  }
  REQUIRE(runner != nullptr);
  JobControlRequest hold;
  hold.action = "hold";
  hold.ids = {id};
  f.Send(*runner, MsgType::kJobControl, hold.ToJson());
  CHECK(f.drops.count(runner->id) == 1);
  CHECK(runner->kind == Connection::Kind::kRunner);

  // A start on the runner's own connection is served.
  const int64_t second = f.RunningJob(false);
  for (auto& [cid, c] : f.parts->table.conns) {
    if (c->kind == Connection::Kind::kRunner && c->job == static_cast<JobId>(second))
      runner = c.get();
  }
  f.Send(*runner, MsgType::kRunStarted, RunStartedRequest{second, 77}.ToJson());
  CHECK(f.OutcomeOf(runner->id) == S);
}

TEST_CASE("a priority above the sender's ceiling is refused on every entry that sets one") {
  Fixture f;  // users' ceiling: 0 (AccessRules' default)
  const int64_t id = f.RunningJob(false);
  JobRecord high = Options();
  high.priority = 5;
  for (Peer who : {Peer::kOwner, Peer::kAdmin}) {
    const bool admin = who == Peer::kAdmin;
    const std::string peer = PeerName(who);
    CAPTURE(peer);
    Connection& run = f.PeerConn(who);
    json reg = JobOptionsToJson(high);
    reg["pid"] = run.pid;
    f.Send(run, MsgType::kRunRegister, reg);
    CHECK((f.OutcomeOf(run.id) == S) == admin);

    Connection& submit = f.PeerConn(who);
    json sub = JobOptionsToJson(high);
    sub["env"] = json::array();
    f.Send(submit, MsgType::kSubmit, sub);
    CHECK((f.OutcomeOf(submit.id) == S) == admin);

    // `gshare update -p` is a set-priority (the CLI sends it so).
    Connection& c = f.PeerConn(who);
    JobControlRequest q;
    q.action = "set-priority";
    q.ids = {id};
    q.priority = 5;
    f.Send(c, MsgType::kJobControl, q.ToJson());
    REQUIRE(f.OutcomeOf(c.id) == S);
    const std::string error = f.LastReply(c.id)->at("results")[0].value("error", "");
    CHECK((error.rfind(kPermissionDenied, 0) != 0) == admin);
  }
}

}  // namespace
}  // namespace gshare::unit_request_router
