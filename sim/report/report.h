// Writers for report.json and the JSON form of `fleetsim validate`. Keys are stable and
// documented in docs/reports.md; numbers are printed with fixed precision so the same input and
// seed give byte-identical files.
#pragma once

#include <string>
#include <vector>

#include "coll/collective.h"
#include "scenario/scenario.h"
#include "study/run_level.h"
#include "study/training_step.h"
#include "topo/topology.h"
#include "validate/validate.h"
#include "workload/step.h"

namespace fleetsim {

std::string collective_report_json(const Scenario& s, const Topology& topo,
                                   const std::vector<CollectiveResult>& results);
std::string validation_json(const ValidationReport& rep);
// `run`: the run-level Monte Carlo (scenarios with a "run" section) → the "run" object.
std::string training_report_json(const Scenario& s, const Topology& topo, const StepResult& r,
                                 const MoeOutcome* moe = nullptr, const RunOutcome* run = nullptr);
// Chrome trace-event JSON (opens in Perfetto / chrome://tracing): one process per TP unit
// (named by its GPU ranks), one thread per stream.
std::string chrome_trace_json(const Scenario& s, const StepResult& r);
// The run-level event timeline (`run --timeline`) as a Chrome trace: a "job state" track of
// slices (training, interrupted by the first event's kind until the next resume, offline between
// reservation segments) and instant events on "failures and recovery", "gray failures",
// "checkpoints" and "reservation" tracks, each with its key=value details as args.
std::string run_timeline_trace_json(const std::string& name, const std::vector<RunEvent>& events);
std::string memory_json(const MemoryBreakdown& m);

// Writes via a temporary file and rename, so a killed run never leaves a truncated report.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace fleetsim
