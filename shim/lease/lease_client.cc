// The lease client: the frames it receives, the background thread's start (its loop is
// LeaseLoop, lease_loop.h), fork and exit handling. It owns the process's LeaseSession
// (g_session: the per-device state, the release decisions and the release protocol, a
// submission's way in, the memory engine with the lease, lease_session.h) and its connection
// to the daemon (g_socket: DaemonSocket, daemon_socket.h); its memory reports are
// lease_memory.cc; shared state is lease_state.h.
//
// Locking: `g_mu` guards the per-device flags, the connection's descriptors and the condition
// variable `g_cv` that submitting threads wait on (lease_state.h, lease_session.h and
// daemon_socket.h mark what it guards). The socket's own lock serializes its writes. The slow
// release work (draining the gate, synchronizing contexts) runs with neither held, so
// submitting threads can queue up on `g_cv` meanwhile.
#include "lease/lease_client.h"
#include "lease/lease_state.h"

#include <pthread.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "gshare/protocol.h"
#include "driver/census.h"
#include "lease/daemon_liveness.h"
#include "lease/inflight_window.h"
#include "lease/priority_lane.h"
#include "lease/priority_window.h"
#include "lease/sm_partition.h"
#include "driver/real_driver.h"
#include "shim_log.h"
#include "shim_thread.h"
#include "memory/memory_engine.h"
#include "gshare/job_env.h"

namespace gshare::shim {

std::atomic<int> g_active_captures{0};
std::atomic<int> g_syncing{0};
std::atomic<bool> g_gpu_waited{false};

namespace lease {

namespace proto = gshare::proto;

constinit DaemonSocket g_socket(ConnectChosen, ConnectTo);
DeviceGate g_gates[kMaxDevices];

bool SendLease(proto::MsgType type, int device, uint64_t epoch, uint32_t reason) {
  proto::LeaseMsg m{};
  m.gpu = Dev(device).uuid;
  m.epoch = epoch;
  m.reason = reason;
  m.ordinal = device;
  return g_socket.SendFrame(g_socket.fd(), type, &m, sizeof m);
}

void SyncContexts(int device) {
  const DriverExtras& x = Extras();
  ContextRegistry::Get().ForEach(device, [&x](gs_cuda::CUcontext ctx) {
    if (x.cuCtxPushCurrent_v2(ctx) != gs_cuda::CUDA_SUCCESS) return;
    x.cuCtxSynchronize();
    gs_cuda::CUcontext popped;
    x.cuCtxPopCurrent_v2(&popped);
  });
}

// The daemon seats this process on a GPU's slot of the priority board (priority_lane.h).
void HandleBoardSeat(const proto::LeaseMsg& m) {
  g_mu.Lock();
  int device = DeviceOfUuid(m.gpu);
  g_mu.Unlock();
  if (device < 0) return;
  // The board lies beside the socket: "<socket>.board" (its path is set once, before this
  // thread started).
  char path[sizeof(sockaddr_un::sun_path) + 8];
  size_t n = strnlen(g_socket.path(), sizeof(sockaddr_un::sun_path));
  std::memcpy(path, g_socket.path(), n);
  std::memcpy(path + n, proto::kBoardSuffix, std::strlen(proto::kBoardSuffix) + 1);
  const auto flags = static_cast<uint32_t>(m.ordinal);
  SetSeat(device, path, static_cast<uint32_t>(m.epoch), m.reason, m.bytes, (flags & 1) != 0,
          (flags >> 8) & 0xff);
}

// Reads and handles one frame. False when the connection is broken or the peer
// misbehaves.
bool ReceiveOne(int fd) {
  proto::FrameHeader h;
  if (!ReadAll(fd, &h, sizeof h)) return false;
  if (proto::CheckHeader(h, sizeof(proto::LeaseMsg)) != proto::HeaderCheck::kOk) return false;
  auto type = static_cast<proto::MsgType>(h.type);
  if (type == proto::MsgType::kPong) {
    proto::PingMsg ping;
    return ReadAll(fd, &ping, sizeof ping);  // what it proves, any frame proves
  }
  if (type != proto::MsgType::kLeaseGrant && type != proto::MsgType::kLeaseDrop &&
      type != proto::MsgType::kLeaseContended && type != proto::MsgType::kEvict &&
      type != proto::MsgType::kSwapPrepare && type != proto::MsgType::kGapWatch &&
      type != proto::MsgType::kStretchGap && type != proto::MsgType::kBoardSeat &&
      type != proto::MsgType::kSwapStage) {
    return false;
  }
  proto::LeaseMsg m;
  if (!ReadAll(fd, &m, sizeof m)) return false;
  if (type == proto::MsgType::kLeaseGrant) {
    g_session.OnGrant(m);
  } else if (type == proto::MsgType::kLeaseDrop) {
    g_session.OnDrop(m);
  } else if (type == proto::MsgType::kEvict) {
    g_session.OnEvict(m);
  } else if (type == proto::MsgType::kSwapPrepare) {
    Engine().Prepare(m.bytes);
  } else if (type == proto::MsgType::kGapWatch) {
    HandleGapWatch(m);
  } else if (type == proto::MsgType::kStretchGap) {
    HandleStretch(m);
  } else if (type == proto::MsgType::kBoardSeat) {
    HandleBoardSeat(m);
  } else if (type == proto::MsgType::kSwapStage) {
    g_session.OnStage(m);
  } else {
    g_session.OnContended(m);
  }
  return true;
}

void* ClientThread(void*) {
  g_loop.Begin();
  for (;;) g_loop.Turn();
  return nullptr;
}

// At exit(): the process will submit nothing more, so it gives its device memory and its
// leases back now, not when the driver destroys its context later in exit: that teardown
// takes about a second for a big job's memory, and the next job's swap-in would wait for it
// (docs/memory.md, "How `swap` works"). Registered at the first gated call, so it runs
// before the driver's teardown (_dl_fini) and after the exit handlers registered later (the
// CUDA runtime's registers at its own start, before). A device that some thread still uses
// (inside the gate, synchronizing, or waiting for the lease) is left alone. Never in a forked
// child (its parent's state is not its own).
pid_t g_exit_pid = 0;

void ReleaseAtExit() {
  if (getpid() != g_exit_pid) return;
  for (int i = 0; i < kMaxDevices; ++i) {
    g_mu.Lock();
    DeviceState& d = Dev(i);
    bool connected = g_socket.fd() >= 0 && !g_session.ungated();
    bool quiet = d.waiters == 0 && !d.dropping && !g_gates[i].Busy();
    bool held = connected && quiet && d.holding;
    bool discard = connected && quiet && !d.holding && !d.requested && d.uuid_known;
    if (held) d.dropping = true;
    g_mu.Unlock();
    if (held) {
      Release(i, proto::ReleaseReason::kExit);
    } else if (discard && Engine().DiscardAtExit(i) > 0) {
      SendReport(i, 0, 0, 0, 0);  // the gate is closed: nothing of it runs
    }
  }
}

bool JobProofFromEnv(uint64_t* job_id, uint8_t token[16]) {
  const char* job = std::getenv(job_env::kJobId);
  *job_id = job != nullptr ? std::strtoull(job, nullptr, 10) : 0;
  if (*job_id == 0) return false;
  ParseJobToken(std::getenv(job_env::kJobToken), token);
  return true;
}

void ParseJobToken(const char* hex, uint8_t out[16]) {
  std::memset(out, 0, 16);
  if (hex == nullptr || std::strlen(hex) != 32) return;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  uint8_t bytes[16];
  for (int i = 0; i < 16; ++i) {
    int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return;
    bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  std::memcpy(out, bytes, 16);
}

// Starts the connection and the thread on first use in this process.
void EnsureStartedLocked() REQUIRES(g_mu) {
  if (g_socket.Opened()) return;
  static bool atfork_registered = false;
  if (!atfork_registered) {
    atfork_registered = true;
    pthread_atfork(nullptr, nullptr, ChildAfterFork);
    g_exit_pid = getpid();
    atexit(ReleaseAtExit);
  }
  uint64_t job_id = 0;
  uint8_t token[16] = {};
  JobProofFromEnv(&job_id, token);  // job 0: a job of its own
  // `gshare run` already said it runs the job unshared: do not say it twice.
  if (std::getenv(job_env::kQuiet) != nullptr) g_session.Quiet();
  // The daemon reads GSHARE_MPS where `gshare run` or `gshare submit` runs: set inside a job
  // that it launched as an MPS client (`gshare run -- env GSHARE_MPS=0 ...`, an export in its
  // script), it comes too late, and the process runs under MPS. Said once per process,
  // reconnections included.
  static bool said_mps_opt_out = false;
  const char* opt_out = std::getenv(job_env::kMpsOptOut);
  if (!said_mps_opt_out && ConcurrentLanes() && opt_out != nullptr &&
      job_env::MpsOptOutValue(opt_out)) {
    said_mps_opt_out = true;
    shim::Warn(
        "%s=%s is set inside the job, but gshare launched it as an MPS client: set it where "
        "`gshare run` or `gshare submit` runs to keep the job outside MPS",
        job_env::kMpsOptOut, opt_out);
  }
  const char* idle = std::getenv(job_env::kIdleReleaseMs);
  int idle_ms = LeaseSession::kDefaultIdleReleaseMs;
  if (idle != nullptr && std::atoi(idle) > 0) idle_ms = std::atoi(idle);
  const char* early = std::getenv(job_env::kEarlyRelease);
  g_session.Configure(idle_ms, early == nullptr || std::strcmp(early, "0") != 0);
  const char* timeout = std::getenv("GSHARE_DAEMON_TIMEOUT_MS");
  if (timeout != nullptr) {
    char* end = nullptr;
    long ms = std::strtol(timeout, &end, 10);
    if (end != timeout && *end == '\0') g_loop.SetTimeoutMs(ms);
  }
  // $GSHARE_SOCKET (what gshare sets for its jobs), else the system daemon when it answers,
  // else the user's own (docs/design.md "Which daemon"). Reconnections keep the choice.
  if (!g_socket.Open(job_id, token)) g_session.GoUngated("cannot reach the gshare daemon at");
  pthread_t tid;
  if (StartShimThread(&tid, /*detached=*/true, ClientThread, nullptr, "gs-lease") != 0) {
    g_session.GoUngated("cannot start the lease thread for");
  }
}

}  // namespace lease

using namespace lease;

DeviceGate& GateOf(int device) { return g_gates[device]; }

LeaseClient g_client;

LeaseClient& LeaseClient::Get() { return g_client; }

void LeaseClient::EnterSlow(int device) { g_session.Enter(device); }

// Writes the lease state without g_mu, which the analysis cannot allow: the child's only
// thread runs this, and the lock is made anew here (locking is not async-signal-safe).
void ChildAfterFork() NO_THREAD_SAFETY_ANALYSIS {
  // Only async-signal-safe work: the child has one thread and no connection of its own.
  g_socket.ResetAfterFork();
  g_mu.ReinitAfterFork();
  pthread_cond_init(&g_cv, nullptr);
  g_loop.ResetAfterFork();
  g_session.ResetAfterFork();
  ContextRegistry::Get().ResetAfterFork();
  InflightWindow::ResetAfterFork();
  PriorityWindow::ResetAfterFork();
  SmPartition::ResetAfterFork();
  ResetLanesAfterFork();
  // The parent's counts are the parent's: the child reports only its own calls.
  for (auto& n : g_census) n.store(0, std::memory_order_relaxed);
  g_syncing.store(0, std::memory_order_relaxed);
  g_gpu_waited.store(false, std::memory_order_relaxed);
  g_census_captured.store(0, std::memory_order_relaxed);
  g_census_narrowed.store(0, std::memory_order_relaxed);
  g_census_behind.store(0, std::memory_order_relaxed);
  g_census_behind_ms.store(0, std::memory_order_relaxed);
  g_census_behind_capped.store(0, std::memory_order_relaxed);
  ResetGapWatchAfterFork();
}

}  // namespace gshare::shim
