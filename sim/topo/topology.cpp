// The cluster graph (topology.h): vertices and links built layer by layer (scale-up NVSwitch
// domains, GPU ↔ NIC, NIC ↔ leaf, leaf ↔ spine planes, spine ↔ core), and structural up-down
// routes with ECMP plane hashing or SRD spraying.
#include "topo/topology.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/units.h"

namespace fleetsim {

const char* to_string(NicKind k) {
  switch (k) {
    case NicKind::kEfa:
      return "efa";
    case NicKind::kInfiniband:
      return "infiniband";
    case NicKind::kRoce:
      return "roce";
  }
  return "?";
}

const char* to_string(VertexKind k) {
  switch (k) {
    case VertexKind::kGpu:
      return "gpu";
    case VertexKind::kNvSwitch:
      return "nvswitch";
    case VertexKind::kNic:
      return "nic";
    case VertexKind::kLeaf:
      return "leaf";
    case VertexKind::kSpine:
      return "spine";
    case VertexKind::kCore:
      return "core";
  }
  return "?";
}

const char* to_string(Routing r) {
  return r == Routing::kSrd ? "srd" : "ecmp";
}

uint32_t Topology::add_vertex(VertexKind kind) {
  // Vertices of one kind are added consecutively: the index continues the previous vertex's run
  // (O(1); counting back over the run made building a 131,072-GPU topology quadratic).
  const bool continues = !vertex_kind_.empty() && vertex_kind_.back() == kind;
  vertex_index_.push_back(continues ? vertex_index_.back() + 1 : 0);
  vertex_kind_.push_back(kind);
  return static_cast<uint32_t>(vertex_kind_.size() - 1);
}

uint32_t Topology::add_link(uint32_t from, uint32_t to, Bandwidth cap, Time lat, LinkKind kind) {
  links_.push_back(Link{from, to, cap, lat, kind});
  return static_cast<uint32_t>(links_.size() - 1);
}

Topology::Topology(const SystemSpec& system, const FabricSpec& fabric, int nodes)
    : system_(system), fabric_(fabric), nodes_(nodes) {
  size_fabric();
  add_vertices();
  add_scale_up_links();
  add_nic_links();
  add_switch_links();
}

void Topology::size_fabric() {
  const int domain_nodes = system_.scale_up.domain_nodes;
  FLEETSIM_ASSERT(nodes_ > 0 && domain_nodes > 0 && nodes_ % domain_nodes == 0);
  FLEETSIM_ASSERT(system_.nics.per_node > 0);
  gpus_per_node_ = system_.node.gpus;
  gpus_ = nodes_ * gpus_per_node_;
  domains_ = nodes_ / domain_nodes;
  const int per_node = system_.nics.per_node;
  nics_ = nodes_ * per_node;
  nic_links_per_gpu_ = std::max(1, system_.nics.nics_per_gpu);
  const int npg = std::max(1, fabric_.nodes_per_leaf_group);
  groups_ = (nodes_ + npg - 1) / npg;
  leaves_per_group_ = per_node;
  leaves_ = groups_ * leaves_per_group_;
  planes_ = std::clamp(fabric_.switch_radix / 2, 1, 32);
  if (fabric_.tiers >= 3) {
    groups_per_pod_ = std::max(1, fabric_.switch_radix / 2 / leaves_per_group_);
    pods_ = (groups_ + groups_per_pod_ - 1) / groups_per_pod_;
  } else {
    groups_per_pod_ = groups_;
    pods_ = 1;
  }
}

void Topology::add_vertices() {
  vertex_kind_.reserve(gpus_ + domains_ + nics_ + leaves_ + planes_ * (pods_ + 1));
  for (int g = 0; g < gpus_; ++g)
    add_vertex(VertexKind::kGpu);
  for (int d = 0; d < domains_; ++d)
    add_vertex(VertexKind::kNvSwitch);
  first_nic_vertex_ = vertex_count();
  for (int n = 0; n < nics_; ++n)
    add_vertex(VertexKind::kNic);
  first_leaf_vertex_ = vertex_count();
  for (int l = 0; l < leaves_; ++l)
    add_vertex(VertexKind::kLeaf);
  first_spine_vertex_ = vertex_count();
  for (int s = 0; s < pods_ * planes_; ++s)
    add_vertex(VertexKind::kSpine);
  first_core_vertex_ = vertex_count();
  if (fabric_.tiers >= 3) {
    for (int c = 0; c < planes_; ++c)
      add_vertex(VertexKind::kCore);
  }
}

void Topology::add_scale_up_links() {
  // Scale-up: each GPU has one up and one down link into its domain's NVSwitch fabric; the
  // switch hop latency is split between them so GPU → GPU costs one hop_latency.
  const Time half_hop = Time::from_ps(system_.scale_up.hop_latency.ps() / 2);
  nvlink_up_.resize(gpus_);
  nvlink_down_.resize(gpus_);
  for (int g = 0; g < gpus_; ++g) {
    const uint32_t sw = switch_vertex(domain_of(g));
    nvlink_up_[g] =
        add_link(gpu_vertex(g), sw, system_.scale_up.gpu_bandwidth, half_hop, LinkKind::kNvlink);
    nvlink_down_[g] =
        add_link(sw, gpu_vertex(g), system_.scale_up.gpu_bandwidth, half_hop, LinkKind::kNvlink);
  }
}

void Topology::add_nic_links() {
  // GPU ↔ NIC over PCIe (or C2C), then NIC ↔ leaf at the NIC's rate times the transport's
  // protocol efficiency (the fraction of line rate a long transfer achieves).
  const Time half_nic = Time::from_ps(fabric_.nic_latency.ps() / 2);
  const Time half_switch = Time::from_ps(fabric_.hop_latency.ps() / 2);
  const Bandwidth nic_bw = system_.nics.bandwidth * fabric_.protocol_efficiency;
  for (int g = 0; g < gpus_; ++g) {
    for (int nic : nics_of_gpu(g)) {
      gpu_nic_up_.push_back(add_link(gpu_vertex(g), first_nic_vertex_ + nic,
                                     system_.node.pcie_bandwidth, half_nic, LinkKind::kPcie));
      gpu_nic_down_.push_back(add_link(first_nic_vertex_ + nic, gpu_vertex(g),
                                       system_.node.pcie_bandwidth, half_nic, LinkKind::kPcie));
    }
  }
  nic_up_.resize(nics_);
  nic_down_.resize(nics_);
  for (int n = 0; n < nics_; ++n) {
    const uint32_t leaf = first_leaf_vertex_ + leaf_of_nic(n);
    nic_up_[n] = add_link(first_nic_vertex_ + n, leaf, nic_bw, half_switch, LinkKind::kNicLink);
    nic_down_[n] = add_link(leaf, first_nic_vertex_ + n, nic_bw, half_switch, LinkKind::kNicLink);
  }
}

void Topology::add_switch_links() {
  const int per_node = system_.nics.per_node;
  const int npg = std::max(1, fabric_.nodes_per_leaf_group);
  const Time half_switch = Time::from_ps(fabric_.hop_latency.ps() / 2);
  // Leaf → spine planes. A leaf's downlinks serve nodes_per_leaf_group NIC ports (rail-optimized:
  // rail r of every node in the group; otherwise all NICs of a subset of the group's nodes).
  const int ports = fabric_.rail_optimized ? npg : ((npg + per_node - 1) / per_node) * per_node;
  const double down_bps = static_cast<double>(ports) * system_.nics.bandwidth.bytes_per_second() *
                          fabric_.protocol_efficiency;
  const Bandwidth plane_bw =
      Bandwidth::bytes_per_second(down_bps / std::max(fabric_.oversubscription, 1e-9) / planes_);
  leaf_up_.resize(static_cast<size_t>(leaves_) * planes_);
  leaf_down_.resize(static_cast<size_t>(leaves_) * planes_);
  for (int l = 0; l < leaves_; ++l) {
    const int pod = pod_of_leaf(l);
    for (int p = 0; p < planes_; ++p) {
      const uint32_t spine = first_spine_vertex_ + pod * planes_ + p;
      leaf_up_[l * planes_ + p] =
          add_link(first_leaf_vertex_ + l, spine, plane_bw, half_switch * 2, LinkKind::kLeafSpine);
      leaf_down_[l * planes_ + p] =
          add_link(spine, first_leaf_vertex_ + l, plane_bw, Time::zero(), LinkKind::kLeafSpine);
    }
  }
  if (fabric_.tiers >= 3) {
    const Bandwidth spine_bw = plane_bw * static_cast<double>(groups_per_pod_ * leaves_per_group_);
    spine_up_.resize(static_cast<size_t>(pods_) * planes_);
    spine_down_.resize(static_cast<size_t>(pods_) * planes_);
    for (int pod = 0; pod < pods_; ++pod) {
      for (int p = 0; p < planes_; ++p) {
        const uint32_t spine = first_spine_vertex_ + pod * planes_ + p;
        spine_up_[pod * planes_ + p] = add_link(spine, first_core_vertex_ + p, spine_bw,
                                                half_switch * 2, LinkKind::kSpineCore);
        spine_down_[pod * planes_ + p] =
            add_link(first_core_vertex_ + p, spine, spine_bw, Time::zero(), LinkKind::kSpineCore);
      }
    }
  }
}

std::vector<int> Topology::nics_of_gpu(int gpu) const {
  std::vector<int> out;
  for (int k = 0; k < nic_count_of_gpu(); ++k)
    out.push_back(nic_of_gpu(gpu, k));
  return out;
}

int Topology::nic_of_gpu(int gpu, int k) const {
  const auto& n = system_.nics;
  const int node = node_of(gpu), local = local_rank(gpu);
  if (n.nics_per_gpu >= 1) return node * n.per_node + local * n.nics_per_gpu + k;
  return node * n.per_node + std::min(local / std::max(1, n.gpus_per_nic), n.per_node - 1);
}

int Topology::pod_of_leaf(int leaf) const {
  return (leaf / leaves_per_group_) / groups_per_pod_;
}

int Topology::leaf_of_nic(int nic) const {
  const int per_node = system_.nics.per_node;
  const int node = nic / per_node;
  const int npg = std::max(1, fabric_.nodes_per_leaf_group);
  const int group = node / npg;
  const int within = fabric_.rail_optimized ? nic % per_node : (node % npg) % per_node;
  return group * leaves_per_group_ + within;
}

FabricRun Topology::fabric_run(int src_nic, int dst_nic, uint64_t flow_hash, double weight) const {
  FabricRun run;
  run.leaf_a = leaf_of_nic(src_nic);
  run.leaf_b = leaf_of_nic(dst_nic);
  if (run.leaf_a == run.leaf_b) return run;
  run.via_core = fabric_.tiers >= 3 && pod_of_leaf(run.leaf_a) != pod_of_leaf(run.leaf_b);
  run.first_plane = static_cast<int>(flow_hash % static_cast<uint64_t>(planes_));
  if (fabric_.routing == Routing::kSrd) {
    run.paths = fabric_.srd_paths > 0 ? std::min(fabric_.srd_paths, planes_) : planes_;
  }
  run.all_planes = run.paths == planes_;
  run.weight = weight / run.paths;
  return run;
}

void Topology::append_fabric_run(const FabricRun& run, std::vector<PathHop>* out) const {
  if (run.leaf_a == run.leaf_b) return;
  const int pod_a = pod_of_leaf(run.leaf_a), pod_b = pod_of_leaf(run.leaf_b);
  for (int i = 0; i < run.paths; ++i) {
    const int p = (run.first_plane + i) % planes_;
    out->push_back(PathHop{leaf_up_[run.leaf_a * planes_ + p], run.weight});
    if (run.via_core) {
      out->push_back(PathHop{spine_up_[pod_a * planes_ + p], run.weight});
      out->push_back(PathHop{spine_down_[pod_b * planes_ + p], run.weight});
    }
    out->push_back(PathHop{leaf_down_[run.leaf_b * planes_ + p], run.weight});
  }
}

void Topology::route_shape(int src, int dst, uint64_t flow_hash, RouteShape* out) const {
  out->legs.clear();
  out->empty = src == dst;
  out->nvlink = !out->empty && domain_of(src) == domain_of(dst);
  out->latency = Time::zero();
  if (out->empty) return;
  if (out->nvlink) {
    out->nv_up = PathHop{nvlink_up_[src], 1.0};
    out->nv_down = PathHop{nvlink_down_[dst], 1.0};
    out->latency = system_.scale_up.hop_latency;
    return;
  }
  const int k = nic_count_of_gpu();  // both GPUs have the same number of NICs
  const double w = 1.0 / static_cast<double>(k);
  for (int i = 0; i < k; ++i) {
    const int sn = nic_of_gpu(src, i), dn = nic_of_gpu(dst, i);
    RouteLeg& leg = out->legs.emplace_back();
    leg.gpu_nic = PathHop{gpu_nic_up_[src * nic_links_per_gpu_ + i], w};
    leg.nic_leaf = PathHop{nic_up_[sn], w};
    leg.fabric = fabric_run(sn, dn, flow_hash + static_cast<uint64_t>(i), w);
    leg.leaf_nic = PathHop{nic_down_[dn], w};
    leg.nic_gpu = PathHop{gpu_nic_down_[dst * nic_links_per_gpu_ + i], w};
  }
  const FabricRun& first = out->legs.front().fabric;
  const int switches = first.leaf_a == first.leaf_b ? 1 : (first.via_core ? 5 : 3);
  out->latency = fabric_.nic_latency + fabric_.hop_latency * switches;
}

Route Topology::route(int src, int dst, uint64_t flow_hash) const {
  RouteShape shape;
  route_shape(src, dst, flow_hash, &shape);
  Route r;
  r.latency = shape.latency;
  if (shape.nvlink) r.hops = {shape.nv_up, shape.nv_down};
  r.hops.reserve(shape.legs.size() * (4 + 4 * static_cast<size_t>(planes_)));
  for (const RouteLeg& leg : shape.legs) {
    r.hops.push_back(leg.gpu_nic);
    r.hops.push_back(leg.nic_leaf);
    append_fabric_run(leg.fabric, &r.hops);
    r.hops.push_back(leg.leaf_nic);
    r.hops.push_back(leg.nic_gpu);
  }
  return r;
}

std::string Topology::vertex_name(uint32_t v) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%d", to_string(vertex_kind_[v]), vertex_index_[v]);
  return buf;
}

std::string Topology::summary() const {
  const auto& s = system_;
  char buf[2048];
  std::snprintf(
      buf, sizeof buf,
      "system        %s (%s)\n"
      "nodes         %d × %s, %d GPUs (%s, %s HBM, %s)\n"
      "scale-up      %s: %d NVLink domain(s) of %d GPUs, %s per GPU per direction%s\n"
      "NICs          %d per node × %s %s (%s), %s per node\n"
      "fabric        %d-tier Clos, %s, oversubscription %.2g:1, routing %s, %d leaf group(s) of %d "
      "nodes, %d leaves, %d plane(s)%s\n"
      "graph         %u vertices, %zu directed links\n",
      s.name.c_str(), s.description.c_str(), nodes_, s.node.name.c_str(), gpus_,
      s.gpu.model.c_str(), format_bytes(s.gpu.hbm).c_str(),
      format_bandwidth(s.gpu.hbm_bandwidth).c_str(), s.scale_up.technology.c_str(), domains_,
      gpus_per_domain(), format_bandwidth(s.scale_up.gpu_bandwidth).c_str(),
      s.scale_up.nvls ? ", NVLS" : "", s.nics.per_node, format_bandwidth(s.nics.bandwidth).c_str(),
      to_string(s.nics.kind), s.nics.generation.c_str(),
      format_bandwidth(s.nics.bandwidth * static_cast<double>(s.nics.per_node)).c_str(),
      fabric_.tiers, fabric_.rail_optimized ? "rail-optimized" : "not rail-optimized",
      fabric_.oversubscription, to_string(fabric_.routing), groups_, fabric_.nodes_per_leaf_group,
      leaves_, planes_,
      fabric_.tiers >= 3 ? (", " + std::to_string(pods_) + " pod(s)").c_str() : "", vertex_count(),
      links_.size());
  return buf;
}

}  // namespace fleetsim
