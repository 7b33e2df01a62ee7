#include "daemon/server/peer_table.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace gshare::unit_peer_table {
namespace {

// Records what the table reports; `on_frame` may act on the table (close, send).
struct Recorder : PeerEvents {
  std::vector<std::pair<ConnId, std::string>> frames;  // (peer, payload)
  std::vector<std::pair<ConnId, std::string>> lost;    // (peer, why)
  std::vector<ConnId> reaped;
  bool accept = true;
  std::function<void(ConnId)> on_frame;

  bool OnAccepted(ConnId, pid_t, uid_t) override { return accept; }
  void OnFrame(ConnId id, const Frame& f) override {
    frames.emplace_back(id, f.payload);
    if (on_frame) on_frame(id);
  }
  void OnLost(ConnId id, const std::string& why) override { lost.emplace_back(id, why); }
  void OnReaped(ConnId id) override { reaped.push_back(id); }
};

// One end of a socketpair adopted by the table (non-blocking, as accept4 makes them), the
// other kept as the client's.
struct Pair {
  ConnId id = 0;
  int client = -1;
  ~Pair() {
    if (client >= 0) close(client);
  }
};

const TimePoint kStart{};

// A peer of `uid` connected at `at`.
void Connect(PeerTable* table, Pair* pair, uid_t uid = getuid(), TimePoint at = kStart) {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  REQUIRE(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0);
  pair->id = table->Adopt(sv[0], getpid(), uid, at);
  pair->client = sv[1];
}

std::string Request(const std::string& json) {
  return EncodeFrame(proto::MsgType::kStatusRequest, json);
}

void Write(int fd, const std::string& bytes) {
  REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
}

const PeerTable::Limits kLimits{};

TEST_CASE("PeerTable dispatches the frames of a peer in order, however they arrive") {
  Recorder events;
  PeerTable table(&events, kLimits, proto::kMaxRequestPayload);
  Pair p;
  Connect(&table, &p);
  const std::string both = Request("{\"a\":1}") + Request("{\"b\":2}");
  Write(p.client, both.substr(0, 5));  // half a header
  table.OnPollEvents(p.id, POLLIN, kStart);
  CHECK(events.frames.empty());
  Write(p.client, both.substr(5));
  table.OnPollEvents(p.id, POLLIN, kStart);
  REQUIRE(events.frames.size() == 2);
  CHECK(events.frames[0].second == "{\"a\":1}");
  CHECK(events.frames[1].second == "{\"b\":2}");
  CHECK(table.buffered_input() == 0);
  CHECK(events.lost.empty());
}

TEST_CASE("PeerTable loses a peer whose frame stays incomplete past the deadline") {
  Recorder events;
  PeerTable table(&events, kLimits, proto::kMaxRequestPayload);
  Pair p;
  Connect(&table, &p);
  Write(p.client, Request("{}").substr(0, 10));
  table.OnPollEvents(p.id, POLLIN, kStart);
  std::optional<TimePoint> next = table.Expire(kStart + Millis(1));
  REQUIRE(next.has_value());
  CHECK(*next == kStart + kLimits.peer_deadline);
  CHECK(events.lost.empty());
  table.Expire(kStart + kLimits.peer_deadline);
  REQUIRE(events.lost.size() == 1);
  CHECK(events.lost[0].second == "a frame left incomplete");
  CHECK_FALSE(table.IsOpen(p.id));
  table.Reap();
  CHECK(events.reaped == std::vector<ConnId>{p.id});
  CHECK(table.size() == 0);
  CHECK(table.buffered_input() == 0);
}

TEST_CASE("PeerTable reads no further from a peer that does not take its replies") {
  Recorder events;
  PeerTable table(&events, kLimits, proto::kMaxRequestPayload);
  Pair slow, shim;
  Connect(&table, &slow);
  Connect(&table, &shim);
  table.SetExempt(shim.id);
  // More than a socket buffer holds: part of it waits in the table's output.
  const std::string big(4u << 20, 'x');
  for (const Pair* p : {&slow, &shim}) {
    REQUIRE(table.Send(p->id, big, kStart));
    Write(p->client, Request("{\"n\":1}") + Request("{\"n\":2}"));
    table.OnPollEvents(p->id, POLLIN, kStart);
  }
  int from_slow = 0, from_shim = 0;
  for (const auto& [id, payload] : events.frames) (id == slow.id ? from_slow : from_shim)++;
  CHECK(from_slow == 0);  // its requests wait for it to read
  CHECK(from_shim == 2);  // lease messages never wait behind the shim's own output

  // The slow peer reads everything; its requests go on.
  std::string sink(1u << 20, '\0');
  size_t got = 0;
  while (got < big.size()) {
    table.OnPollEvents(slow.id, POLLOUT, kStart);
    ssize_t n = read(slow.client, sink.data(), sink.size());
    REQUIRE(n > 0);
    got += static_cast<size_t>(n);
  }
  table.OnPollEvents(slow.id, POLLIN, kStart);  // what poll says once it is not blocked
  for (const auto& [id, payload] : events.frames) from_slow += id == slow.id ? 1 : 0;
  CHECK(from_slow == 2);

  // Output not taken at all ends the peer at the deadline.
  REQUIRE(table.Send(shim.id, big, kStart + Millis(5)));
  table.Expire(kStart + Millis(5) + kLimits.peer_deadline);
  REQUIRE(events.lost.size() == 1);
  CHECK(events.lost[0] ==
        std::make_pair(shim.id, std::string("it does not read what the daemon sends")));
}

TEST_CASE("PeerTable bounds a peer's output and everyone's input") {
  Recorder events;
  PeerTable::Limits limits;
  limits.max_output_bytes = 1000;
  limits.max_buffered_input = 64;
  PeerTable table(&events, limits, proto::kMaxRequestPayload);
  Pair a, b;
  Connect(&table, &a);
  Connect(&table, &b);
  // The peer's socket takes what fits; the table keeps no more than 1000 bytes of the rest.
  const std::string chunk(600, 'y');
  bool open = true;
  for (int i = 0; i < 1000 && open; ++i) open = table.Send(a.id, chunk, kStart);
  CHECK_FALSE(open);
  REQUIRE(events.lost.size() == 1);
  CHECK(events.lost[0].second == "it does not read what the daemon sends");
  CHECK_FALSE(table.Send(a.id, "z", kStart));  // closed: nothing more is queued

  // 40 bytes of an incomplete frame fit; 40 more would pass 64 over all peers.
  Write(b.client, std::string(Request(std::string(200, ' ')).substr(0, 40)));
  table.OnPollEvents(b.id, POLLIN, kStart);
  CHECK(table.buffered_input() == 40);
  Write(b.client, std::string(40, ' '));
  table.OnPollEvents(b.id, POLLIN, kStart);
  REQUIRE(events.lost.size() == 2);
  CHECK(events.lost[1] ==
        std::make_pair(b.id, std::string("too much unprocessed input on all connections")));
  table.Reap();
  CHECK(table.buffered_input() == 0);
  CHECK(table.size() == 0);
}

TEST_CASE("PeerTable: a malformed frame or an end of stream loses the peer; Close does not") {
  Recorder events;
  PeerTable table(&events, kLimits, proto::kMaxRequestPayload);
  Pair bad, gone, closed;
  Connect(&table, &bad);
  Connect(&table, &gone);
  Connect(&table, &closed);
  Write(bad.client, std::string(16, 'Q'));  // no magic
  table.OnPollEvents(bad.id, POLLIN, kStart);
  close(gone.client);
  gone.client = -1;
  table.OnPollEvents(gone.id, POLLHUP, kStart);
  // The owner closes a peer while it handles the peer's first frame: the second, already
  // received, is not dispatched.
  events.on_frame = [&](ConnId id) { table.Close(id); };
  Write(closed.client, Request("{\"first\":1}") + Request("{\"second\":2}"));
  table.OnPollEvents(closed.id, POLLIN, kStart);
  REQUIRE(events.lost.size() == 2);
  CHECK(events.lost[0].first == bad.id);
  CHECK(events.lost[0].second.rfind("malformed frame (", 0) == 0);
  CHECK(events.lost[1] == std::make_pair(gone.id, std::string()));
  REQUIRE(events.frames.size() == 1);
  CHECK(events.frames[0].second == "{\"first\":1}");
  CHECK_FALSE(table.IsOpen(closed.id));
  table.Reap();
  table.Reap();  // once only
  CHECK(events.reaped.size() == 3);
}

TEST_CASE("PeerTable loses a peer that sends no frame after connecting, never one that spoke") {
  Recorder events;
  PeerTable table(&events, kLimits, proto::kMaxRequestPayload);
  Pair silent, spoke, later;
  Connect(&table, &silent);
  Connect(&table, &spoke);
  Connect(&table, &later, getuid(), kStart + Millis(5000));
  Write(spoke.client, Request("{}"));
  table.OnPollEvents(spoke.id, POLLIN, kStart + Millis(1));
  REQUIRE(events.frames.size() == 1);
  CHECK(table.Expire(kStart + Millis(1)) == kStart + kLimits.first_frame_deadline);
  table.Expire(kStart + kLimits.first_frame_deadline);
  REQUIRE(events.lost.size() == 1);
  CHECK(events.lost[0] ==
        std::make_pair(silent.id, std::string("it sent no request within 10 s of connecting")));
  // The one that connected later has its own deadline; one that spoke may stay idle for ever.
  CHECK(table.Expire(kStart + kLimits.first_frame_deadline + Millis(1)) ==
        kStart + Millis(5000) + kLimits.first_frame_deadline);
  table.Expire(kStart + Millis(5000) + kLimits.first_frame_deadline);
  REQUIRE(events.lost.size() == 2);
  CHECK(events.lost[1].first == later.id);
  CHECK_FALSE(table.Expire(kStart + std::chrono::hours(24)).has_value());
  CHECK(events.lost.size() == 2);
  CHECK(table.IsOpen(spoke.id));
}

TEST_CASE("PeerTable: one user's half frames cannot take the input bound from the others") {
  Recorder events;
  PeerTable::Limits limits;
  limits.max_buffered_input = 1000;
  limits.max_buffered_input_per_uid = 300;
  PeerTable table(&events, limits, proto::kMaxRequestPayload);
  constexpr uid_t kHog = 60001, kOther = 60002;
  Pair hog[4], other;
  for (Pair& p : hog) {
    Connect(&table, &p, kHog);
    Write(p.client, Request(std::string(1000, ' ')).substr(0, 250));
    table.OnPollEvents(p.id, POLLIN, kStart);
  }
  // The hog keeps one connection's worth; its others are lost, not anyone else's requests.
  REQUIRE(events.lost.size() == 3);
  for (const auto& [id, why] : events.lost) {
    CHECK(id != hog[0].id);
    CHECK(why == "too much unprocessed input on its user's connections");
  }
  Connect(&table, &other, kOther);
  Write(other.client, Request("{\"mine\":1}"));
  table.OnPollEvents(other.id, POLLIN, kStart);
  REQUIRE(events.frames.size() == 1);
  CHECK(events.frames[0] == std::make_pair(other.id, std::string("{\"mine\":1}")));
  CHECK(events.lost.size() == 3);
  table.Reap();
  CHECK(table.buffered_input() == 250);
}

TEST_CASE("PeerTable: one user's unread replies are bounded over all its connections") {
  Recorder events;
  PeerTable::Limits limits;
  limits.max_output_bytes = 1u << 20;
  limits.max_output_bytes_per_uid = 1536u << 10;
  PeerTable table(&events, limits, proto::kMaxRequestPayload);
  constexpr uid_t kHog = 60001, kOther = 60002;
  Pair x, y, z, other;
  Connect(&table, &x, kHog);
  Connect(&table, &y, kHog);
  Connect(&table, &z, kHog);
  Connect(&table, &other, kOther);
  // More than a socket buffer: most of each stays in the table's output.
  const std::string reply(700u << 10, 'r');
  CHECK(table.Send(x.id, reply, kStart));
  CHECK(table.Send(y.id, reply, kStart));
  CHECK_FALSE(table.Send(z.id, reply, kStart));
  REQUIRE(events.lost.size() == 1);
  CHECK(events.lost[0] ==
        std::make_pair(z.id,
                       std::string("its user's connections do not read what the daemon sends")));
  CHECK(table.Send(other.id, reply, kStart));  // another user's replies still go out
  // What a connection takes or drops makes room again.
  table.Close(x.id);
  table.Reap();
  Pair again;
  Connect(&table, &again, kHog);
  CHECK(table.Send(again.id, reply, kStart));
  CHECK(events.lost.size() == 1);
}

TEST_CASE("PeerTable accepts up to its limit and leaves refused peers closed") {
  TempDir dir;
  const std::string path = dir.path() + "/s.sock";
  int listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  REQUIRE(listen_fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(listen(listen_fd, 16) == 0);
  auto dial = [&] {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    return fd;
  };
  Recorder events;
  PeerTable::Limits limits;
  limits.max_connections = 2;
  PeerTable table(&events, limits, proto::kMaxRequestPayload);
  std::vector<int> clients = {dial(), dial(), dial()};
  table.Accept(listen_fd, kStart);
  CHECK(table.size() == 2);
  CHECK(table.refused() == 1);
  char byte;
  CHECK(read(clients[2], &byte, 1) == 0);  // the third was closed at once

  Recorder refusing;
  refusing.accept = false;  // the owner refuses (another user, say)
  PeerTable other(&refusing, kLimits, proto::kMaxRequestPayload);
  clients.push_back(dial());
  other.Accept(listen_fd, kStart);
  CHECK(other.size() == 0);
  CHECK(read(clients.back(), &byte, 1) == 0);
  for (int fd : clients) close(fd);
  close(listen_fd);
}

}  // namespace
}  // namespace gshare::unit_peer_table
