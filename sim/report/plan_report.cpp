// plan.json, report.md and the recommendation table (plan_report.h). Numbers are written with
// fixed printf formats so the same plan and seed give byte-identical files.
#include "report/plan_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace fleetsim {

namespace {

using ordered = nlohmann::ordered_json;

// Rounded to a fixed number of significant digits, so the JSON text is stable.
ordered num(double v) {
  if (!std::isfinite(v)) return nullptr;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return std::stod(buf);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string segments_text(const std::vector<int>& segs) {
  std::string s;
  for (int d : segs)
    s += (s.empty() ? "" : "+") + std::to_string(d);
  return s.empty() ? "-" : s + " d";
}

std::string cost_text(const CandidateResult& c) {
  return c.status == CandidateStatus::kOk ? format_usd(c.cost_usd) : "-";
}

// One candidate of plan.json: what was tried, its verdict, and as far as it got the step,
// the Monte Carlo time to train and the reservation.
ordered candidate_json(const CandidateResult& c) {
  ordered e;
  e["system"] = c.system;
  e["count"] = c.count;
  e["gpus"] = c.gpus;
  e["parallelism"] = c.parallelism;
  e["status"] = to_string(c.status);
  e["verdict"] = c.verdict;
  e["price_per_instance_hour_usd"] = num(c.price_per_instance_hour);
  e["price_source"] = c.price_source;
  if (c.status != CandidateStatus::kInvalid) {
    e["step_time_s"] = num(c.step_time_s);
    e["tokens_per_s_per_gpu"] = num(c.tokens_per_s_per_gpu);
    e["mfu"] = num(c.mfu);
    e["memory_gib"] = num(c.memory_gib);
    e["hbm_gib"] = num(c.hbm_gib);
    e["breakdown_s"] = {{"compute", num(c.compute_s)},
                        {"exposed_comm", num(c.exposed_comm_s)},
                        {"bubble", num(c.bubble_s)},
                        {"other", num(c.other_s)}};
  }
  if (!c.finish_days.empty()) {
    e["ideal_days"] = num(c.ideal_days);
    e["ettr_mean"] = num(c.ettr_mean);
    e["final_checkpoint_s"] = num(c.final_checkpoint_s);
    e["time_to_train_p50_days"] = num(c.finish_p50_days);
    e["time_to_train_conf_days"] = num(c.finish_conf_days);
    ordered f = ordered::array();
    for (double d : c.finish_days)
      f.push_back(num(d));
    e["time_to_train_days"] = f;
  }
  if (c.status == CandidateStatus::kOk) {
    e["days"] = c.days;
    e["segments_days"] = c.segments;
    e["spare_instances"] = c.spare_instances;
    e["reserved_instances"] = c.reserved_instances;
    e["offering_blocks"] = c.blocks;
    e["success_fraction"] = num(c.success_fraction);
    e["cost_usd"] = num(c.cost_usd);
    e["reserved_gpu_hours"] = num(c.reserved_gpu_hours);
    e["idle_gpu_hours"] = num(c.idle_gpu_hours);
    e["lost_gpu_hours"] = num(c.lost_gpu_hours);
    e["meets_deadline"] = c.meets_deadline;
    e["within_budget"] = c.within_budget;
    ordered curve = ordered::array();
    for (const IntervalPoint& pt : c.ettr_curve.points)
      curve.push_back({{"interval_min", num(pt.interval_s / 60)},
                       {"ettr_mean", num(pt.ettr_mean)},
                       {"ettr_p10", num(pt.ettr_p10)},
                       {"ettr_p90", num(pt.ettr_p90)}});
    if (!c.ettr_curve.points.empty())
      e["ettr_vs_checkpoint_interval"] = {
          {"auto_interval_min", num(c.ettr_curve.auto_s / 60)},
          {"configured_interval_min", num(c.ettr_curve.configured_s / 60)},
          {"points", curve}};
  } else {
    e["reason"] = c.reason;
  }
  return e;
}

}  // namespace

std::string plan_json(const PlanResult& r) {
  ordered j;
  j["plan"] = r.name;
  j["file"] = r.file;
  j["token_budget"] = num(r.token_budget);
  j["confidence"] = num(r.confidence);
  j["deadline_days"] = r.deadline_days ? num(*r.deadline_days) : ordered(nullptr);
  j["budget_usd"] = r.budget_usd ? num(*r.budget_usd) : ordered(nullptr);
  j["replicas"] = r.replicas;
  j["seed"] = r.seed;
  j["rules"] = {{"days_per_segment", {1, 182}},
                {"segments", "back to back, each ending with reclaim at end - notice"},
                {"offering_sizes", {1, 2, 4, 8, 16, 32, 64}},
                {"days",
                 "nearest-rank confidence quantile of ceil((t + final checkpoint + "
                 "notice) / 1 d), checked with the exact reservation"}};
  j["cheapest_meeting_deadline"] = r.cheapest;
  j["fastest_within_budget"] = r.fastest;
  ordered arr = ordered::array();
  for (const auto& c : r.candidates)
    arr.push_back(candidate_json(c));
  j["candidates"] = arr;
  return j.dump(2) + "\n";
}

std::string plan_table(const PlanResult& r) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-3s %-26s %5s %6s %-14s %5s %-11s %10s %6s  %s\n", "#",
                "instance type", "count", "GPUs", "parallelism", "days", "segments", "cost",
                "P(done)", "verdict");
  out += buf;
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const auto& c = r.candidates[i];
    const bool ok = c.status == CandidateStatus::kOk;
    std::snprintf(buf, sizeof buf, "%-3zu %-26s %5d %6s %-14s %5s %-11s %10s %6s  %s\n", i,
                  c.system.c_str(), c.count, c.gpus > 0 ? std::to_string(c.gpus).c_str() : "-",
                  c.parallelism.c_str(), ok ? std::to_string(c.days).c_str() : "-",
                  segments_text(c.segments).c_str(), cost_text(c).c_str(),
                  ok ? fmt("%.2f", c.success_fraction).c_str() : "-", c.verdict.c_str());
    out += buf;
  }
  return out;
}

namespace {

// "- <what>: **512 × p6-b200.48xlarge** (...) for **109 days** (...)", or "none qualifies".
std::string recommendation_md(const PlanResult& r, const char* what, int idx) {
  if (idx < 0) return std::string("- ") + what + ": none of the candidates qualifies.\n";
  const auto& c = r.candidates[idx];
  return std::string("- ") + what + ": **" + std::to_string(c.count) + " × " + c.system + "** (" +
         std::to_string(c.gpus) + " GPUs, " + c.parallelism + ") for **" + std::to_string(c.days) +
         " days** (segments " + segments_text(c.segments) + "; " +
         std::to_string(c.reserved_instances) + " instances reserved with " +
         std::to_string(c.spare_instances) + " for spares, " + std::to_string(c.blocks) +
         " offering block(s) per segment), " + cost_text(c) + "; done in " +
         fmt("%.0f", c.success_fraction * 100) +
         " % of runs within the reservation; expected ETTR " + fmt("%.3f", c.ettr_mean) + ".\n";
}

// ETTR against the checkpoint interval of each recommendation, as a table.
std::string ettr_curves_md(const PlanResult& r) {
  std::string md;
  std::vector<int> curves;
  for (int idx : {r.cheapest, r.fastest})
    if (idx >= 0 && std::find(curves.begin(), curves.end(), idx) == curves.end() &&
        !r.candidates[idx].ettr_curve.points.empty())
      curves.push_back(idx);
  for (int idx : curves) {
    const auto& c = r.candidates[idx];
    md += "\nETTR against the checkpoint interval for #" + std::to_string(idx) + " (" +
          std::to_string(std::min(r.replicas, kPlanCurveReplicas)) +
          " runs per point; `auto` = " + fmt("%.1f", c.ettr_curve.auto_s / 60) +
          " min, the plan's = " + fmt("%.1f", c.ettr_curve.configured_s / 60) +
          " min):\n\n| interval min | ETTR mean | P10 | P90 |\n|---|---|---|---|\n";
    for (const auto& pt : c.ettr_curve.points)
      md += "| " + fmt("%.1f", pt.interval_s / 60) + " | " + fmt("%.4f", pt.ettr_mean) + " | " +
            fmt("%.4f", pt.ettr_p10) + " | " + fmt("%.4f", pt.ettr_p90) + " |\n";
  }
  return md;
}

// The candidates table: one row per type × count × layout with as much as was computed.
std::string candidates_md(const PlanResult& r) {
  std::string md =
      "\n## Candidates\n\n| # | type | count | GPUs | parallelism | tok/s/GPU | mem GiB | "
      "TTT P50 d | TTT conf d | days | segments | cost | P(done) | idle GPU-h | lost GPU-h | "
      "verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const auto& c = r.candidates[i];
    const bool ok = c.status == CandidateStatus::kOk;
    const bool sim = c.status != CandidateStatus::kInvalid;
    const bool mc = !c.finish_days.empty();
    md += "| " + std::to_string(i) + " | " + c.system + " | " + std::to_string(c.count) + " | " +
          std::to_string(c.gpus) + " | " + c.parallelism + " | " +
          (sim ? fmt("%.0f", c.tokens_per_s_per_gpu) : "-") + " | " +
          (sim ? fmt("%.1f", c.memory_gib) : "-") + " | " +
          (mc ? fmt("%.1f", c.finish_p50_days) : "-") + " | " +
          (mc ? fmt("%.1f", c.finish_conf_days) : "-") + " | " +
          (ok ? std::to_string(c.days) : "-") + " | " + segments_text(c.segments) + " | " +
          cost_text(c) + " | " + (ok ? fmt("%.2f", c.success_fraction) : "-") + " | " +
          (ok ? fmt("%.0f", c.idle_gpu_hours) : "-") + " | " +
          (ok ? fmt("%.0f", c.lost_gpu_hours) : "-") + " | " + c.verdict + " |\n";
  }
  return md;
}

// One price line per instance type, with its source.
std::string prices_md(const PlanResult& r) {
  std::string md = "\n## Prices\n\n";
  std::vector<std::string> seen;
  for (const auto& c : r.candidates) {
    if (std::find(seen.begin(), seen.end(), c.system) != seen.end()) continue;
    seen.push_back(c.system);
    md += "- " + c.system + ": " + fmt("$%.4f", c.price_per_instance_hour) +
          " per instance-hour — " + c.price_source + "\n";
  }
  return md;
}

constexpr const char* kMethodMd =
    "\n## Method\n\nTraining Plan rules (reliability-moe.md §5): whole days, 1–182 days per "
    "segment, segments back to back; instances are reclaimed from the termination notice "
    "before each segment ends (a forced interruption with a checkpoint if it fits, restart "
    "at the next segment); a final checkpoint is written after the last token. Days = the "
    "confidence quantile of ceil((time to train + final checkpoint + notice) / 1 day), "
    "checked by rerunning the Monte Carlo with the exact segment layout. Cost = days × 24 × "
    "(count + instances holding the spare nodes) × price. Idle GPU-hours: reserved but after the "
    "mean finish; lost GPU-hours: "
    "failures, restarts, checkpoints and reclaims (mean finish − failure-free time).\n";

}  // namespace

std::string plan_markdown(const PlanResult& r) {
  std::string md = "# Capacity plan: " + r.name + "\n\n";
  md += "Plan file: `" + r.file + "`. Token budget " + fmt("%.4g", r.token_budget) +
        " tokens; confidence P" + fmt("%.0f", r.confidence * 100) + " over " +
        std::to_string(r.replicas) + " Monte Carlo runs (seed " + std::to_string(r.seed) + ")";
  if (r.deadline_days) md += "; deadline " + fmt("%.0f", *r.deadline_days) + " days";
  if (r.budget_usd) md += "; budget " + format_usd(*r.budget_usd);
  md += ".\n\n## Recommendation\n\n";
  md += recommendation_md(r, "Cheapest meeting the deadline", r.cheapest);
  md += recommendation_md(r, "Fastest within the budget", r.fastest);
  md += ettr_curves_md(r);
  md += candidates_md(r);
  md += prices_md(r);
  md += kMethodMd;
  return md;
}

}  // namespace fleetsim
