// Sweep files: a base scenario plus axes that set any scenario field by JSON pointer (RFC 6901),
// expanded into the list of scenarios to run. The format is documented in README.md ("Sweeps")
// and scenarios/schema/sweep.schema.json.
//
// Expansion: the points are the cartesian product of the axes, the first axis varying slowest.
// A grid axis contributes its values; a zip axis its lists in lockstep (all of equal length); a
// random axis n samples drawn with its own seed (xoshiro256**, core/rng.h: uniform, log-uniform or
// a choice). Filters (expressions over the point's fields) then drop combinations, counted per
// filter; points that expand to the same scenario are kept once. Each point is keyed by the
// FNV-1a 64 hash of its canonical JSON (sorted keys, no whitespace), so results survive edits of
// the sweep that keep the point's scenario unchanged.
//
// Bad sweep files throw InputError with the sweep file and the JSON pointer: unknown keys, empty
// axes, pointers the scenario format does not have, values of a type or range the scenario loader
// refuses at that pointer, zip lists of unequal length, malformed filter expressions.
// Complexity: O(points × scenario size) to expand; each distinct axis value is checked once with
// the scenario loader.
#pragma once

#include <string>
#include <vector>

#include "scenario/scenario.h"

namespace fleetsim {

struct SweepPoint {
  int index = 0;                         // 0-based position after filters and de-duplication
  std::string key;                       // 16 lower-case hex digits: FNV-1a 64 of scenario_json
  std::string scenario_json;             // the expanded scenario, canonical JSON
  std::vector<std::string> values_json;  // one per SweepPlan::columns, as JSON text
};

struct SweepSkip {
  std::string reason;  // the filter's name, or "duplicate of an earlier point"
  int count = 0;
};

struct SweepPlan {
  std::string file;  // the sweep file (used in messages)
  std::string name;
  std::string description;
  std::string base_file;             // the base scenario's path ("" when inline)
  std::vector<std::string> columns;  // the JSON pointers the axes set, in axis order
  long long combinations = 0;        // before filters and de-duplication
  std::vector<SweepSkip> skipped;    // in filter order, duplicates last; zero counts omitted
  std::vector<SweepPoint> points;
  std::string sweep_key;  // FNV-1a 64 over the points' keys in order: identifies the expansion
};

// Reads and expands a sweep file. options.data_dir locates topologies/ and workloads/ for the
// value checks and for `cluster_gpus` in filters.
SweepPlan load_sweep(const std::string& path, const LoadOptions& options);
SweepPlan parse_sweep(const std::string& text, const std::string& file, const LoadOptions& options);

// "file[point N]": the name messages use for a point's scenario.
std::string sweep_point_file(const SweepPlan& plan, int index);

// Keys a sweep file accepts, by JSON pointer pattern ("" top level, "/axes#grid" a grid axis,
// ...); scenarios/schema/sweep.schema.json must list the same keys (a test checks it).
std::vector<std::pair<std::string, std::vector<std::string>>> sweep_keys();

}  // namespace fleetsim
