// `fleetsim run --html`: report.html for one training scenario — the headline numbers, the
// step-time breakdown and memory bars, the busiest links, the MoE load heatmap (MoE models),
// and for scenarios with a run section the ETTR summary, lost time by cause and ETTR against the
// checkpoint interval. Self-contained (html.h): inline SVG, no scripts, no network access.
#pragma once

#include <string>

#include "scenario/scenario.h"
#include "study/run_level.h"
#include "study/training_step.h"

namespace fleetsim {

// `run` and `curve` may be null (no run section).
std::string run_html(const Scenario& s, const StepOutcome& step, const RunOutcome* run,
                     const EttrCurve* curve);

}  // namespace fleetsim
