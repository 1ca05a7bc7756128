// `fleetsim topo show SYSTEM`: a system's topology graph as a summary or Graphviz DOT.
#include <cstdio>

#include "cli/commands.h"
#include "scenario/scenario.h"
#include "topo/topology.h"

namespace fleetsim {

int cmd_topo(const TopoCli& o) {
  const SystemSpec s = load_system(o.system, default_data_dir());
  const Topology topo(s, s.fabric, o.count * s.unit_nodes);
  if (o.dot) {
    std::fputs(topology_to_dot(topo).c_str(), stdout);
  } else {
    std::printf("%s", topo.summary().c_str());
  }
  return 0;
}

}  // namespace fleetsim
