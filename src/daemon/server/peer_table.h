// PeerTable: the daemon's peers as byte streams (the transport under the daemon's requests
// and lease messages): accepts connections, reads frames without blocking, writes what the
// daemon sends from bounded buffers. Time comes in as arguments. Not thread-safe: the
// daemon's event loop is its only caller.
//
// It enforces the bounds that keep one slow, hung or hostile peer from blocking the loop or
// growing the daemon (docs/design.md, "Connections"): output per peer and per user, input over
// all peers and per user, a deadline for an incomplete frame, for output not taken and for a
// first frame, back-pressure (a peer with replies it has not taken is not read further), a
// limit on connections and a pause of accept() when descriptors run out. It knows nothing of
// what a frame means: frames, losses and erasures go to its PeerEvents.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/server/log_throttle.h"
#include "gshare/protocol.h"
#include "ipc/frame_io.h"
#include "policy/types.h"

namespace gshare {

// What the owner of a PeerTable hears. Every call may re-enter the table (Send, Close).
class PeerEvents {
 public:
  virtual ~PeerEvents() = default;
  // A new peer, identified by the kernel (SO_PEERCRED). Return false to refuse it (it is
  // closed at once and never reported again).
  virtual bool OnAccepted(ConnId id, pid_t pid, uid_t uid) = 0;
  // One complete frame of peer `id`, in the order received.
  virtual void OnFrame(ConnId id, const Frame& frame) = 0;
  // The table closed peer `id` (end of stream, a socket error, a bound passed; `why` says
  // which, empty for an orderly end of stream). Not called for a Close() by the owner.
  virtual void OnLost(ConnId id, const std::string& why) = 0;
  // Peer `id`'s descriptor is closed and its entry gone (Reap): the owner forgets it.
  virtual void OnReaped(ConnId id) = 0;
};

class PeerTable {
 public:
  struct Limits {
    size_t max_connections = 4096;  // every process of every job holds one
    // Unsent bytes per peer: one status reply at its largest, plus lease messages.
    size_t max_output_bytes = proto::kMaxReplyPayload + (1u << 20);
    // Unsent bytes over one uid's peers: a user's connections that ask for replies and do not
    // read them hold at most this much of the daemon's memory (four largest replies).
    size_t max_output_bytes_per_uid = 4ull * proto::kMaxReplyPayload;
    // Received bytes not yet dispatched, over all peers (16 requests at their largest).
    size_t max_buffered_input = 16ull * proto::kMaxRequestPayload;
    // The same over one uid's peers (4 requests at their largest), so that one user's half
    // frames cannot fill the bound above and have everyone else's requests refused.
    size_t max_buffered_input_per_uid = 4ull * proto::kMaxRequestPayload;
    // gshare's clients send each frame with one write: a frame that stays incomplete this
    // long, or output a peer does not take for this long, is a stalled or hostile peer.
    Millis peer_deadline{10000};
    // Every gshare client sends its first frame as soon as it connects (a shim its hello, a
    // runner its registration, a CLI its request): a peer that has sent no complete frame
    // this long after it connected only holds a descriptor. Once it has sent one it may stay
    // idle (a shim between leases, a `gshare run` for hours).
    Millis first_frame_deadline{10000};
    Millis accept_backoff{100};  // pause of accept() after EMFILE/ENFILE
    // Reads per readiness event of one peer, so that one large request does not take whole
    // poll rounds from everyone else.
    size_t read_per_event = 1u << 20;
  };

  // `events` must outlive the table. `max_payload`: the largest frame payload accepted.
  PeerTable(PeerEvents* events, Limits limits, uint32_t max_payload);
  ~PeerTable();  // closes every descriptor, reporting nothing
  PeerTable(const PeerTable&) = delete;
  PeerTable& operator=(const PeerTable&) = delete;

  // Accepts every connection pending on `listen_fd` (non-blocking), or pauses accepting until
  // now + accept_backoff when descriptors or memory run out.
  void Accept(int listen_fd, TimePoint now);
  // Takes a connected socket of process `pid` of `uid` as a peer (Accept; tests: a socketpair
  // end), connected `now`. The table owns it.
  ConnId Adopt(int fd, pid_t pid, uid_t uid, TimePoint now);
  // Adds the listening socket (first; -1 while accepting is paused) and then one entry per
  // open peer to `fds`, and the peers' ids to `ids` (ids[i] for fds[i + 1]).
  void PollSet(int listen_fd, TimePoint now, std::vector<pollfd>* fds, std::vector<ConnId>* ids);
  // Handles what poll() reported for peer `id`: writes pending output, reads and dispatches.
  void OnPollEvents(ConnId id, short revents, TimePoint now);

  // Queues `bytes` for peer `id` and writes what its socket takes now, without blocking.
  // False when the peer is closed or gone, or when this send passes max_output_bytes (the
  // peer is then lost: OnLost).
  bool Send(ConnId id, std::string_view bytes, TimePoint now);
  // Sends `bytes` with a copy of descriptor `fd` (SCM_RIGHTS, with the first byte) when peer
  // `id` has no output pending, queuing what its socket does not take at once; false (nothing
  // sent) when output is pending or the socket takes nothing now.
  bool SendWithFd(ConnId id, std::string_view bytes, int fd, TimePoint now);
  // Marks peer `id` closed (its output dropped, nothing read or dispatched again); the
  // descriptor closes at the next Reap. No OnLost. Safe to call again.
  void Close(ConnId id);
  // Closes and erases the peers closed since the last call, calling OnReaped for each.
  void Reap();
  // Loses the peers past their deadline; returns the earliest deadline still ahead.
  std::optional<TimePoint> Expire(TimePoint now);
  // A peer whose messages must never wait behind its own unread output (the shims: lease
  // messages go both ways at once): back-pressure does not apply to it.
  void SetExempt(ConnId id);
  // Gives pending output up to `budget` to leave (a shutdown's own reply).
  void FlushAll(Millis budget);

  bool IsOpen(ConnId id) const;
  size_t size() const { return peers_.size(); }
  size_t buffered_input() const { return buffered_in_; }
  // Connections refused because max_connections were open.
  uint64_t refused() const { return refused_; }
  std::optional<TimePoint> accept_paused_until() const { return accept_paused_until_; }

 private:
  struct Peer {
    int fd = -1;
    uid_t uid = 0;
    FrameBuffer in;
    std::string out;  // bytes not yet taken by the socket
    bool closing = false;
    bool exempt = false;
    std::optional<TimePoint> partial_since;  // an incomplete frame began arriving then
    TimePoint out_since{};                   // `out` became non-empty, or last moved
    std::optional<TimePoint> silent_since;   // connected then and no complete frame yet
    explicit Peer(uint32_t max_payload) : in(max_payload) {}
  };
  // Per uid over its peers not reaped yet: bytes received not yet dispatched, bytes not yet
  // sent.
  struct UidBytes {
    size_t peers = 0;
    size_t in = 0;
    size_t out = 0;
  };
  Peer* Open(ConnId id);
  bool Blocked(const Peer& p) const { return !p.out.empty() && !p.exempt; }
  void Lose(ConnId id, const std::string& why);
  void Flush(ConnId id, TimePoint now);
  void Read(ConnId id, TimePoint now);
  void Dispatch(ConnId id, TimePoint now);

  PeerEvents* events_;
  Limits limits_;
  uint32_t max_payload_;
  std::string silent_why_;  // why a peer past first_frame_deadline is lost
  ConnId next_id_ = 1;
  std::map<ConnId, std::unique_ptr<Peer>> peers_;
  size_t buffered_in_ = 0;               // sum of the peers' unparsed input
  std::map<uid_t, UidBytes> uid_bytes_;  // uids with peers
  std::optional<TimePoint> accept_paused_until_;
  LogThrottle refusals_{1, std::chrono::minutes(1)};  // one user may knock at any rate
  uint64_t refused_ = 0;
};

}  // namespace gshare
