#include "core/event_queue.h"

#include <algorithm>

#include "core/error.h"

namespace fleetsim {
namespace {

__extension__ using U128 = unsigned __int128;

uint64_t saturating_add(uint64_t a, U128 b) {
  const U128 s = static_cast<U128>(a) + b;
  return s > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(s);
}

}  // namespace

uint64_t EventQueue::Rung::start() const {
  return std::min(end, saturating_add(base, static_cast<U128>(cur) * width));
}

void EventQueue::reserve(size_t n) {
  top_.reserve(n);
  slots_.reserve(n);
  free_slots_.reserve(n);
  rungs_.reserve(kMaxRungs);
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
  if (next_seq_ >= seq_limit_) renumber();
  insert(Entry{key_of(at), (next_seq_++ << 32) | slot});
  ++live_;
  return EventId{slot, s.generation};
}

void EventQueue::insert(const Entry& e) {
  if (e.hi < boundary_) {
    heap_push(e);
    return;
  }
  for (size_t r = nrungs_; r-- > 0;) {
    Rung& g = rungs_[r];
    if (e.hi < g.end) {
      g.buckets[(e.hi - g.base) / g.width].push_back(e);
      return;
    }
  }
  top_.push_back(e);
  top_min_ = std::min(top_min_, e.hi);
  top_max_ = std::max(top_max_, e.hi);
}

bool EventQueue::is_pending(EventId id) const {
  return id.valid() && id.slot < slots_.size() && slots_[id.slot].pending &&
         slots_[id.slot].generation == id.generation;
}

bool EventQueue::cancel(EventId id) {
  if (!is_pending(id)) return false;
  Slot& s = slots_[id.slot];
  s.pending = false;
  ++s.generation;  // the entry is now stale; its slot is freed when it is dropped at the top
  --live_;
  return true;
}

// Spreads `from` (keys in [lo, hi], all < end unless end saturated) over rung `g` covering
// [lo, end) with about kPerBucket entries per bucket, and empties `from`.
void EventQueue::spread(Rung& g, uint64_t lo, uint64_t hi, uint64_t end, std::vector<Entry>& from) {
  const uint64_t want = std::max<uint64_t>(1, from.size() / kPerBucket);
  g.base = lo;
  g.width = (hi - lo) / want + 1;  // want·width > hi − lo: every key of `from` has a bucket
  g.end = end;
  // The rung must cover up to `end` (later pushes may land anywhere before it), but with at
  // most 4·want buckets, even when the present keys cluster at the start of a wide range.
  const U128 span = static_cast<U128>(end - lo);
  const U128 min_width = (span + 4 * want - 1) / (4 * want);
  if (min_width > g.width) g.width = static_cast<uint64_t>(min_width);
  g.count = static_cast<size_t>((span + g.width - 1) / g.width);
  g.cur = 0;
  if (g.buckets.size() < g.count) g.buckets.resize(g.count);
  for (const Entry& e : from) {
    const size_t b = std::min<uint64_t>((e.hi - lo) / g.width, g.count - 1);
    g.buckets[b].push_back(e);
  }
  from.clear();
}

// Moves the next batch of events into the (empty) bottom. False when nothing is left.
bool EventQueue::refill() {
  // References into rungs_ are held across emplace_back below: never reallocate.
  if (rungs_.capacity() < kMaxRungs) rungs_.reserve(kMaxRungs);
  for (;;) {
    if (nrungs_ == 0) {
      if (top_.empty()) return false;
      if (top_min_ == top_max_ || top_.size() <= kSpawnThreshold) {
        // Few events, or all at one time: the heap takes them directly.
        load_run(top_);
        top_start_ = saturating_add(top_max_, 1);
        boundary_ = top_start_;
      } else {
        if (rungs_.empty()) rungs_.emplace_back();
        const uint64_t want = std::max<uint64_t>(1, top_.size() / kPerBucket);
        const uint64_t width = (top_max_ - top_min_) / want + 1;
        const uint64_t end = saturating_add(top_min_, static_cast<U128>(want) * width);
        spread(rungs_[0], top_min_, top_max_, end, top_);
        nrungs_ = 1;
        top_start_ = end;
        boundary_ = top_min_;
      }
      top_min_ = UINT64_MAX;
      top_max_ = 0;
      if (head_ < run_.size()) return true;
      continue;
    }
    Rung& g = rungs_[nrungs_ - 1];
    while (g.cur < g.count && g.buckets[g.cur].empty())
      ++g.cur;
    if (g.cur == g.count) {  // rung spent: its range is over, the shallower rung follows
      --nrungs_;
      boundary_ = nrungs_ > 0 ? rungs_[nrungs_ - 1].start() : top_start_;
      continue;
    }
    std::vector<Entry>& bucket = g.buckets[g.cur];
    const uint64_t bstart = g.base + g.cur * g.width;
    ++g.cur;
    boundary_ = g.start();
    if (bucket.size() > kSpawnThreshold && g.width > 1 && nrungs_ < kMaxRungs) {
      uint64_t lo = UINT64_MAX, hi = 0;
      for (const Entry& e : bucket) {
        lo = std::min(lo, e.hi);
        hi = std::max(hi, e.hi);
      }
      if (lo != hi) {
        // A finer rung over this bucket's range [bstart, boundary_); keys below the lowest
        // present one may still be pushed, so the rung starts at bstart.
        if (rungs_.size() == nrungs_) rungs_.emplace_back();
        Rung& fine = rungs_[nrungs_];  // `g` and `bucket` stay valid: no reallocation after
        spread(fine, bstart, hi, boundary_, bucket);
        ++nrungs_;
        boundary_ = bstart;
        continue;
      }
    }
    load_run(bucket);
    return true;
  }
}

// Makes `from` the sorted run (its old, spent buffer goes back to `from`, empty).
void EventQueue::load_run(std::vector<Entry>& from) {
  run_.clear();
  run_.swap(from);
  head_ = 0;
  std::sort(run_.begin(), run_.end(), ByKey{});
}

const EventQueue::Entry* EventQueue::front() {
  if (head_ == run_.size() && heap_.empty() && !refill()) return nullptr;
  if (head_ == run_.size()) return &heap_.front();
  if (heap_.empty() || before(run_[head_], heap_.front())) return &run_[head_];
  return &heap_.front();
}

void EventQueue::pop_front(const Entry* f) {
  if (!heap_.empty() && f == heap_.data()) {
    heap_pop();
  } else {
    ++head_;
  }
}

void EventQueue::heap_push(const Entry& e) {
  size_t p = heap_.size();
  heap_.push_back(e);
  Entry* h = heap_.data();
  while (p > 0) {
    const size_t parent = (p - 1) / 4;
    if (!before(e, h[parent])) break;
    h[p] = h[parent];
    p = parent;
  }
  h[p] = e;
}

// Removes the heap's root: the hole moves down to a leaf along the smaller children and the
// former last entry is sifted up from there (it nearly always belongs near the bottom).
void EventQueue::heap_pop() {
  const Entry moved = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return;
  Entry* h = heap_.data();
  size_t hole = 0;
  for (;;) {
    const size_t first = 4 * hole + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t last = std::min(first + 4, n);
    for (size_t c = first + 1; c < last; ++c) {
      if (before(h[c], h[best])) best = c;
    }
    h[hole] = h[best];
    hole = best;
  }
  while (hole > 0) {
    const size_t parent = (hole - 1) / 4;
    if (!before(moved, h[parent])) break;
    h[hole] = h[parent];
    hole = parent;
  }
  h[hole] = moved;
}

const EventQueue::Entry* EventQueue::live_front() {
  for (;;) {
    const Entry* f = front();
    if (f == nullptr) return nullptr;
    const uint32_t slot = static_cast<uint32_t>(f->lo);
    if (slots_[slot].pending) return f;
    free_slots_.push_back(slot);
    pop_front(f);
  }
}

Time EventQueue::peek_time() {
  const Entry* f = live_front();
  return f == nullptr ? Time::infinite() : time_of(f->hi);
}

bool EventQueue::pop(Fired* out) {
  return pop_until(Time::infinite(), out);
}

bool EventQueue::pop_until(Time until, Fired* out) {
  const Entry* f = live_front();
  if (f == nullptr || f->hi > key_of(until)) return false;
  const Entry top = *f;
  const uint32_t slot = static_cast<uint32_t>(top.lo);
  Slot& s = slots_[slot];
  *out = Fired{time_of(top.hi), s.handler, s.tag};
  s.pending = false;
  ++s.generation;
  free_slots_.push_back(slot);
  pop_front(f);
  --live_;
  // The next pop most likely reads the next entry of the run: start its slot's likely cache
  // miss now, so it overlaps with the handler about to run.
  if (head_ < run_.size()) __builtin_prefetch(&slots_[static_cast<uint32_t>(run_[head_].lo)]);
  return true;
}

// Reassigns sequence numbers 0..n-1 in (time, sequence) order, so relative (tie) order is
// unchanged, and restarts the ladder with every entry in the top.
void EventQueue::renumber() {
  for (size_t r = 0; r < nrungs_; ++r) {
    Rung& g = rungs_[r];
    for (size_t b = g.cur; b < g.count; ++b) {
      top_.insert(top_.end(), g.buckets[b].begin(), g.buckets[b].end());
      g.buckets[b].clear();
    }
  }
  nrungs_ = 0;
  top_.insert(top_.end(), heap_.begin(), heap_.end());
  heap_.clear();
  top_.insert(top_.end(), run_.begin() + static_cast<std::ptrdiff_t>(head_), run_.end());
  run_.clear();
  head_ = 0;
  std::sort(top_.begin(), top_.end(), ByKey{});
  top_min_ = UINT64_MAX;
  top_max_ = 0;
  for (size_t i = 0; i < top_.size(); ++i) {
    top_[i].lo = (static_cast<uint64_t>(i) << 32) | (top_[i].lo & 0xffffffffULL);
    top_min_ = std::min(top_min_, top_[i].hi);
    top_max_ = std::max(top_max_, top_[i].hi);
  }
  top_start_ = 0;
  boundary_ = 0;
  next_seq_ = top_.size();
  ++renumberings_;
}

}  // namespace fleetsim
