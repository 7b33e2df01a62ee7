// DaemonParts' wiring of the replies (RequestTransport::reply): what a client reads is a kReply
// no larger than proto::kMaxReplyPayload, and a reply that would be larger is an error that
// says so, never lost on the way.
#include "daemon/server/daemon_parts.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/job_records.h"
#include "daemon/table_parts.h"
#include "ipc/frame_io.h"
#include "ipc/replies.h"
#include "temp_dir.h"

namespace gshare::unit_daemon_parts {
namespace {

struct Fixture {
  TempDir dir;
  DaemonOptions options;
  ManualClock clock;
  std::vector<std::pair<ConnId, std::string>> sent;  // (peer, encoded frame)
  std::unique_ptr<DaemonParts> parts;

  Fixture() {
    options.state_dir = dir.path();
    options.socket_path = dir.path() + "/gshare.sock";
    parts =
        std::make_unique<DaemonParts>(options, clock, OpenStoreOrFail(dir.path() + "/s.db"),
                                      PeerLinks{[this](ConnId id, std::string_view bytes) {
                                                  sent.emplace_back(id, std::string(bytes));
                                                  return true;
                                                },
                                                [](ConnId, const std::string&) {}, [](ConnId) {},
                                                nullptr});  // descriptors never sent
  }
};

// The one frame `bytes` holds, read as a client reads a reply.
Frame ReadAsClient(const std::string& bytes) {
  FrameBuffer buffer(proto::kMaxReplyPayload);
  buffer.Append(bytes.data(), bytes.size());
  Result<std::optional<Frame>> f = buffer.Next();
  REQUIRE_MESSAGE(f.ok(), f.status().message());
  REQUIRE(f.value());
  CHECK(buffer.buffered() == 0);
  return *f.value();
}

TEST_CASE("a reply larger than a client reads becomes an error reply that says so") {
  Fixture fx;
  Connection& c =
      unit_table_parts::AddConn(fx.parts->table, 1, 0, Connection::Kind::kCli, getpid());
  fx.parts->transport.reply(c, OkReply());
  // One job row longer than proto::kMaxReplyPayload.
  nlohmann::json big{{"ok", true},
                     {"jobs", nlohmann::json::array({std::string(proto::kMaxReplyPayload, 'j')})}};
  fx.parts->transport.reply(c, big.dump());
  REQUIRE(fx.sent.size() == 2);
  CHECK(nlohmann::json::parse(ReadAsClient(fx.sent[0].second).payload)["ok"] == true);
  const Frame refused = ReadAsClient(fx.sent[1].second);
  CHECK(refused.type == proto::MsgType::kReply);
  nlohmann::json error = nlohmann::json::parse(refused.payload);
  CHECK(error["ok"] == false);
  const std::string text = error["error"];
  CHECK(text.rfind("the reply is too large (" + std::to_string(big.dump().size()) + " bytes", 0) ==
        0);
  CHECK(text.find("ask for fewer jobs") != std::string::npos);
}

}  // namespace
}  // namespace gshare::unit_daemon_parts
