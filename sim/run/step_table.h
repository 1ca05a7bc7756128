// Step times of the run-level simulator from the step simulator, one per distinct cluster state
// (healthy; the slowest GPU at each 5 % clock level a gray failure can produce), computed once
// before the Monte Carlo, and the job's shape (GPUs, nodes, data-parallel replicas per node).
#pragma once

#include "coll/collective.h"
#include "compute/compute_model.h"
#include "run/run.h"
#include "topo/topology.h"
#include "workload/step.h"

namespace fleetsim {

// `healthy_step_s` is the step time already simulated for `base`. A slow-GPU state runs the step
// with every rank simulated and GPU 0 (pipeline stage 0, DP replica 0) at level/20 of its clock.
// `progress` (may be null) is told the states simulated.
StepTable build_step_table(const RunSpec& spec, const StepInput& base, double healthy_step_s,
                           const Topology& topo, const CollectiveParams& cp,
                           const ComputeModel& compute, Progress* progress = nullptr);

JobShape job_shape(const ParallelConfig& par, int gpus_per_node, int domain_nodes);

}  // namespace fleetsim
