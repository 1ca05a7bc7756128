// Text summaries `fleetsim run` and `fleetsim memory` print on stdout (commands.h).
#include <cstdio>

#include "cli/commands.h"

namespace fleetsim {

void print_memory(const MemoryBreakdown& m) {
  auto gib = [](int64_t b) { return static_cast<double>(b) / (1024.0 * 1024 * 1024); };
  std::printf("memory per GPU (stage %d, %d layers, %d forward passes in flight", m.stage,
              m.layers_on_stage, m.in_flight_microbatches);
  if (m.params_on_rank > 0)
    std::printf("; %.4g B parameters held", static_cast<double>(m.params_on_rank) / 1e9);
  std::printf("):\n");
  // The parameter state as bytes per parameter held: the precision recipe and optimizer options
  // (bf16 / FP8 weights, fp32 / bf16 gradients and moments) and the data-parallel sharding show.
  const auto state = [&](const char* name, int64_t bytes) {
    std::printf("  %-16s %9.2f GiB", name, gib(bytes));
    if (m.params_on_rank > 0)
      std::printf("  (%.2f B per parameter)",
                  static_cast<double>(bytes) / static_cast<double>(m.params_on_rank));
    std::printf("\n");
  };
  state("weights", m.weights);
  state("gradients", m.gradients);
  state("optimizer (m, v)", m.optimizer);
  state("master weights", m.master_weights);
  std::printf("  activations      %9.2f GiB\n", gib(m.activations));
  std::printf("  working          %9.2f GiB  (%s)\n", gib(m.working),
              m.peak_in_loss ? "logits and loss" : "one layer's backward");
  std::printf("  comm buffers     %9.2f GiB\n", gib(m.comm_buffers));
  std::printf("  allocated peak   %9.2f GiB\n", gib(m.total));
  std::printf("  reserved         %9.2f GiB  (+ %.2f GiB CUDA context, NCCL)\n", gib(m.reserved),
              gib(m.device_overhead));
  std::printf("  total            %9.2f GiB of %.2f GiB HBM: %s\n",
              gib(m.reserved + m.device_overhead), gib(m.capacity),
              m.fits ? "fits" : "DOES NOT FIT");
  std::printf(
      "  peak: %s of micro-batch %d, chunk %d, after the forward of micro-batch %d, "
      "chunk %d\n",
      m.peak_in_loss ? "the loss" : "the first backward", m.peak_backward_microbatch,
      m.peak_backward_chunk, m.peak_forward_microbatch, m.peak_forward_chunk);
}

void print_moe(const MoeOutcome& m, int ep) {
  const MoeSummary& x = m.summary;
  std::printf("\nMoE routing: %s", to_string(m.spec.kind));
  if (m.spec.kind == RoutingKind::kDirichlet) std::printf(" (alpha %.3g)", m.spec.alpha);
  if (m.spec.kind == RoutingKind::kZipf) std::printf(" (s %.3g)", m.spec.s);
  if (m.spec.kind == RoutingKind::kHistogram) std::printf(" (%s)", m.spec.histogram_file.c_str());
  std::printf(", placement %s", to_string(m.spec.placement));
  if (m.spec.placement == Placement::kEplb)
    std::printf(" (+%d replicas)", m.spec.redundant_experts);
  if (m.spec.capacity_factor > 0) {
    std::printf(", capacity factor %.3g\n", m.spec.capacity_factor);
  } else {
    std::printf(", dropless\n");
  }
  std::printf("  expert load max/mean   %6.3f  (MaxVio %.3f), layer average\n",
              x.expert_max_over_mean_avg, x.maxvio);
  std::printf("  EP-rank load max/mean  %6.3f  (worst layer and micro-batch %.3f)\n",
              x.rank_max_over_mean_avg, x.rank_max_over_mean_worst);
  std::printf("  dropped tokens         %6.2f %%\n", x.dropped_fraction * 100);
  std::printf("  step vs balanced       %+6.1f %%  (%.3f s balanced)\n", m.slowdown_pct,
              m.balanced_step_s);
  std::printf("  all-to-all share       %6.1f %% of the step\n", m.all_to_all_share * 100);
  if (!x.bias_trajectory.empty()) {
    std::printf("  bias update            max/mean %.3f -> %.3f over %zu steps\n",
                x.bias_trajectory.front(), x.bias_trajectory.back(), x.bias_trajectory.size() - 1);
  }
  if (m.eplb_extra_bytes > 0)
    std::printf("  EPLB replicas memory   %6.2f GiB per GPU\n",
                m.eplb_extra_bytes / (1024.0 * 1024 * 1024));
  std::printf("  copies per EP rank (mean per layer and micro-batch):");
  for (int q = 0; q < ep; ++q)
    std::printf("%s%.0f", q % 8 == 0 ? "\n   " : " ", x.rank_tokens[q]);
  std::printf("\n");
}

void print_run(const Scenario& s, const RunOutcome& o) {
  const RunSpec& spec = *s.run;
  const RunSummary& m = o.summary;
  std::printf("\nrun: %d Monte Carlo replicas, ", m.replicas);
  if (spec.token_budget > 0) std::printf("token budget %.4g", spec.token_budget);
  if (spec.token_budget > 0 && spec.duration_s > 0) std::printf(" within ");
  if (spec.duration_s > 0) std::printf("%.2f days", spec.duration_s / 86400.0);
  std::printf("; failures %s", spec.failures.name.empty() ? "none" : spec.failures.name.c_str());
  if (m.job_mtbf_h > 0) {
    std::printf(" (job MTBF %.2f h)\n", m.job_mtbf_h);
  } else {
    std::printf(" (no failure rate)\n");
  }
  std::printf(
      "  checkpoints        %s every %.1f min of training (%.0f GB), %.1f taken, %.2f lost\n",
      to_string(spec.checkpoint.mode), m.interval_s / 60.0, spec.checkpoint.size_bytes / 1e9,
      m.checkpoints_mean, m.checkpoints_lost_mean);
  for (const auto& [level, t] : o.steps.slow_gpu_s)
    std::printf("  step, a GPU at %3d%% %9.3f s (healthy %.3f s)\n", level * 5, t,
                o.steps.healthy_s);
  std::printf("  ETTR               mean %.4f  P10 %.4f  P50 %.4f  P90 %.4f\n", m.ettr_mean,
              m.ettr_p10, m.ettr_p50, m.ettr_p90);
  std::printf("  goodput            %.4g tokens/s (healthy %.4g)\n", m.goodput_tokens_per_s,
              m.tokens_per_s);
  if (spec.token_budget > 0) {
    std::printf(
        "  time to budget     P50 %.2f days  P90 %.2f days  (%d of %d replicas reached it)\n",
        m.time_to_budget_p50_s / 86400, m.time_to_budget_p90_s / 86400, m.reached_budget,
        m.replicas);
  }
  std::printf(
      "  interruptions      %.2f unexpected, %.2f planned; gray failures %.2f (%.2f "
      "detected); spare nodes taken %.2f (pool of %d, repaired nodes return to it)\n",
      m.interruptions_mean, m.planned_mean, m.gray_onsets_mean, m.gray_detected_mean,
      m.spares_used_mean, spec.recovery.spares);
  std::printf("  lost time (mean hours per run):\n");
  for (int c = 0; c < kLostCauses; ++c)
    if (m.lost_mean_s[c] > 0)
      std::printf("    %-16s %10.2f h\n", to_string(static_cast<LostCause>(c)),
                  m.lost_mean_s[c] / 3600);
  std::printf("  failures by cause (mean per run):\n");
  for (size_t c = 0; c < m.failure_components.size(); ++c)
    if (m.failures_mean[c] > 0)
      std::printf("    %-22s %9.2f\n", m.failure_components[c].c_str(), m.failures_mean[c]);
}

}  // namespace fleetsim
