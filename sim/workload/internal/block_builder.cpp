#include "workload/internal/block_builder.h"

#include <algorithm>

namespace fleetsim::step_internal {

__extension__ typedef __int128 I128;  // exact products of two picosecond differences

std::vector<HostLine> upper_envelope(std::vector<HostLine> lines) {
  // By slope, and for equal slopes the highest line only.
  std::sort(lines.begin(), lines.end(), [](const HostLine& x, const HostLine& y) {
    return x.b != y.b ? x.b < y.b : x.a > y.a;
  });
  std::vector<HostLine> hull;
  for (const HostLine& l : lines) {
    if (!hull.empty() && hull.back().b == l.b) continue;  // lower line of the same slope
    // A line below l at s = 0 with a smaller slope is below it for every s > 0.
    while (!hull.empty() && hull.back().a <= l.a)
      hull.pop_back();
    // The top line is useless when l overtakes the one before it no later than it does:
    // (a1 − a3)·(b2 − b1) ≤ (a1 − a2)·(b3 − b1) for lines 1, 2 (top), 3 (l).
    while (hull.size() >= 2) {
      const HostLine& l1 = hull[hull.size() - 2];
      const HostLine& l2 = hull.back();
      const I128 lhs = static_cast<I128>(l1.a.ps() - l.a.ps()) * (l2.b.ps() - l1.b.ps());
      const I128 rhs = static_cast<I128>(l1.a.ps() - l2.a.ps()) * (l.b.ps() - l1.b.ps());
      if (lhs > rhs) break;
      hull.pop_back();
    }
    hull.push_back(l);
  }
  return hull;
}

Time host_span(const std::vector<HostLine>& span, double s) {
  int64_t best = 0;
  for (const HostLine& l : span) {
    const int64_t v =
        l.a.ps() + static_cast<int64_t>(std::llround(static_cast<double>(l.b.ps()) * s));
    best = std::max(best, v);
  }
  return Time::from_ps(best);
}

void BlockBuilder::close() {
  std::vector<HostLine> lines;
  lines.reserve(lines_.size());
  for (const Item& it : lines_)
    lines.push_back({it.host + (unscaled_ - it.unscaled), scaled_ - it.scaled});
  cur_.compute = scaled_;
  cur_.tp = unscaled_;
  cur_.host = H_;
  cur_.span = upper_envelope(std::move(lines));
  if (cur_.compute > Time::zero() || cur_.tp > Time::zero() || cur_.host > Time::zero() ||
      cur_.sync_dim >= 0 || cur_.d2h)
    blk_.segs.push_back(cur_);
  Segment next;
  next.name = cur_.name;
  next.experts = cur_.experts;
  cur_ = std::move(next);
  lines_.clear();
  H_ = scaled_ = unscaled_ = Time::zero();
}

void BlockBuilder::append(const Segment& s, Time extra) {
  if (cur_.d2h) close();
  // A line a + s·b of the appended chain, shifted by this chain's host time so far; the GPU
  // time of the appended chain counts as "before" it except the line's own suffix b.
  for (const HostLine& l : s.span)
    lines_.push_back({H_ + l.a, scaled_ + s.compute - l.b, unscaled_ + s.tp});
  H_ += s.host;
  scaled_ += s.compute;
  unscaled_ += s.tp;
  if (extra > Time::zero()) push(Time::zero(), extra, true);
}

}  // namespace fleetsim::step_internal
