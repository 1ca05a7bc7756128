// Boost.Graph view of a Topology: the one file in sim/ that includes Boost.Graph. Used for the
// Graphviz output of `fleetsim topo show --dot`, and to cross-check the structural router
// (tests compare route lengths with breadth-first shortest paths).
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/strong_components.hpp>
#include <sstream>

#include "core/units.h"
#include "topo/topology.h"

namespace fleetsim {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

Graph build(const Topology& topo) {
  Graph g(topo.vertex_count());
  for (const Link& l : topo.links())
    boost::add_edge(l.from, l.to, g);
  return g;
}

const char* shape(VertexKind k) {
  switch (k) {
    case VertexKind::kGpu:
      return "box";
    case VertexKind::kNvSwitch:
      return "hexagon";
    case VertexKind::kNic:
      return "ellipse";
    default:
      return "diamond";
  }
}

}  // namespace

std::string topology_to_dot(const Topology& topo) {
  std::ostringstream out;
  out << "digraph \"" << topo.system().name << "\" {\n  rankdir=TB;\n";
  for (uint32_t v = 0; v < topo.vertex_count(); ++v) {
    out << "  \"" << topo.vertex_name(v) << "\" [shape=" << shape(topo.vertex_kind(v)) << "];\n";
  }
  // One undirected edge per pair of opposite directed links, labelled with the capacity.
  for (const Link& l : topo.links()) {
    if (l.from > l.to) continue;
    out << "  \"" << topo.vertex_name(l.from) << "\" -> \"" << topo.vertex_name(l.to)
        << "\" [dir=both, label=\"" << format_bandwidth(l.capacity) << "\"];\n";
  }
  out << "}\n";
  return out.str();
}

int shortest_hops(const Topology& topo, uint32_t from, uint32_t to) {
  Graph g = build(topo);
  std::vector<int> dist(boost::num_vertices(g), -1);
  dist[from] = 0;
  struct Recorder : boost::default_bfs_visitor {
    std::vector<int>* d;
    void tree_edge(Graph::edge_descriptor e, const Graph& gr) const {
      (*d)[boost::target(e, gr)] = (*d)[boost::source(e, gr)] + 1;
    }
  } vis;
  vis.d = &dist;
  boost::breadth_first_search(g, from, boost::visitor(vis));
  return dist[to];
}

bool is_strongly_connected(const Topology& topo) {
  Graph g = build(topo);
  std::vector<int> comp(boost::num_vertices(g));
  return boost::strong_components(g, comp.data()) == 1;
}

}  // namespace fleetsim
