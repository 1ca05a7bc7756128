// Pending-event set of the discrete-event engine: a ladder queue (Tang, Goh & Thng, "Ladder
// Queue: An O(1) Priority Queue Structure for Large-Scale Discrete Event Simulation", ACM TOMACS
// 15(3), 2005) whose bottom is a small 4-ary heap, ordered exactly by (time, sequence number):
// ties resolve in insertion order on every run (as ns-3's schedulers do).
//
// Structure, from the near future to the far future:
//  - bottom: the events before `boundary` (usually a few dozen): the sorted contents of the
//    last bucket taken, read in order, plus a 4-ary min-heap of events pushed there since;
//  - rungs: up to kMaxRungs calendars of equal-width buckets (unsorted vectors); the deepest rung
//    covers the time right after the boundary, each shallower rung the time after that;
//  - top: an unsorted vector of everything from `top_start_` on.
// Push appends to whichever part covers the time (the heap when before the boundary). When the
// bottom runs dry, the deepest rung's next non-empty bucket becomes the new bottom; a bucket with
// more than kSpawnThreshold events is first spread over a finer rung instead, and when the rungs
// are exhausted the top is spread over a new rung. Each event is moved a bounded number of times,
// so push and pop are O(1) amortised for the usual event-time distributions; in the worst case
// (all events in one bucket at the finest rung, or pushed ever closer to now) the bottom
// degrades gracefully to a heap, O(log n). Correctness never depends on the distribution: the
// bottom orders by the full key.
//
// Entries are 16-byte POD: hi = time (sign bit flipped so unsigned order is signed order) and
// lo = sequence << 32 | slot, so one 128-bit unsigned comparison orders two entries (sequence
// numbers are unique, the slot never decides). Payloads (handler, tag) live in a slab indexed by
// slot; an EventId carries the slot and its generation, so cancel is O(1): it marks the slot not
// pending and bumps its generation; the stale entry keeps its slot until it reaches the top of
// the bottom and is dropped. Slots are reused LIFO (a handler that reschedules itself reuses
// the slot just freed, hot in cache). Sequence numbers are 32-bit: after 2^32 pushes every
// pending entry is renumbered in order (O(n log n), once per 4·10^9 pushes), which keeps the tie
// order exact. Steady state allocates nothing once the vectors have grown.
// Complexity: push O(1), pop O(1) amortised (O(log n) worst case), cancel O(1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/time.h"

namespace fleetsim {

class Simulator;

// Receives events. `tag` is the 64-bit value given at schedule time (an index, a flow id...).
class EventHandler {
 public:
  virtual void on_event(Simulator& sim, uint64_t tag) = 0;

 protected:
  ~EventHandler() = default;
};

struct EventId {
  uint32_t slot = UINT32_MAX;
  uint32_t generation = 0;
  bool valid() const { return slot != UINT32_MAX; }
};

class EventQueue {
 public:
  struct Fired {
    Time time;
    EventHandler* handler;
    uint64_t tag;
  };

  EventId push(Time at, EventHandler* handler, uint64_t tag);
  // Returns true if the event was pending and is now cancelled.
  bool cancel(EventId id);
  bool is_pending(EventId id) const;
  // Removes the earliest live event into *out; false when none is left.
  bool pop(Fired* out);
  // Removes the earliest live event into *out if its time is <= `until`; false otherwise
  // (nothing is removed). One pass: what Simulator::run does per event.
  bool pop_until(Time until, Fired* out);
  // Time of the earliest live event, or Time::infinite().
  Time peek_time();
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  void reserve(size_t n);

  // Testing hook: renumber sequence numbers once `limit` have been handed out instead of after
  // 2^32 (limit >= 1), so tests can cross the renumbering boundary in a few pushes.
  void set_sequence_limit_for_testing(uint64_t limit) { seq_limit_ = limit; }
  // Number of renumberings so far (for tests).
  uint64_t renumberings() const { return renumberings_; }

 private:
  struct alignas(16) Entry {
    uint64_t hi;  // time_ps with the sign bit flipped
    uint64_t lo;  // sequence << 32 | slot
  };
  struct Slot {
    EventHandler* handler;
    uint64_t tag;
    uint32_t generation;
    bool pending;
  };
  // A calendar of `count` buckets of `width` keys from `base`; buckets before `cur` are spent.
  // It covers keys [base + cur·width, end).
  struct Rung {
    uint64_t base = 0;
    uint64_t width = 1;
    uint64_t end = 0;
    size_t count = 0;
    size_t cur = 0;
    std::vector<std::vector<Entry>> buckets;
    uint64_t start() const;
  };

  static constexpr size_t kMaxRungs = 8;
  static constexpr size_t kSpawnThreshold = 64;  // larger buckets are split over a finer rung
  static constexpr size_t kPerBucket = 16;       // target events per bucket of a new rung

  static bool before(const Entry& a, const Entry& b) {
    __extension__ using U128 = unsigned __int128;
    return ((static_cast<U128>(a.hi) << 64) | a.lo) < ((static_cast<U128>(b.hi) << 64) | b.lo);
  }
  // A function object (not a function pointer) so std::sort inlines the comparison.
  struct ByKey {
    bool operator()(const Entry& a, const Entry& b) const { return before(a, b); }
  };
  static uint64_t key_of(Time t) { return static_cast<uint64_t>(t.ps()) ^ (1ULL << 63); }
  static Time time_of(uint64_t hi) {
    return Time::from_ps(static_cast<int64_t>(hi ^ (1ULL << 63)));
  }

  void insert(const Entry& e);
  void heap_push(const Entry& e);
  void heap_pop();
  bool refill();
  void spread(Rung& r, uint64_t lo_key, uint64_t hi_key, uint64_t end, std::vector<Entry>& from);
  void load_run(std::vector<Entry>& from);
  const Entry*
  front();  // earliest entry (live or stale) of run_ and heap_, refilling if both are empty
  void pop_front(const Entry* f);
  const Entry* live_front();  // front() after dropping stale entries
  void renumber();

  // Bottom: the sorted run taken from a bucket, read from head_, plus a 4-ary heap for events
  // pushed below the boundary meanwhile (rare unless many events are scheduled very close to
  // now). Both hold keys < boundary_ (with no rungs, boundary_ = top_start_).
  std::vector<Entry> run_;
  size_t head_ = 0;
  std::vector<Entry> heap_;
  uint64_t boundary_ = 0;
  std::vector<Rung> rungs_;  // [0, nrungs_) in use; deeper rungs are later in the vector
  size_t nrungs_ = 0;
  std::vector<Entry> top_;
  uint64_t top_start_ = 0;
  uint64_t top_min_ = UINT64_MAX, top_max_ = 0;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  uint64_t next_seq_ = 0;
  uint64_t seq_limit_ = uint64_t{1} << 32;
  uint64_t renumberings_ = 0;
  size_t live_ = 0;
};

}  // namespace fleetsim
