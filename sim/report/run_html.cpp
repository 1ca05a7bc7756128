// report.html of `fleetsim run` (run_html.h). Numbers in fixed printf formats: the same scenario
// and seed give the same bytes.
#include "report/run_html.h"

#include <cstdio>

#include "report/html.h"

namespace fleetsim {

namespace {

using namespace html;

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The title, the configuration line and the headline numbers.
std::string headline_html(const Scenario& s, const StepResult& r) {
  const TrainingWorkload& w = *s.training;
  const ParallelConfig& p = w.par;
  std::string body = "<h1>fleetsim run: " + escape(s.name) + "</h1>\n";
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s on %d GPUs (%d × %s); tp %d pp %d cp %d dp %d vp %d ep %d; batch %d × %d "
                "tokens, micro-batch %d; %s; simulated: %s",
                w.model.display_name.c_str(), w.gpus, s.count, s.system.name.c_str(), p.tp, p.pp,
                p.cp, p.dp, p.vp, p.ep, p.global_batch, p.seq_len, p.micro_batch,
                to_string(p.precision), r.mode.c_str());
  body += "<p>" + escape(buf) + "</p>\n";
  const MemoryBreakdown& m = r.memory;
  body += table({"step time", "tokens/s/GPU", "model TFLOP/s/GPU", "MFU", "memory per GPU"},
                {{fmt("%.3f s", r.step_time_s), fmt("%.1f", r.tokens_per_s_per_gpu),
                  fmt("%.1f", r.model_tflops_per_gpu),
                  fmt("%.1f %%", r.mfu * 100) + fmt(" of %.0f", r.peak_tflops),
                  fmt("%.2f GiB", static_cast<double>(m.total) / kGiB) +
                      fmt(" of %.2f GiB: ", static_cast<double>(m.capacity) / kGiB) +
                      (m.fits ? "fits" : "does NOT fit")}});
  return body;
}

// The critical rank's step split into its parts, and the closed-form bubble.
std::string breakdown_html(const StepResult& r) {
  const TimeBreakdown& b = r.breakdown;
  std::string body =
      "<h2>Step-time breakdown (critical rank)</h2>\n" +
      stacked_bars_svg("Step time " + fmt("%.3f s", r.step_time_s), {"critical rank"},
                       {"compute", "TP exposed", "CP exposed", "EP exposed", "PP transfers",
                        "pipeline bubble", "DP exposed", "optimizer", "host exposed"},
                       {{b.compute, b.tp_exposed, b.cp_exposed, b.ep_exposed, b.pp_exposed,
                         b.bubble, b.dp_exposed, b.optimizer, b.host_exposed}});
  body += "<p>Closed-form bubble fraction (pp − 1) / (vp · m) = " +
          fmt("%.3f", r.bubble_fraction_closed_form) + ".</p>\n";
  return body;
}

// Memory per GPU of the most loaded stage, by kind.
std::string memory_html(const MemoryBreakdown& m) {
  return "<h2>Memory per GPU (stage " + std::to_string(m.stage) + ")</h2>\n" +
         stacked_bars_svg(
             "Memory " + fmt("%.2f GiB", static_cast<double>(m.total) / kGiB) +
                 fmt(" of %.2f GiB HBM", static_cast<double>(m.capacity) / kGiB),
             {"stage " + std::to_string(m.stage)},
             {"weights", "gradients", "optimizer", "master weights", "activations", "comm buffers"},
             {{static_cast<double>(m.weights) / kGiB, static_cast<double>(m.gradients) / kGiB,
               static_cast<double>(m.optimizer) / kGiB,
               static_cast<double>(m.master_weights) / kGiB,
               static_cast<double>(m.activations) / kGiB,
               static_cast<double>(m.comm_buffers) / kGiB}},
             "GiB");
}

// USE: GPU busy fractions and the busiest links.
std::string use_html(const StepResult& r) {
  std::string body =
      "<h2>USE: GPUs and links</h2>\n<p>GPU busy " + fmt("%.1f %%", r.gpu_busy_fraction * 100) +
      " of the step on the critical rank (min " + fmt("%.1f", r.gpu_busy_min * 100) + " / mean " +
      fmt("%.1f", r.gpu_busy_mean * 100) + " / max " + fmt("%.1f %%", r.gpu_busy_max * 100) +
      " over the simulated GPUs); useful rate while busy " + fmt("%.1f", r.gpu_useful_tflops) +
      " model TFLOP/s; launch-bound (the GPU waiting for the host) " +
      fmt("%.1f %%", r.launch_bound_fraction * 100) + " of the step.</p>\n";
  std::vector<std::vector<std::string>> links;
  for (const LinkUse& l : r.top_links)
    links.push_back({l.name, fmt("%.1f %%", l.utilization * 100),
                     fmt("%.1f %%", l.saturation * 100), fmt("%.4g", l.bytes)});
  if (!links.empty()) body += table({"link", "utilization", "saturated", "bytes per step"}, links);
  return body;
}

// MoE load: routing statistics and the heatmap of tokens per EP rank and MoE layer.
std::string moe_html(const MoeOutcome& moe, const StepResult& r) {
  const MoeSummary& x = moe.summary;
  std::string body = "<h2>MoE load</h2>\n<p>Routing " + escape(to_string(moe.spec.kind)) +
                     "; expert max/mean " + fmt("%.3f", x.expert_max_over_mean_avg) +
                     ", EP-rank max/mean " + fmt("%.3f", x.rank_max_over_mean_avg) + " (worst " +
                     fmt("%.3f", x.rank_max_over_mean_worst) + "), dropped " +
                     fmt("%.2f %%", x.dropped_fraction * 100) + "; step " +
                     fmt("%.3f s", r.step_time_s) + " vs " + fmt("%.3f s", moe.balanced_step_s) +
                     " balanced (slowdown " + fmt("%.2f %%", moe.slowdown_pct) + ").</p>\n";
  if (!x.heatmap.empty())
    body += heatmap_svg("Tokens per EP rank per micro-batch, by MoE layer", "EP rank", "MoE layer",
                        x.heatmap);
  return body;
}

// The run-level Monte Carlo: ETTR summary, lost time by cause, ETTR vs checkpoint interval.
std::string run_section_html(const RunOutcome& run, const EttrCurve* curve) {
  const RunSummary& rs = run.summary;
  std::string body = "<h2>Run (" + std::to_string(rs.replicas) + " Monte Carlo replicas)</h2>\n";
  body += table(
      {"ETTR mean", "P10", "P50", "P90", "goodput tokens/s", "checkpoint interval", "job MTBF"},
      {{fmt("%.4f", rs.ettr_mean), fmt("%.4f", rs.ettr_p10), fmt("%.4f", rs.ettr_p50),
        fmt("%.4f", rs.ettr_p90), fmt("%.4g", rs.goodput_tokens_per_s),
        fmt("%.1f min", rs.interval_s / 60), fmt("%.2f h", rs.job_mtbf_h)}});
  std::vector<std::string> causes;
  std::vector<double> hours;
  for (int c = 0; c < kLostCauses; ++c) {
    causes.push_back(to_string(static_cast<LostCause>(c)));
    hours.push_back(rs.lost_mean_s[c] / 3600);
  }
  body += stacked_bars_svg("Lost time by cause (mean per run)", {"lost"}, causes, {hours}, "hours");
  if (curve != nullptr && !curve->points.empty()) {
    Series mean{"ETTR mean", {}, {}}, p10{"ETTR P10", {}, {}}, p90{"ETTR P90", {}, {}};
    for (const IntervalPoint& pt : curve->points) {
      for (Series* se : {&mean, &p10, &p90})
        se->x.push_back(pt.interval_s / 60);
      mean.y.push_back(pt.ettr_mean);
      p10.y.push_back(pt.ettr_p10);
      p90.y.push_back(pt.ettr_p90);
    }
    std::vector<Mark> marks;
    if (curve->auto_s > 0) marks.push_back({"auto (Daly)", curve->auto_s / 60});
    if (curve->configured_s > 0) marks.push_back({"this run", curve->configured_s / 60});
    body += "<h2>ETTR vs checkpoint interval</h2>\n" +
            line_svg("ETTR vs checkpoint interval", "checkpoint interval (minutes)", "ETTR",
                     {mean, p10, p90}, marks, /*log_x=*/true);
  }
  return body;
}

std::string warnings_html(const StepResult& r) {
  if (r.warnings.empty()) return "";
  std::string body = "<h2>Warnings</h2>\n<ul>";
  for (const auto& wm : r.warnings)
    body += "<li>" + escape(wm) + "</li>";
  return body + "</ul>\n";
}

}  // namespace

std::string run_html(const Scenario& s, const StepOutcome& step, const RunOutcome* run,
                     const EttrCurve* curve) {
  const StepResult& r = step.result;
  std::string body = headline_html(s, r);
  body += breakdown_html(r);
  body += memory_html(r.memory);
  body += use_html(r);
  if (step.moe) body += moe_html(*step.moe, r);
  if (run != nullptr) body += run_section_html(*run, curve);
  body += warnings_html(r);
  return page("fleetsim run: " + s.name, body);
}

}  // namespace fleetsim
