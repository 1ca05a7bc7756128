#include "net/path_table.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "core/error.h"

namespace fleetsim {
namespace {

uint64_t hop_hash(const PathHop& p) {
  uint64_t x = (static_cast<uint64_t>(p.link) << 32) ^ std::bit_cast<uint64_t>(p.weight);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

// Order-independent (a sum over hops), so every rotation of a fabric run hashes alike and the
// loop has no dependency chain.
uint64_t hash_hops(std::span<const PathHop> hops) {
  uint64_t h = hops.size() * 0x9e3779b97f4a7c15ULL;
  for (const PathHop& p : hops)
    h += hop_hash(p);
  return h;
}

bool same_hop(const PathHop& a, const PathHop& b) {
  return a.link == b.link && a.weight == b.weight;
}

// Whether `b` is `a` rotated by `shift` hops.
bool same_rotated(std::span<const PathHop> a, std::span<const PathHop> b, size_t shift) {
  if (a.size() != b.size()) return false;
  const size_t n = a.size();
  for (size_t i = 0; i + shift < n; ++i) {
    if (!same_hop(a[i], b[i + shift])) return false;
  }
  for (size_t i = n - shift; i < n; ++i) {
    if (!same_hop(a[i], b[i + shift - n])) return false;
  }
  return true;
}

}  // namespace

PathTable::PathTable(const std::vector<Link>& links) {
  fabric_.reserve(links.size());
  for (const Link& l : links)
    fabric_.push_back(l.kind == LinkKind::kLeafSpine || l.kind == LinkKind::kSpineCore ? 1 : 0);
  single_.assign(links.size(), kNone);
}

uint32_t PathTable::segment(std::span<const PathHop> hops) {
  return intern(hops, 0);
}

// Interns the segment whose hops are `hops` rotated left by `shift`.
uint32_t PathTable::intern(std::span<const PathHop> hops, size_t shift) {
  FLEETSIM_ASSERT(!hops.empty());
  const bool single = hops.size() == 1 && hops[0].weight == 1.0;
  if (single && hops[0].link >= single_.size()) single_.resize(hops[0].link + 1, kNone);
  if (single && single_[hops[0].link] != kNone) return single_[hops[0].link];
  const uint64_t h = hash_hops(hops);
  uint32_t head = kNone;
  if (!single) {
    auto it = by_hash_.find(h);
    if (it != by_hash_.end()) {
      head = it->second;
      for (uint32_t s = head; s != kNone; s = seg_next_[s]) {
        if (same_rotated(segment_hops(s), hops, shift)) return s;
      }
    }
  }
  const uint32_t id = static_cast<uint32_t>(segments());
  const auto at = hops.begin() + static_cast<std::ptrdiff_t>(shift);
  hops_.insert(hops_.end(), at, hops.end());
  hops_.insert(hops_.end(), hops.begin(), at);
  seg_first_.push_back(static_cast<uint32_t>(hops_.size()));
  seg_next_.push_back(kNone);
  if (single) {
    single_[hops[0].link] = id;
  } else if (head == kNone) {
    by_hash_.emplace(h, id);
  } else {
    seg_next_[id] = seg_next_[head];
    seg_next_[head] = id;
  }
  return id;
}

// The entry of `key`, or the empty slot where it would go.
PathTable::Recent& PathTable::recent_slot(uint64_t key) {
  if (recent_.empty()) recent_.resize(4096);
  const size_t mask = recent_.size() - 1;
  uint64_t x = (key ^ (key >> 31)) * 0x9e3779b97f4a7c15ULL;
  for (size_t i = static_cast<size_t>(x ^ (x >> 29)) & mask;; i = (i + 1) & mask) {
    Recent& r = recent_[i];
    if (r.seg == kNone || r.key == key) return r;
  }
}

void PathTable::remember(uint64_t key, uint32_t seg, uint32_t shift) {
  if (2 * (recent_used_ + 1) > recent_.size()) {
    std::vector<Recent> old(std::max<size_t>(4096, 2 * recent_.size()));
    old.swap(recent_);
    for (const Recent& r : old) {
      if (r.seg != kNone) recent_slot(r.key) = r;
    }
  }
  Recent& r = recent_slot(key);
  if (r.seg == kNone) ++recent_used_;
  r = Recent{key, seg, shift};
}

// A run of fabric hops is a set of parallel planes; the flow hash only picks where the list
// starts. Rates depend on the multiset of hops alone, so the run is stored rotated to start at
// its smallest link id: every rotation of the same planes is one segment.
uint32_t PathTable::fabric_segment(std::span<const PathHop> run) {
  // Fast path: the run with the same first and last hop and length seen before (an all-to-all
  // asks for the same leaf pair's planes thousands of times, in a few rotations) is checked
  // hop by hop.
  const uint64_t key = (static_cast<uint64_t>(run.front().link) << 32) ^ run.back().link ^
                       (static_cast<uint64_t>(run.size()) << 56);
  const Recent& r = recent_slot(key);
  if (r.seg != kNone && same_rotated(segment_hops(r.seg), run, r.shift)) return r.seg;
  size_t lo = 0;
  for (size_t i = 1; i < run.size(); ++i) {
    if (run[i].link < run[lo].link) lo = i;
  }
  const uint32_t seg = intern(run, lo);
  remember(key, seg, static_cast<uint32_t>(lo));
  return seg;
}

void PathTable::split(const Route& route, std::vector<uint32_t>* segments) {
  segments->clear();
  const auto& hops = route.hops;
  size_t i = 0;
  while (i < hops.size()) {
    if (!is_fabric(hops[i].link)) {
      segments->push_back(segment({hops.data() + i, 1}));
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < hops.size() && is_fabric(hops[j].link))
      ++j;
    segments->push_back(fabric_segment({hops.data() + i, j - i}));
    i = j;
  }
}

// A fabric run of a route shape: every run with the same leaves, planes and weight has the same
// hops (with all planes sprayed, the same hops rotated: one canonical segment whatever the
// first plane), so the segment is found by that key; a new key builds the hops once.
uint32_t PathTable::fabric_run_segment(const Topology& topo, const FabricRun& run) {
  FLEETSIM_ASSERT(run.leaf_a >= 0 && run.leaf_a < (1 << 24) && run.leaf_b >= 0 &&
                  run.leaf_b < (1 << 24) && run.paths > 0 && run.paths < 256 &&
                  run.first_plane >= 0 && run.first_plane < 256);
  const uint64_t first = run.all_planes ? 0 : static_cast<uint64_t>(run.first_plane);
  const uint64_t key = (static_cast<uint64_t>(run.leaf_a) << 40) |
                       (static_cast<uint64_t>(run.leaf_b) << 16) | (first << 8) |
                       static_cast<uint64_t>(run.paths);
  const uint64_t wbits = std::bit_cast<uint64_t>(run.weight);
  auto slot = [&](uint64_t k, uint64_t w) -> RunEntry& {
    const size_t mask = runs_.size() - 1;
    uint64_t x = (k ^ (k >> 29) ^ w) * 0x9e3779b97f4a7c15ULL;
    for (size_t i = static_cast<size_t>(x ^ (x >> 31)) & mask;; i = (i + 1) & mask) {
      RunEntry& e = runs_[i];
      if (e.seg == kNone || (e.key == k && e.weight_bits == w)) return e;
    }
  };
  if (runs_.empty()) runs_.resize(4096);
  if (const RunEntry& e = slot(key, wbits); e.seg != kNone) return e.seg;
  run_hops_.clear();
  topo.append_fabric_run(run, &run_hops_);
  size_t lo = 0;
  for (size_t i = 1; i < run_hops_.size(); ++i) {
    if (run_hops_[i].link < run_hops_[lo].link) lo = i;
  }
  const uint32_t seg = intern(run_hops_, lo);
  if (2 * (runs_used_ + 1) > runs_.size()) {
    std::vector<RunEntry> old(2 * runs_.size());
    old.swap(runs_);
    for (const RunEntry& e : old) {
      if (e.seg != kNone) slot(e.key, e.weight_bits) = e;
    }
  }
  slot(key, wbits) = RunEntry{key, wbits, seg};
  ++runs_used_;
  return seg;
}

void PathTable::split(const Topology& topo, const RouteShape& shape,
                      std::vector<uint32_t>* segments) {
  FLEETSIM_ASSERT(!fabric_.empty());  // built over the topology's links
  segments->clear();
  if (shape.empty) return;
  if (shape.nvlink) {
    segments->push_back(segment({&shape.nv_up, 1}));
    segments->push_back(segment({&shape.nv_down, 1}));
    return;
  }
  for (const RouteLeg& leg : shape.legs) {
    segments->push_back(segment({&leg.gpu_nic, 1}));
    segments->push_back(segment({&leg.nic_leaf, 1}));
    if (leg.fabric.leaf_a != leg.fabric.leaf_b)
      segments->push_back(fabric_run_segment(topo, leg.fabric));
    segments->push_back(segment({&leg.leaf_nic, 1}));
    segments->push_back(segment({&leg.nic_gpu, 1}));
  }
}

void PathTable::reserve(size_t routes, size_t segments_each) {
  route_first_.reserve(route_first_.size() + routes);
  route_latency_ps_.reserve(route_latency_ps_.size() + routes);
  route_segs_.reserve(route_segs_.size() + routes * segments_each);
}

uint32_t PathTable::add_route(const Route& route) {
  std::vector<uint32_t> segs;
  split(route, &segs);
  return add_route(segs, route.latency);
}

uint32_t PathTable::add_route(std::span<const uint32_t> segments, Time latency) {
  for (uint32_t s : segments)
    FLEETSIM_ASSERT(s < this->segments());
  route_segs_.insert(route_segs_.end(), segments.begin(), segments.end());
  route_first_.push_back(static_cast<uint32_t>(route_segs_.size()));
  route_latency_ps_.push_back(latency.ps());
  return static_cast<uint32_t>(routes() - 1);
}

bool PathTable::adopt(PathTable&& from) {
  if (routes() != 0 || segments() != 0 || fabric_ != from.fabric_) return false;
  *this = std::move(from);
  from = PathTable();
  recent_ = {};  // caches for planning; not worth their memory in the network
  recent_used_ = 0;
  runs_ = {};
  runs_used_ = 0;
  return true;
}

uint32_t PathTable::import_route(const PathTable& from, uint32_t r,
                                 std::vector<uint32_t>* seg_map) {
  if (seg_map->size() < from.segments()) seg_map->resize(from.segments(), kNone);
  FLEETSIM_ASSERT(&from != this);
  for (uint32_t s : from.route_segments(r)) {
    uint32_t& mine = (*seg_map)[s];
    if (mine == kNone) mine = segment(from.segment_hops(s));
    route_segs_.push_back(mine);
  }
  route_first_.push_back(static_cast<uint32_t>(route_segs_.size()));
  route_latency_ps_.push_back(from.route_latency_ps_[r]);
  return static_cast<uint32_t>(routes() - 1);
}

Route PathTable::expand(uint32_t r) const {
  Route out;
  out.latency = route_latency(r);
  for (uint32_t s : route_segments(r)) {
    const auto hops = segment_hops(s);
    out.hops.insert(out.hops.end(), hops.begin(), hops.end());
  }
  return out;
}

size_t PathTable::memory_bytes() const {
  return fabric_.capacity() + single_.capacity() * 4 + hops_.capacity() * sizeof(PathHop) +
         seg_first_.capacity() * 4 + seg_next_.capacity() * 4 + by_hash_.size() * 32 +
         route_segs_.capacity() * 4 + route_first_.capacity() * 4 +
         route_latency_ps_.capacity() * 8 + recent_.capacity() * sizeof(Recent) +
         runs_.capacity() * sizeof(RunEntry) + run_hops_.capacity() * sizeof(PathHop);
}

}  // namespace fleetsim
