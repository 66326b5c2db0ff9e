#pragma once
// Per-partition in-order commit tracking for process-then-commit (kafka_transport.hpp):
// records of one partition may be settled in any order, but the offset committed for the
// partition never passes a record still in flight — it is the lowest in-flight offset, or
// one past the highest received when none is. A revoked partition forgets its records: a
// settle carrying the old assignment's epoch is reported stale (the new owner receives the
// record again).
//
// Thread-safety: none; one consumer thread owns a tracker. Pure (no librdkafka), so it is
// unit-tested directly.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace babelqueue::inline v1::kafka::detail {

class offset_tracker {
 public:
  /// Identifies one received record for its settle.
  struct ticket {
    std::int32_t partition = 0;
    std::int64_t offset = 0;
    std::uint64_t epoch = 0;
  };

  /// A partition was (re)assigned: it starts over with a new epoch.
  void assign(std::int32_t partition) { parts_[partition] = fresh(); }

  /// A partition was revoked: returns how many in-flight records are abandoned.
  std::size_t revoke(std::int32_t partition) {
    const auto it = parts_.find(partition);
    if (it == parts_.end()) return 0;
    const std::size_t n = it->second.pending();
    parts_.erase(it);
    return n;
  }

  /// Forgets every partition (the consumer closed or lost its assignment).
  void clear() { parts_.clear(); }

  /// A record was handed out.
  ticket track(std::int32_t partition, std::int64_t offset) {
    auto it = parts_.find(partition);
    if (it == parts_.end()) it = parts_.emplace(partition, fresh()).first;
    state& s = it->second;
    auto& q = s.in_flight;
    if (q.empty() || q.back().offset < offset) {
      q.push_back({offset, false});  // the usual case: offsets arrive in order
    } else {                         // after a rewind: keep the queue sorted
      auto at = std::lower_bound(q.begin(), q.end(), offset,
                                 [](const entry& e, std::int64_t o) { return e.offset < o; });
      if (at == q.end() || at->offset != offset)
        q.insert(at, {offset, false});
      else
        at->done = false;
    }
    if (offset + 1 > s.next) s.next = offset + 1;
    return {partition, offset, s.epoch};
  }

  /// A record was settled. False when it is stale (its partition was revoked since) or was
  /// settled already.
  bool settle(const ticket& t) {
    const auto it = parts_.find(t.partition);
    if (it == parts_.end() || it->second.epoch != t.epoch) return false;
    auto& q = it->second.in_flight;
    auto at = std::lower_bound(q.begin(), q.end(), t.offset,
                               [](const entry& e, std::int64_t o) { return e.offset < o; });
    if (at == q.end() || at->offset != t.offset || at->done) return false;
    at->done = true;
    while (!q.empty() && q.front().done) q.pop_front();
    return true;
  }

  /// A record given back unsettled (its partition is rewound to it): the partition's
  /// committable offset goes back to it. False when stale.
  bool rewind(const ticket& t) {
    const auto it = parts_.find(t.partition);
    if (it == parts_.end() || it->second.epoch != t.epoch) return false;
    auto& q = it->second.in_flight;
    auto at = std::lower_bound(q.begin(), q.end(), t.offset,
                               [](const entry& e, std::int64_t o) { return e.offset < o; });
    if (at != q.end() && at->offset == t.offset) q.erase(at);
    while (!q.empty() && q.front().done) q.pop_front();
    if (it->second.next > t.offset) it->second.next = t.offset;
    return true;
  }

  /// The (partition, offset) pairs to commit now — offset = the next record to consume —
  /// for every partition (or only `only`) that moved, recorded as committed.
  std::vector<std::pair<std::int32_t, std::int64_t>> take_commits(
      const std::optional<std::set<std::int32_t>>& only = std::nullopt) {
    std::vector<std::pair<std::int32_t, std::int64_t>> out;
    for (auto& [p, s] : parts_) {
      if (only && only->count(p) == 0) continue;
      const std::int64_t c = s.committable();
      if (c > s.committed) {
        out.emplace_back(p, c);
        s.committed = c;
      }
    }
    return out;
  }

 private:
  struct entry {
    std::int64_t offset;
    bool done;
  };
  struct state {
    std::uint64_t epoch = 0;
    // Records handed out, by offset; settled ones stay until everything before them is
    // settled too (so the front is the lowest unsettled record).
    std::deque<entry> in_flight;
    std::int64_t next = -1;       // one past the highest offset received; -1 = none yet
    std::int64_t committed = -1;  // the last offset committed by this assignment
    std::int64_t committable() const {
      return in_flight.empty() ? next : std::min(next, in_flight.front().offset);
    }
    std::size_t pending() const {
      return static_cast<std::size_t>(std::count_if(in_flight.begin(), in_flight.end(),
                                                    [](const entry& e) { return !e.done; }));
    }
  };
  state fresh() {
    state s;
    s.epoch = ++epochs_;
    return s;
  }
  std::map<std::int32_t, state> parts_;
  std::uint64_t epochs_ = 0;
};

}  // namespace babelqueue::inline v1::kafka::detail
