// Topology files and per-system calibration (system_loader.cpp); the public entry points
// (load_system, known_systems, load_collective_params, load_framework_defaults, default_data_dir)
// are declared in scenario.h. Internal to sim/scenario.
#pragma once

#include "topo/system.h"

namespace fleetsim {

namespace jsonr {
class Obj;
}

// A fabric object: every key required (a topology file) or only the given keys overriding
// `base` (a scenario's cluster.fabric).
FabricSpec read_fabric(const jsonr::Obj& f, FabricSpec base, bool all_required);

}  // namespace fleetsim
