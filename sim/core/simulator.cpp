#include "core/simulator.h"

#include "core/error.h"

namespace fleetsim {

EventId Simulator::schedule_at(Time at, EventHandler* handler, uint64_t tag) {
  FLEETSIM_ASSERT(at >= now_);
  return queue_.push(at, handler, tag);
}

uint64_t Simulator::run(Time until) {
  stopped_ = false;
  uint64_t count = 0;
  EventQueue::Fired ev;
  while (!stopped_) {
    if (!queue_.pop_until(until, &ev)) break;
    now_ = ev.time;
    ++count;
    ev.handler->on_event(*this, ev.tag);
  }
  executed_ += count;
  if (!stopped_ && !until.is_infinite() && now_ < until) now_ = until;
  return count;
}

}  // namespace fleetsim
