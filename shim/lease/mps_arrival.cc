// kMpsJoinQuery on a connection of its own at the first cuInit: one query, one answer, close.
#include "lease/mps_arrival.h"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "gshare/job_env.h"
#include "lease/lease_state.h"
#include "lease/memory_view.h"

namespace gshare::shim {

namespace {

std::atomic<bool> g_asked{false};
std::atomic<bool> g_left{false};
pthread_once_t g_once = PTHREAD_ONCE_INIT;

// The daemon's answer; true (join) when there is none.
bool AskJoin() {
  proto::MpsJoinQueryMsg q{};
  if (!lease::JobProofFromEnv(&q.job_id, q.token)) return true;
  char path[sizeof(sockaddr_un::sun_path)];
  int fd = lease::ConnectChosen(path, sizeof path);  // the daemon the lease client would use
  if (fd < 0) return true;
  timeval tv{kAnswerMs / 1000, (kAnswerMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  bool join = true;
  proto::FrameHeader h;
  proto::MpsJoinMsg m;
  if (lease::g_socket.SendFrame(fd, proto::MsgType::kMpsJoinQuery, &q, sizeof q) &&
      lease::ReadAll(fd, &h, sizeof h) &&
      proto::CheckHeader(h, sizeof(proto::MpsJoinMsg)) == proto::HeaderCheck::kOk &&
      h.type == static_cast<uint16_t>(proto::MsgType::kMpsJoin) &&
      lease::ReadAll(fd, &m, sizeof m)) {
    join = m.join != 0;
  }
  close(fd);
  return join;
}

void Arrive() {
  if (LaunchedAsMpsClient() && !AskJoin()) {
    for (const char* name :
         {job_env::kMpsPipeDirectory, job_env::kMpsLogDirectory, job_env::kMpsClientPriority,
          job_env::kMpsActiveThreadPercentage, job_env::kMpsClient}) {
      unsetenv(name);
    }
    g_left.store(true, std::memory_order_release);
  }
  g_asked.store(true, std::memory_order_release);
}

}  // namespace

void BeforeCuInit() {
  if (g_asked.load(std::memory_order_acquire)) return;
  pthread_once(&g_once, Arrive);
}

bool LeftMps() { return g_left.load(std::memory_order_acquire); }

bool LaunchedAsMpsClient() {
  const char* client = std::getenv(job_env::kMpsClient);
  const char* pipe = std::getenv(job_env::kMpsPipeDirectory);
  return client != nullptr && std::strcmp(client, "1") == 0 && pipe != nullptr && *pipe != '\0';
}

}  // namespace gshare::shim
