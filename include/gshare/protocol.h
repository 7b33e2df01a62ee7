// The wire protocol between gshare's daemon, its CLI and the libgshare.so shim.
// The only header both sides include: standard library only, no heap, no exceptions,
// so the shim may use it from any thread. Every frame is a 16-byte header followed by
// `length` payload bytes. Shim messages carry fixed-size binary structs (the shim has no
// JSON library); CLI messages carry one UTF-8 JSON object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gshare::proto {

// Bumped on any incompatible change of a header or payload. A peer with another version
// is disconnected (the daemon keeps serving everyone else).
inline constexpr uint16_t kVersion = 10;
inline constexpr uint32_t kMagic = 0x52485347;  // "GSHR" little-endian
// Largest payload a peer may send to the daemon; larger frames drop the connection. A
// submission carries its environment and batch script.
inline constexpr uint32_t kMaxRequestPayload = 4 * 1024 * 1024;
// Largest payload the daemon sends back (status replies list every job).
inline constexpr uint32_t kMaxReplyPayload = 16 * 1024 * 1024;

enum class MsgType : uint16_t {
  // shim -> daemon
  kHello = 1,          // HelloMsg: first frame of a shim connection
  kLeaseRequest = 2,   // LeaseMsg: the process wants to submit work to `gpu`
  kLeaseReleased = 3,  // LeaseMsg: gate closed, work drained, contexts synchronized
  kMemReport = 4,      // MemReportMsg: the process's memory on `gpu` (ledger entry)
  kGapReport = 5,      // GapMsg: an idle gap of the process on `gpu` ended (after kGapWatch)
  kPing = 6,           // PingMsg: are you alive? The daemon answers kPong at once, whatever
                       // else waits (a lease request may wait a whole quantum; a ping never)
  kMemoryQuery = 7,    // MemQueryMsg: the first and only frame of a connection that asks what
                       // a job may see of a GPU's memory (NVML answers inside a job,
                       // shim/hooks/nvml_view.h); answered with kMemoryView, then closed by
                       // the asker
  kHostPoolQuery = 8,  // HostPoolQueryMsg: the first and only frame of a connection that asks
                       // for the host pool shared by the job owner's processes; answered with
                       // kHostPool (and its descriptor), then closed by the asker
  kMpsJoinQuery = 9,   // MpsJoinQueryMsg: the first and only frame of a connection that asks,
                       // at a process's first cuInit, whether the process still joins the MPS
                       // server gshare launched its job for; answered with kMpsJoin, then
                       // closed by the asker
  // daemon -> shim
  kLeaseGrant = 16,      // LeaseMsg: the job holds `gpu` (epoch identifies this grant)
  kLeaseDrop = 17,       // LeaseMsg: give `gpu` back (acknowledge with kLeaseReleased, same epoch)
  kLeaseContended = 18,  // LeaseMsg: another job waits for `gpu`: bound the work in flight
  kEvict = 19,           // LeaseMsg: bytes = device bytes to move to host memory now (the
                         // process does not hold `gpu`); answered with a kMemReport
  kSwapPrepare = 20,     // LeaseMsg: bytes = pinned host memory to set aside for evictions
  kGapWatch = 21,        // LeaseMsg: bytes = 1: report idle gaps on `gpu` (kGapReport) while
                         // holding it; 0: stop (a release stops it too)
  kStretchGap = 22,      // LeaseMsg: bytes = ms: the process's next idle gap on `gpu` lasts at
                         // least this long (its submissions wait; src/policy/stagger.h)
  kPong = 23,            // PingMsg: the answer to kPing, same seq
  kBoardSeat = 24,       // LeaseMsg: the connection's seat on `gpu` (gshare/priority_board.h):
                         // epoch = the GPU's slot; reason = seat + 1 (0: no seat, nothing to
                         // keep); bytes = yield mask (the seats of higher priority: wait while
                         // one is busy); ordinal bit 0: a seat yields to this one (mark it
                         // busy); ordinal bits 8-15: how many seats of the GPU yield (they
                         // share the in-flight budget, shim/lease/priority_window.h)
  kSwapStage = 25,       // LeaseMsg: bytes = at most this much of the process's resident memory
                         // on `gpu` gets a copy in host memory while it stays on the GPU (the
                         // process is idle there), so that an eviction of it later needs no
                         // copy (docs/memory.md, "Idle memory is staged"); answered with
                         // kMemReport as it goes
  kMemoryView = 26,      // MemViewMsg: the answer to kMemoryQuery
  kHostPool = 27,        // HostPoolMsg: the answer to kHostPoolQuery; with bytes != 0 it carries
                         // one descriptor (SCM_RIGHTS) of the pool's memory file
  kMpsJoin = 28,         // MpsJoinMsg: the answer to kMpsJoinQuery
  // CLI -> daemon (JSON payloads) and daemon -> CLI replies
  // Job options (JobRequest, src/job_request.h) are the same JSON object in kRunRegister and
  // kSubmit.
  kRunRegister = 32,  // options + {"pid"} -> {"job_id","admitted"}; then kRunAdmitted when not
  kRunStarted = 33,   // {"job_id","pid"}
  kRunEnded = 34,     // {"job_id","exit_code"|null,"signal"|null,"timed_out"}; any connection

  kStatusRequest = 35,  // {} or {"job_id": N}
  kSchedulerSet = 36,   // {"enabled": bool}
  kShutdown = 37,       // {} (tests and `gshare daemon stop`)
  kSubmit = 38,         // options + {"env":[...],"script"|null} -> {"job_id"}
  kJobControl = 39,     // {"action","ids":[...],"priority"?,"signal"?} -> {"results":[...]}
  kClean = 40,          // {"older_than_ms"} -> {"removed":[ids]}
  kRunAttach = 41,  // a job's supervisor: {"job_id"} -> what to run (src/runner/job_supervisor.h)
  kListJobs = 42,   // a filter or {"job_id"} -> {"jobs":[...]} (src/ipc/job_list.h)
  kQueueSet = 43,   // {"paused": bool} -> {"paused": bool}: `gshare queue pause|resume`
  // `gshare timeline`: {"since_us", "until_us", "all_users", "jobs", "after_id"} -> a page of
  // {"events": [...], "next_after"} (src/ipc/timeline_request.h)
  kTimeline = 44,
  // A task of a Slurm job step joins gshare (`gshare slurm task-prolog`): {"gpus","name"} ->
  // JobIdReply; the step is read from the peer's process tree (src/base/slurm_step.h).
  kSlurmStep = 46,
  // Root's Slurm Prolog/Epilog (`gshare slurm prolog|epilog`): {"action": "begin"|"end",
  // "job_id", "uid", "partition", "qos"} -> {"ok", "ended": [gshare job ids]}.
  kSlurmJob = 47,
  kReply = 48,        // {"ok": bool, "error": "...", ...result fields}
  kRunAdmitted = 49,  // daemon -> a pending `gshare run`: {"job_id"}: start now
};

struct FrameHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t type;      // MsgType
  uint32_t length;    // payload bytes that follow
  uint32_t reserved;  // zero
};
static_assert(sizeof(FrameHeader) == 16, "frame header is 16 bytes on the wire");

// GPU identity on the wire: the 16 bytes of cuDeviceGetUuid.
struct GpuUuid {
  uint8_t bytes[16];
};
static_assert(sizeof(GpuUuid) == 16);

struct HelloMsg {
  uint64_t job_id;  // GSHARE_JOB_ID of the process, 0 when started outside `gshare run`
  int32_t pid;      // getpid(); the daemon trusts SO_PEERCRED and uses this only to cross-check
  uint32_t flags;   // reserved, zero
  // GSHARE_JOB_TOKEN's 16 bytes (src/base/job_token.h): the proof that the process belongs to
  // job_id. Zero when absent; the daemon then does not let it join job_id.
  uint8_t token[16];
};
static_assert(sizeof(HelloMsg) == 32);

// kMemoryQuery: what job `job_id` may see of `gpu`. Proved like a hello (the token; the
// daemon trusts SO_PEERCRED for the uid), so a process learns only its own job's usage.
struct MemQueryMsg {
  uint64_t job_id;  // GSHARE_JOB_ID of the asking process
  uint8_t token[16];
  GpuUuid gpu;  // NVML's UUID of the GPU asked about (physical: NVML ignores CUDA_VISIBLE_DEVICES)
};
static_assert(sizeof(MemQueryMsg) == 40);

// kMemoryView: the GPU as the job would see it alone (docs/memory.md "What a job sees"), in
// bytes, from the daemon's memory ledger at the time of the answer.
struct MemViewMsg {
  GpuUuid gpu;            // as asked
  uint64_t others_fixed;  // what other jobs hold on `gpu` that cannot move, their contexts in
  uint64_t job_used;      // the job's device memory on `gpu`, resident or swapped out, with
                          // one context per process of it there
  uint32_t known;         // 0: no such job, or the token does not prove it (fields are 0)
  uint32_t reserved;      // zero
};
static_assert(sizeof(MemViewMsg) == 40);

// kHostPoolQuery: the host pool of the owner of job `job_id`, proved like a hello (the token;
// the daemon trusts SO_PEERCRED for the uid). One pool per user: every process of that user's
// jobs gets the same memory file (docs/memory.md, "Pinned host pool").
struct HostPoolQueryMsg {
  uint64_t job_id;
  uint8_t token[16];
};
static_assert(sizeof(HostPoolQueryMsg) == 24);

// kHostPool: the pool's size in bytes (the file's, header included; 0: none, no descriptor
// sent). The file is a sealed memfd (it can neither grow nor shrink); its layout is the
// shim's (shim/memory/shared_pool.h).
// The pool file's layout as both sides know it: a header, then whole blocks (at most
// kHostPoolMaxBlocks).
inline constexpr uint64_t kHostPoolHeaderBytes = 2ull << 20;
inline constexpr uint64_t kHostPoolBlockBytes = 1ull << 30;
inline constexpr uint64_t kHostPoolMaxBlocks = 2048;
struct HostPoolMsg {
  uint64_t bytes;
  uint64_t reserved;  // zero
};
static_assert(sizeof(HostPoolMsg) == 16);

// kMpsJoinQuery: job `job_id`'s process, launched as a client of gshare's MPS server on its GPU,
// makes its first cuInit (the driver reads the MPS variables there), proved like a hello.
// flags: kMpsJoinDecideNow: the process stops waiting for room (a signal came while it
// waited): the answer is join or outside, never kMpsJoinWait.
struct MpsJoinQueryMsg {
  uint64_t job_id;
  uint8_t token[16];
  uint32_t flags;
  uint32_t reserved;  // zero
};
static_assert(sizeof(MpsJoinQueryMsg) == 32);
inline constexpr uint32_t kMpsJoinDecideNow = 1;

// kMpsJoin: join = 1: the process joins the server (its environment as launched); 0: it runs
// outside MPS, its job listed so (policy/mps_choice.h, ChooseAtArrival); kMpsJoinWait: not
// yet: the process makes no CUDA call and asks again after kMpsJoinRetryMs, on a new connection
// (the daemon bounds the wait by [mps] join_wait_seconds, then answers 0). known = 0: no such
// job, or the token does not prove it: join = 1, nothing changes for the job. free_bytes: the
// GPU's memory free of every job's need at the answer (the ledger's; 0 when unknown, or when
// the job is no client).
struct MpsJoinMsg {
  uint32_t join;
  uint32_t known;
  uint64_t free_bytes;
};
static_assert(sizeof(MpsJoinMsg) == 16);
inline constexpr uint32_t kMpsJoinWait = 2;
inline constexpr int kMpsJoinRetryMs = 200;

// kPing / kPong: a shim that heard nothing from the daemon for a while asks whether it is
// alive; no answer within GSHARE_DAEMON_TIMEOUT_MS and the shim runs ungated (docs/design.md).
struct PingMsg {
  uint64_t seq;  // echoed in kPong
};
static_assert(sizeof(PingMsg) == 8);

// Release reasons in LeaseMsg::reason for kLeaseReleased.
// kEarly: idle for less than idle_release, but another job waits and the holder expects its
// gap to outlast both handoffs (shim/lease/gap_predictor.h).
// kExit: the process is exiting; its swap-engine memory was released before (a report
// with it gone precedes the release). A checkpoint-engine process also releases with kExit,
// for any reason, once its Python interpreter is finalizing: the daemon never checkpoints
// that connection again (its memory goes with the process).
enum class ReleaseReason : uint32_t { kDropped = 0, kIdle = 1, kEarly = 2, kExit = 3 };

struct LeaseMsg {
  GpuUuid gpu;
  uint64_t epoch;   // grant number; 0 in requests
  uint64_t bytes;   // kLeaseGrant: bytes other jobs hold on `gpu` that cannot move;
                    // kLeaseContended: bytes a handoff to the next waiter would move in its
                    // larger direction (kHandoffNever: too costly to leave early for);
                    // kEvict, kSwapPrepare: see MsgType
  uint32_t reason;  // kLeaseReleased: ReleaseReason
  int32_t ordinal;  // CUDA device ordinal in the process (for display only)
};
static_assert(sizeof(LeaseMsg) == 40);

// kGapReport: one idle gap of a lease holder, from the end of a synchronizing call (the
// process waited for its GPU work) to its next submission on `gpu`; CLOCK_MONOTONIC
// nanoseconds, the clock the daemon's steady_clock reads on Linux.
struct GapMsg {
  GpuUuid gpu;
  int64_t begin_ns;
  int64_t end_ns;
  int32_t ordinal;
  uint32_t reserved;
};
static_assert(sizeof(GapMsg) == 40);
// LeaseMsg::bytes of kLeaseContended when a handoff would checkpoint or restore a process
// (seconds): never worth leaving early for.
inline constexpr uint64_t kHandoffNever = ~0ull;

// Memory engines (`--memory`, docs/memory.md "Engines").
enum class MemoryEngine : uint32_t { kOff = 0, kSwap = 1, kManaged = 2, kCheckpoint = 3 };

// MemReportMsg::flags
inline constexpr uint32_t kReportAfterSwapIn = 1;  // sent when a grant's swap-in finished
// With kReportAfterSwapIn: that swap-in did not bring everything back (no room on the GPU
// after its wait, or a driver call failed); the job gives the lease back and asks again.
inline constexpr uint32_t kReportSwapInFailed = 2;

// One process's ledger entry for one GPU. Sizes in bytes, times in nanoseconds.
struct MemReportMsg {
  GpuUuid gpu;
  int32_t ordinal;
  uint32_t engine;      // MemoryEngine
  uint64_t total;       // device memory as the driver reports it (cuDeviceTotalMem)
  uint64_t allocated;   // device memory the process holds (the engine's and the driver's)
  uint64_t resident;    // of which is on the GPU now
  uint64_t fixed;       // of which can never be evicted (allocated past the engine, exported)
  uint64_t demand;      // an allocation waits for this much room (0: none)
  uint64_t host_bytes;  // pinned host memory set aside for swapped data
  uint64_t swaps_out;   // evictions that moved memory to the host, so far
  uint64_t swaps_in;    // swap-ins that moved memory back, so far
  uint64_t bytes_out;
  uint64_t bytes_in;
  uint64_t swap_ns;       // time spent moving memory, both ways
  uint64_t epoch;         // kReportAfterSwapIn: the grant
  uint64_t swapin_ns;     // kReportAfterSwapIn: how long that swap-in took
  uint64_t swapin_bytes;  // kReportAfterSwapIn: bytes it moved
  uint32_t flags;
  // Milliseconds the process's submissions on `gpu` waited for higher priorities so far
  // (priority lanes, gshare/priority_board.h); saturates.
  uint32_t held_ms;
  // Of the resident bytes, those with a current copy in host memory (kSwapStage): they leave
  // the GPU without a copy when evicted, in the time it takes to unmap them.
  uint64_t staged;
  // Of the allocated bytes that are not resident, those never backed yet (address space the
  // swap engine reserved while the process did not run there): neither on the GPU nor in host
  // memory. They need room at the next swap-in, but hold no host memory.
  uint64_t fresh;
  // Bytes populated of the host pool the process shares with its owner's other processes
  // (kHostPool); 0: its pool is its own, and host_bytes is all of it. Shared: host_bytes is
  // the process's own part of the pool (its swapped and staged copies).
  uint64_t shared_pool;
  // kReportAfterSwapIn: of swapin_ns, the time the swap-in waited for room that another job's
  // memory held (the room came free while it waited, or it gave up: kReportSwapInFailed).
  uint64_t swapin_wait_ns;
};
static_assert(sizeof(MemReportMsg) == 176);

// Encodes a header for `type` with `length` payload bytes.
inline FrameHeader MakeHeader(MsgType type, uint32_t length) {
  return FrameHeader{kMagic, kVersion, static_cast<uint16_t>(type), length, 0};
}

inline bool IsKnownType(uint16_t t) {
  switch (static_cast<MsgType>(t)) {
    case MsgType::kHello:
    case MsgType::kLeaseRequest:
    case MsgType::kLeaseReleased:
    case MsgType::kMemReport:
    case MsgType::kGapReport:
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMemoryQuery:
    case MsgType::kMemoryView:
    case MsgType::kHostPoolQuery:
    case MsgType::kHostPool:
    case MsgType::kMpsJoinQuery:
    case MsgType::kMpsJoin:
    case MsgType::kLeaseGrant:
    case MsgType::kLeaseDrop:
    case MsgType::kLeaseContended:
    case MsgType::kEvict:
    case MsgType::kSwapPrepare:
    case MsgType::kGapWatch:
    case MsgType::kStretchGap:
    case MsgType::kBoardSeat:
    case MsgType::kSwapStage:
    case MsgType::kRunRegister:
    case MsgType::kRunStarted:
    case MsgType::kRunEnded:
    case MsgType::kStatusRequest:
    case MsgType::kSchedulerSet:
    case MsgType::kShutdown:
    case MsgType::kSubmit:
    case MsgType::kJobControl:
    case MsgType::kClean:
    case MsgType::kRunAttach:
    case MsgType::kListJobs:
    case MsgType::kQueueSet:
    case MsgType::kTimeline:
    case MsgType::kSlurmStep:
    case MsgType::kSlurmJob:
    case MsgType::kReply:
    case MsgType::kRunAdmitted: return true;
  }
  return false;
}

// Payload size a binary message must have exactly; 0 for JSON messages (any length up to
// the limit, non-empty).
inline uint32_t FixedPayloadSize(MsgType t) {
  switch (t) {
    case MsgType::kHello: return sizeof(HelloMsg);
    case MsgType::kMemReport: return sizeof(MemReportMsg);
    case MsgType::kGapReport: return sizeof(GapMsg);
    case MsgType::kPing:
    case MsgType::kPong: return sizeof(PingMsg);
    case MsgType::kMemoryQuery: return sizeof(MemQueryMsg);
    case MsgType::kMemoryView: return sizeof(MemViewMsg);
    case MsgType::kHostPoolQuery: return sizeof(HostPoolQueryMsg);
    case MsgType::kHostPool: return sizeof(HostPoolMsg);
    case MsgType::kMpsJoinQuery: return sizeof(MpsJoinQueryMsg);
    case MsgType::kMpsJoin: return sizeof(MpsJoinMsg);
    case MsgType::kLeaseRequest:
    case MsgType::kLeaseReleased:
    case MsgType::kLeaseGrant:
    case MsgType::kLeaseDrop:
    case MsgType::kLeaseContended:
    case MsgType::kEvict:
    case MsgType::kSwapPrepare:
    case MsgType::kGapWatch:
    case MsgType::kStretchGap:
    case MsgType::kBoardSeat:
    case MsgType::kSwapStage: return sizeof(LeaseMsg);
    default: return 0;
  }
}

enum class HeaderCheck { kOk, kBadMagic, kBadVersion, kBadType, kBadLength };

// Validates a received header against `max_payload`. Binary messages must have exactly
// their struct's size; JSON messages 1..max_payload bytes.
inline HeaderCheck CheckHeader(const FrameHeader& h, uint32_t max_payload) {
  if (h.magic != kMagic) return HeaderCheck::kBadMagic;
  if (h.version != kVersion) return HeaderCheck::kBadVersion;
  if (!IsKnownType(h.type)) return HeaderCheck::kBadType;
  uint32_t fixed = FixedPayloadSize(static_cast<MsgType>(h.type));
  if (fixed != 0) return h.length == fixed ? HeaderCheck::kOk : HeaderCheck::kBadLength;
  if (h.length == 0 || h.length > max_payload) return HeaderCheck::kBadLength;
  return HeaderCheck::kOk;
}

}  // namespace gshare::proto
