#include <catch2/catch.hpp>
#include <vector>

#include "core/error.h"
#include "core/simulator.h"

using namespace fleetsim;

namespace {
struct Recorder : EventHandler {
  std::vector<std::pair<int64_t, uint64_t>> seen;
  void on_event(Simulator& sim, uint64_t tag) override { seen.emplace_back(sim.now().ps(), tag); }
};
}  // namespace

TEST_CASE("events run in (time, insertion) order") {
  Simulator sim;
  Recorder r;
  sim.schedule_at(Time::from_ps(30), &r, 1);
  sim.schedule_at(Time::from_ps(10), &r, 2);
  sim.schedule_at(Time::from_ps(30), &r, 3);
  sim.schedule_at(Time::from_ps(20), &r, 4);
  sim.schedule_at(Time::from_ps(10), &r, 5);
  CHECK(sim.run() == 5);
  const std::vector<std::pair<int64_t, uint64_t>> want = {
      {10, 2}, {10, 5}, {20, 4}, {30, 1}, {30, 3}};
  CHECK(r.seen == want);
}

TEST_CASE("cancelled events never fire and slots are reused") {
  Simulator sim;
  Recorder r;
  EventId a = sim.schedule_at(Time::from_ps(5), &r, 1);
  EventId b = sim.schedule_at(Time::from_ps(6), &r, 2);
  CHECK(sim.cancel(a));
  CHECK_FALSE(sim.cancel(a));  // second cancel is a no-op
  CHECK(sim.pending() == 1);
  sim.schedule_at(Time::from_ps(7), &r, 3);
  CHECK_FALSE(sim.is_pending(a));
  CHECK(sim.is_pending(b));
  sim.run();
  CHECK(r.seen.size() == 2);
  CHECK(r.seen[0].second == 2);
  CHECK(r.seen[1].second == 3);
}

TEST_CASE("scheduling in the past is an internal error") {
  Simulator sim;
  Recorder r;
  sim.schedule_at(Time::from_ps(100), &r, 0);
  sim.run();
  CHECK_THROWS_AS(sim.schedule_at(Time::from_ps(50), &r, 0), InternalError);
}

TEST_CASE("run(until) stops at the horizon and advances the clock") {
  Simulator sim;
  Recorder r;
  sim.schedule_at(Time::from_ps(10), &r, 0);
  sim.schedule_at(Time::from_ps(1000), &r, 1);
  CHECK(sim.run(Time::from_ps(500)) == 1);
  CHECK(sim.now().ps() == 500);
  CHECK(sim.pending() == 1);
}

TEST_CASE("a large random load pops in non-decreasing time order") {
  EventQueue q;
  struct Null : EventHandler {
    void on_event(Simulator&, uint64_t) override {}
  } h;
  uint64_t x = 12345;
  std::vector<EventId> ids;
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    ids.push_back(
        q.push(Time::from_ps(static_cast<int64_t>(x >> 40)), &h, static_cast<uint64_t>(i)));
  }
  for (size_t i = 0; i < ids.size(); i += 3)
    q.cancel(ids[i]);
  CHECK(q.size() == 20000 - 6667);
  EventQueue::Fired f;
  int64_t last = -1;
  size_t n = 0;
  while (q.pop(&f)) {
    CHECK(f.time.ps() >= last);
    CHECK(f.tag % 3 != 0);
    last = f.time.ps();
    ++n;
  }
  CHECK(n == 20000 - 6667);
}
