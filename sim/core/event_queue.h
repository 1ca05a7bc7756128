// Pending-event set of the discrete-event engine.
//
// A flat 4-ary min-heap of 24-byte POD entries ordered by (time, sequence number): ties resolve
// in insertion order on every run (as ns-3's schedulers do). Payloads (handler, tag) live in a
// slab indexed by slot; an EventId carries the slot and its generation, so cancel is O(1): it
// bumps the slot's generation and the stale heap entry is skipped when it reaches the top.
// Steady-state push/pop allocate nothing once the vectors have grown.
// Complexity: push O(log4 n), pop amortised O(log4 n), cancel O(1).
#pragma once

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
  // Time of the earliest live event, or Time::infinite().
  Time peek_time();
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  void reserve(size_t n);

 private:
  struct Entry {
    int64_t time_ps;
    uint64_t seq;
    uint32_t slot;
    uint32_t generation;
  };
  struct Slot {
    EventHandler* handler;
    uint64_t tag;
    uint32_t generation;
    bool pending;
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.time_ps < b.time_ps || (a.time_ps == b.time_ps && a.seq < b.seq);
  }
  void sift_up(size_t i);
  void sift_down(size_t i);
  void pop_top();
  void drop_stale_top();

  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  uint64_t next_seq_ = 0;
  size_t live_ = 0;
};

}  // namespace fleetsim
