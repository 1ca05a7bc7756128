// Capacity-plan outputs (`fleetsim plan`): plan.json (stable keys, fixed number formatting),
// report.md, the recommendation table printed on stdout, and report.html (html.h).
#pragma once

#include <string>

#include "plan/plan.h"

namespace fleetsim {

std::string plan_json(const PlanResult& r);
std::string plan_markdown(const PlanResult& r);
// One row per candidate: type, count, GPUs, parallelism, days, segments, cost, P(done), verdict.
std::string plan_table(const PlanResult& r);
// Self-contained HTML with inline SVG: cost vs days per candidate, time-to-train distribution.
std::string plan_html(const PlanResult& r);

}  // namespace fleetsim
