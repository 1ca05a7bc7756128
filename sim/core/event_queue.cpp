#include "core/event_queue.h"

#include "core/error.h"

namespace fleetsim {

void EventQueue::reserve(size_t n) {
  heap_.reserve(n);
  slots_.reserve(n);
  free_slots_.reserve(n);
}

EventId EventQueue::push(Time at, EventHandler* handler, uint64_t tag) {
  FLEETSIM_ASSERT(handler != nullptr);
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back(Slot{nullptr, 0, 0, false});
  }
  Slot& s = slots_[slot];
  s.handler = handler;
  s.tag = tag;
  s.pending = true;
  heap_.push_back(Entry{at.ps(), next_seq_++, slot, s.generation});
  sift_up(heap_.size() - 1);
  ++live_;
  return EventId{slot, s.generation};
}

bool EventQueue::is_pending(EventId id) const {
  return id.valid() && id.slot < slots_.size() && slots_[id.slot].pending &&
         slots_[id.slot].generation == id.generation;
}

bool EventQueue::cancel(EventId id) {
  if (!is_pending(id)) return false;
  Slot& s = slots_[id.slot];
  s.pending = false;
  ++s.generation;  // the heap entry is now stale; its slot is freed when it is popped
  --live_;
  return true;
}

void EventQueue::drop_stale_top() {
  while (!heap_.empty()) {
    const Entry& top = heap_.front();
    if (slots_[top.slot].generation == top.generation) return;
    free_slots_.push_back(top.slot);
    pop_top();
  }
}

Time EventQueue::peek_time() {
  drop_stale_top();
  return heap_.empty() ? Time::infinite() : Time::from_ps(heap_.front().time_ps);
}

bool EventQueue::pop(Fired* out) {
  drop_stale_top();
  if (heap_.empty()) return false;
  const Entry top = heap_.front();
  Slot& s = slots_[top.slot];
  *out = Fired{Time::from_ps(top.time_ps), s.handler, s.tag};
  s.pending = false;
  ++s.generation;
  free_slots_.push_back(top.slot);
  pop_top();
  --live_;
  return true;
}

void EventQueue::pop_top() {
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
}

void EventQueue::sift_up(size_t i) {
  const Entry e = heap_[i];
  while (i > 0) {
    size_t parent = (i - 1) / 4;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::sift_down(size_t i) {
  const size_t n = heap_.size();
  const Entry e = heap_[i];
  for (;;) {
    size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    size_t last = first + 4 < n ? first + 4 : n;
    for (size_t c = first + 1; c < last; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], e)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

}  // namespace fleetsim
