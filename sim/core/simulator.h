// The discrete-event loop. A Simulator owns its clock and pending events; there is no global
// state, so several simulators can run side by side (in one test, or one per sweep point).
// Scheduling in the past is a bug and trips an assertion.
#pragma once

#include <cstdint>

#include "core/event_queue.h"
#include "core/time.h"

namespace fleetsim {

class Simulator {
 public:
  Time now() const { return now_; }
  EventId schedule_at(Time at, EventHandler* handler, uint64_t tag = 0);
  EventId schedule_in(Time delay, EventHandler* handler, uint64_t tag = 0) {
    return schedule_at(now_ + delay, handler, tag);
  }
  bool cancel(EventId id) { return queue_.cancel(id); }
  bool is_pending(EventId id) const { return queue_.is_pending(id); }

  // Runs events until none is left, stop() is called, or the next event is after `until`
  // (the clock then advances to `until` if it is finite). Returns the number of events run.
  uint64_t run(Time until = Time::infinite());
  void stop() { stopped_ = true; }

  uint64_t events_executed() const { return executed_; }
  size_t pending() const { return queue_.size(); }
  void reserve(size_t n) { queue_.reserve(n); }

 private:
  EventQueue queue_;
  Time now_ = Time::zero();
  uint64_t executed_ = 0;
  bool stopped_ = false;
};

}  // namespace fleetsim
