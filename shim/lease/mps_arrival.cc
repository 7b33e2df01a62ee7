// kMpsJoinQuery at the first cuInit, one-shot (AskDaemonOnce, memory_view.h).
#include "lease/mps_arrival.h"

#include <pthread.h>

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
  proto::MpsJoinMsg m{};
  return !AskDaemonOnce(proto::MsgType::kMpsJoinQuery, &q, sizeof q, proto::MsgType::kMpsJoin, &m,
                        sizeof m) ||
         m.join != 0;
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
