// Routes stored once and shared: a route is a short list of interned *segments*, each a list of
// (link, weight) hops. Every hop that is not a switch-to-switch fabric link (NVLink, PCIe / C2C,
// NIC ↔ leaf) is a segment of its own; a maximal run of fabric hops (the leaf → spine (→ core)
// → leaf planes a flow is hashed or sprayed over) is one segment, stored in a canonical rotation. A
// GPU's own links are then shared by every flow it sends or receives, and the up-to-128-hop sprayed
// middle of an EFA route by every flow between the same two leaves, so an all-to-all over n GPUs
// holds O(n) segments of hops and ~5 segment ids per flow instead of ~70 hops per flow.
//
// Max-min rates depend only on the multiset of (link, weight) a flow uses, so splitting a route
// into segments changes no rate. Segments are interned by content (hash lookup; single-hop,
// weight-1 segments through a direct table); routes are appended, not interned. Deterministic:
// ids are handed out in insertion order and the hash map is never iterated.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/time.h"
#include "topo/topology.h"

namespace fleetsim {

class PathTable {
 public:
  PathTable() = default;  // no fabric links: every hop is a segment of its own
  explicit PathTable(const std::vector<Link>& links);

  // Room for `routes` more routes of about `segments_each` segments, without the doubling's
  // copies (a plan about to add them).
  void reserve(size_t routes, size_t segments_each);
  // Appends `route` split into segments; returns its id.
  uint32_t add_route(const Route& route);
  // The interned segments of `route`, without appending a route.
  void split(const Route& route, std::vector<uint32_t>* segments);
  // The same for the route `shape` of `topo` (the links this table was built over): the
  // segments split(topo.route(…)) gives, in the same order (so ids are handed out alike), with
  // each fabric run looked up by its leaves and planes instead of hop by hop.
  void split(const Topology& topo, const RouteShape& shape, std::vector<uint32_t>* segments);
  // Appends a route made of segments already in this table.
  uint32_t add_route(std::span<const uint32_t> segments, Time latency);
  // Appends route `r` of `from` (a table over the same links), interning its segments here;
  // `seg_map` caches from's segment ids → ours (resized on demand, kNone when not yet seen).
  uint32_t import_route(const PathTable& from, uint32_t r, std::vector<uint32_t>* seg_map);
  // The id of the segment with exactly these hops (interned).
  uint32_t segment(std::span<const PathHop> hops);
  // Takes over `from` (a table over the same links) when this one holds nothing yet, so its
  // route and segment ids stay valid here; false (nothing done) otherwise.
  bool adopt(PathTable&& from);

  size_t routes() const { return route_first_.size() - 1; }
  size_t segments() const { return seg_first_.size() - 1; }
  std::span<const uint32_t> route_segments(uint32_t r) const {
    return {route_segs_.data() + route_first_[r], route_segs_.data() + route_first_[r + 1]};
  }
  Time route_latency(uint32_t r) const { return Time::from_ps(route_latency_ps_[r]); }
  bool route_empty(uint32_t r) const { return route_first_[r] == route_first_[r + 1]; }
  std::span<const PathHop> segment_hops(uint32_t s) const {
    return {hops_.data() + seg_first_[s], hops_.data() + seg_first_[s + 1]};
  }
  // The route as a flat hop list (for reference checks and tests).
  Route expand(uint32_t r) const;
  // Heap bytes held by the table (for memory estimates and benchmarks).
  size_t memory_bytes() const;

  static constexpr uint32_t kNone = 0xffffffffu;

 private:
  uint32_t fabric_segment(std::span<const PathHop> run);
  uint32_t intern(std::span<const PathHop> hops, size_t shift);
  bool is_fabric(uint32_t link) const { return link < fabric_.size() && fabric_[link] != 0; }

  std::vector<uint8_t> fabric_;         // per link: 1 when switch-to-switch
  std::vector<uint32_t> single_;        // per link: the single-hop weight-1 segment, or kNone
  std::vector<PathHop> hops_;           // segment hops, concatenated
  std::vector<uint32_t> seg_first_{0};  // one entry more than there are segments
  std::unordered_map<uint64_t, uint32_t> by_hash_;  // content hash → first segment with it
  std::vector<uint32_t> seg_next_;                  // next segment with the same hash, or kNone
  std::vector<uint32_t> route_segs_;
  std::vector<uint32_t> route_first_{0};  // one entry more than there are routes
  std::vector<int64_t> route_latency_ps_;
  struct Recent {
    uint64_t key = 0;
    uint32_t seg = kNone;
    uint32_t shift = 0;
  };
  // Fabric runs looked up so far, by (first hop, last hop, length): open addressing, grown at
  // half load, never iterated for results.
  std::vector<Recent> recent_;
  size_t recent_used_ = 0;
  Recent& recent_slot(uint64_t key);
  void remember(uint64_t key, uint32_t seg, uint32_t shift);
  uint32_t fabric_run_segment(const Topology& topo, const FabricRun& run);
  // Fabric runs of route shapes, by (leaves, first plane, paths) and weight: open addressing
  // like recent_.
  struct RunEntry {
    uint64_t key = 0;
    uint64_t weight_bits = 0;
    uint32_t seg = kNone;
  };
  std::vector<RunEntry> runs_;
  size_t runs_used_ = 0;
  std::vector<PathHop> run_hops_;  // scratch
};

}  // namespace fleetsim
