// The cluster as a graph of directed links: GPUs, one NVSwitch fabric per scale-up domain, NICs,
// and a rail-optimized (or not) Clos fabric of leaf, spine and (for three tiers) core switches.
//
// Switch layers are modelled as parallel "planes": each leaf has one uplink per plane whose
// capacity is the leaf's total uplink bandwidth (downlink bandwidth / oversubscription) divided
// by the number of planes, and each plane is one non-blocking switch. ECMP hashes a flow onto
// one plane; SRD sprays it evenly over all planes (hardware-specs.md §6: SRD sends a flow over
// many paths). Routing is structural (up-down), O(hops) per path; graph.cpp builds the same
// graph in Boost.Graph for summaries, DOT output and cross-checks by breadth-first search.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "topo/system.h"

namespace fleetsim {

enum class VertexKind { kGpu, kNvSwitch, kNic, kLeaf, kSpine, kCore };
const char* to_string(VertexKind k);  // "gpu", "nvswitch", "nic", "leaf", "spine", "core"
enum class LinkKind { kNvlink, kPcie, kNicLink, kLeafSpine, kSpineCore };

struct Link {
  uint32_t from = 0;
  uint32_t to = 0;
  Bandwidth capacity;
  Time latency;
  LinkKind kind = LinkKind::kNvlink;
};

// One hop of a route: the flow's rate times `weight` is carried on `link` (weight < 1 when a
// flow is sprayed over several parallel links).
struct PathHop {
  uint32_t link;
  double weight;
};

struct Route {
  std::vector<PathHop> hops;
  Time latency;  // one-way latency: sum over one chain of hops
};

// The leaf → spine (→ core → spine) → leaf hops of one NIC path, without their list: the
// planes first_plane, first_plane + 1, … (mod planes), `paths` of them, each carrying `weight`.
struct FabricRun {
  int leaf_a = 0, leaf_b = 0;  // equal: the two NICs share a leaf, no fabric hops
  int first_plane = 0;
  int paths = 1;
  bool via_core = false;
  bool all_planes = false;  // paths == planes: every first plane lists the same hops, rotated
  double weight = 1.0;
};

// One NIC path of a route across NVLink domains: GPU → NIC → leaf, the fabric run, leaf →
// NIC → GPU.
struct RouteLeg {
  PathHop gpu_nic, nic_leaf;
  FabricRun fabric;
  PathHop leaf_nic, nic_gpu;
};

// route() in pieces, for route tables that intern a route's shared parts without building its
// hop list: inside one NVLink domain the two NVLink hops; across domains one leg per NIC pair.
struct RouteShape {
  Time latency;
  bool empty = false;  // src == dst
  bool nvlink = false;
  PathHop nv_up{}, nv_down{};
  std::vector<RouteLeg> legs;
};

class Topology {
 public:
  // `nodes` must be a multiple of the system's scale-up domain size.
  Topology(const SystemSpec& system, const FabricSpec& fabric, int nodes);

  const SystemSpec& system() const { return system_; }
  const FabricSpec& fabric() const { return fabric_; }
  int nodes() const { return nodes_; }
  int gpus() const { return gpus_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int domains() const { return domains_; }
  int gpus_per_domain() const { return gpus_per_node_ * system_.scale_up.domain_nodes; }
  int nics_per_node() const { return system_.nics.per_node; }
  int leaves() const { return leaves_; }
  int planes() const { return planes_; }
  int pods() const { return pods_; }
  uint32_t vertex_count() const { return static_cast<uint32_t>(vertex_kind_.size()); }
  const std::vector<Link>& links() const { return links_; }
  VertexKind vertex_kind(uint32_t v) const { return vertex_kind_[v]; }
  std::string vertex_name(uint32_t v) const;

  int node_of(int gpu) const { return gpu / gpus_per_node_; }
  int domain_of(int gpu) const { return gpu / gpus_per_domain(); }
  int local_rank(int gpu) const { return gpu % gpus_per_node_; }
  // NICs a GPU sends through (one, or several when a GPU owns several NICs), as global NIC ids.
  std::vector<int> nics_of_gpu(int gpu) const;
  int rail_of_nic(int nic) const { return nic % system_.nics.per_node; }
  uint32_t gpu_vertex(int gpu) const { return static_cast<uint32_t>(gpu); }
  uint32_t switch_vertex(int domain) const { return static_cast<uint32_t>(gpus_ + domain); }

  // Link ids for the pieces that collectives address directly.
  uint32_t gpu_to_switch(int gpu) const { return nvlink_up_[gpu]; }
  uint32_t switch_to_gpu(int gpu) const { return nvlink_down_[gpu]; }

  // Route from GPU src to GPU dst. `flow_hash` selects the ECMP plane, or the plane an SRD
  // spray starts at. Built from route_shape(): the hops in leg order.
  Route route(int src_gpu, int dst_gpu, uint64_t flow_hash) const;
  // The same route as pieces (`out` is reused: its legs keep their capacity). O(NIC pairs).
  void route_shape(int src_gpu, int dst_gpu, uint64_t flow_hash, RouteShape* out) const;
  // Appends the hops of `run` in route order (nothing when its two leaves are equal).
  void append_fabric_run(const FabricRun& run, std::vector<PathHop>* out) const;

  std::string summary() const;

 private:
  // Construction, in this order: counts of each kind of vertex, the vertices, then the links of
  // each layer.
  void size_fabric();
  void add_vertices();
  void add_scale_up_links();  // GPU ↔ NVSwitch
  void add_nic_links();       // GPU ↔ NIC ↔ leaf
  void add_switch_links();    // leaf ↔ spine planes (↔ core planes for three tiers)
  uint32_t add_vertex(VertexKind kind);
  uint32_t add_link(uint32_t from, uint32_t to, Bandwidth cap, Time lat, LinkKind kind);
  int leaf_of_nic(int nic) const;
  int pod_of_leaf(int leaf) const;
  int nic_of_gpu(int gpu, int k) const;  // the k-th NIC of nics_of_gpu(gpu)
  int nic_count_of_gpu() const { return system_.nics.nics_per_gpu >= 1 ? nic_links_per_gpu_ : 1; }
  FabricRun fabric_run(int src_nic, int dst_nic, uint64_t flow_hash, double weight) const;

  SystemSpec system_;
  FabricSpec fabric_;
  int nodes_ = 0, gpus_ = 0, gpus_per_node_ = 0, domains_ = 0;
  int nics_ = 0, leaves_ = 0, leaves_per_group_ = 0, groups_ = 0, planes_ = 1;
  int pods_ = 1, groups_per_pod_ = 1, nic_links_per_gpu_ = 1;
  std::vector<VertexKind> vertex_kind_;
  std::vector<int> vertex_index_;  // index within its kind
  std::vector<Link> links_;
  std::vector<uint32_t> nvlink_up_, nvlink_down_;
  std::vector<uint32_t> gpu_nic_up_, gpu_nic_down_;  // per (gpu, k-th NIC of gpu)
  std::vector<uint32_t> nic_up_, nic_down_;          // NIC ↔ leaf
  std::vector<uint32_t> leaf_up_, leaf_down_;        // [leaf * planes + p]
  std::vector<uint32_t> spine_up_, spine_down_;      // [(pod * planes + p)] ↔ core plane p
  uint32_t first_nic_vertex_ = 0, first_leaf_vertex_ = 0, first_spine_vertex_ = 0;
  uint32_t first_core_vertex_ = 0;
};

// Boost.Graph views (graph.cpp).
std::string topology_to_dot(const Topology& topo);
// Number of links on a shortest path (breadth-first), or -1 when unreachable.
int shortest_hops(const Topology& topo, uint32_t from, uint32_t to);
bool is_strongly_connected(const Topology& topo);

}  // namespace fleetsim
