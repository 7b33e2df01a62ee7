#include "policy/priority_seats.h"

#include <algorithm>

namespace gshare {

bool PrioritySeats::Sit(const GpuKey& gpu, int slot, ConnId conn, int priority) {
  Table& t = tables_[gpu];
  t.slot = slot;
  int free_seat = -1;
  for (int s = 0; s < kSeats; ++s) {
    auto it = t.seats.find(s);
    if (it == t.seats.end()) {
      if (free_seat < 0) free_seat = s;
    } else if (it->second.first == conn) {
      return true;
    }
  }
  if (free_seat < 0) return false;
  t.seats[free_seat] = {conn, priority};
  for (const auto& [s, who] : t.seats) dirty_.insert({who.first, gpu});
  return true;
}

std::vector<PrioritySeats::Freed> PrioritySeats::Leave(ConnId conn) {
  std::vector<Freed> freed;
  for (auto& [gpu, t] : tables_) {
    for (auto it = t.seats.begin(); it != t.seats.end();) {
      if (it->second.first != conn) {
        ++it;
        continue;
      }
      freed.push_back({t.slot, it->first});
      it = t.seats.erase(it);
      for (const auto& [s, who] : t.seats) dirty_.insert({who.first, gpu});
    }
  }
  // A connection that left is told nothing more: what it was sent is forgotten.
  for (auto it = sent_.begin(); it != sent_.end();) {
    it = it->first.first == conn ? sent_.erase(it) : std::next(it);
  }
  for (auto it = dirty_.begin(); it != dirty_.end();) {
    it = it->first == conn ? dirty_.erase(it) : std::next(it);
  }
  return freed;
}

void PrioritySeats::SetPriority(ConnId conn, int priority) {
  for (auto& [gpu, t] : tables_) {
    bool changed = false;
    for (auto& [s, who] : t.seats) {
      if (who.first == conn && who.second != priority) {
        who.second = priority;
        changed = true;
      }
    }
    if (!changed) continue;
    for (const auto& [s, who] : t.seats) dirty_.insert({who.first, gpu});
  }
}

PrioritySeats::Seat PrioritySeats::Compute(const Table& t, int seat) const {
  Seat out;
  out.slot = t.slot;
  out.seat = seat;
  const int mine = t.seats.at(seat).second;
  int top = mine;
  for (const auto& [s, who] : t.seats) {
    if (who.second > mine) out.yield_mask |= uint64_t{1} << s;
    if (who.second < mine) out.watched = true;
    top = std::max(top, who.second);
  }
  for (const auto& [s, who] : t.seats) out.yielders += who.second < top ? 1 : 0;
  return out;
}

std::vector<PrioritySeats::Change> PrioritySeats::TakeChanges() {
  std::vector<Change> out;
  for (const auto& key : dirty_) {
    const auto& [conn, gpu] = key;
    std::optional<Seat> now;
    if (auto t = tables_.find(gpu); t != tables_.end()) {
      for (const auto& [s, who] : t->second.seats) {
        if (who.first == conn) now = Compute(t->second, s);
      }
    }
    auto sent = sent_.find(key);
    if (now && (sent == sent_.end() || !(sent->second == *now))) {
      sent_[key] = *now;
      out.push_back({conn, gpu, now});
    } else if (!now && sent != sent_.end()) {
      sent_.erase(sent);
      out.push_back({conn, gpu, std::nullopt});
    }
  }
  dirty_.clear();
  return out;
}

std::optional<PrioritySeats::Seat> PrioritySeats::SeatOf(ConnId conn, const GpuKey& gpu) const {
  auto t = tables_.find(gpu);
  if (t == tables_.end()) return std::nullopt;
  for (const auto& [s, who] : t->second.seats) {
    if (who.first == conn) return Compute(t->second, s);
  }
  return std::nullopt;
}

std::vector<PrioritySeats::Seated> PrioritySeats::SeatedAt(const GpuKey& gpu) const {
  std::vector<Seated> out;
  auto t = tables_.find(gpu);
  if (t == tables_.end()) return out;
  for (const auto& [s, who] : t->second.seats) out.push_back({who.first, s, who.second});
  return out;
}

}  // namespace gshare
