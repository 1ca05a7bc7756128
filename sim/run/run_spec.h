// What a scenario's "run" section says: the run's length, Monte Carlo replicas, failure profile,
// injected failures, gray failures, health checks, checkpoints, recovery, maintenance and
// reservation segments (the run-level simulator's input; the simulator is run.h). Parsed by
// sim/scenario, read by sim/run.
#pragma once

#include <vector>

#include "fault/fault.h"

namespace fleetsim {

// A failure at a given time (tests and what-if scenarios): class index into the profile.
struct InjectedFailure {
  double at_s = 0;
  int failure_class = 0;
  int node = 0;
};

struct RunSpec {
  double duration_s = 0;    // wall-clock limit (0 = until the token budget)
  double token_budget = 0;  // tokens to train (0 = for duration_s)
  int replicas = 100;
  FailureProfile failures;
  std::vector<InjectedFailure> injected;
  std::vector<GrayFailureSpec> gray;
  HealthCheckSpec health;
  CheckpointSpec checkpoint;
  RecoverySpec recovery;
  MaintenanceSpec maintenance;
  ReservationSpec reservation;
};

}  // namespace fleetsim
