// A collective scenario: one collective (all-reduce, all-gather, ...) of a message size on a
// group of GPUs of the scenario's cluster, alone on an idle network (sim/coll). `fleetsim run`
// and sweeps simulate a scenario's sizes through simulate_scenario_collective; validation picks
// the fastest of the algorithms a measurement could have used with simulate_fastest_collective.
#pragma once

#include <cstdint>
#include <vector>

#include "coll/collective.h"
#include "core/units.h"
#include "scenario/scenario.h"
#include "study/cluster.h"

namespace fleetsim {

// The group of a collective workload: GPUs 0 … n−1, n = w.group_gpus or every GPU of `topo`.
std::vector<int> collective_group(const CollectiveWorkload& w, const Topology& topo);

// The scenario's collective (s.collective must be set) of `size` bytes on its group, with its
// algorithm (kAuto: the fastest candidate) and s.seed.
CollectiveResult simulate_scenario_collective(const Scenario& s, const StudyCluster& cluster,
                                              Bytes size);

// `op` of `size` bytes on `ranks` with each of `algorithms` (non-empty); the fastest is kept (the
// first of equally fast ones).
CollectiveResult simulate_fastest_collective(const StudyCluster& cluster, CollOp op,
                                             const std::vector<Algorithm>& algorithms, Bytes size,
                                             const std::vector<int>& ranks, uint64_t seed);

}  // namespace fleetsim
