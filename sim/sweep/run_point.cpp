// One sweep point: the expanded scenario through the same path as `fleetsim run` (loader, the
// study layer's cluster, simulate_training_step or the collective, and the run-level Monte Carlo
// when the scenario has a "run" section, on one thread since points already run in parallel),
// reduced to the row's metrics.
#include <algorithm>
#include <exception>
#include <map>

#include "core/error.h"
#include "study/cluster.h"
#include "study/collective.h"
#include "study/run_level.h"
#include "study/training_step.h"
#include "sweep/sweep.h"

namespace fleetsim {

struct PointRunner::Cache {
  // Compute models by GPU and calibration set, reused across the runner's points.
  ComputeModelCache compute;
};

PointRunner::PointRunner(LoadOptions load) : load_(std::move(load)), cache_(new Cache) {
  if (load_.data_dir.empty()) load_.data_dir = default_data_dir();
}

PointRunner::~PointRunner() {
  delete cache_;
}

namespace {

size_t metric_index(std::string_view name) {
  for (size_t i = 0; i < kNumSweepMetrics; ++i)
    if (kSweepMetricColumns[i] == name) return i;
  throw InternalError("unknown sweep metric " + std::string(name));
}

void set(SweepRow& row, std::string_view name, MetricValue v) {
  row.metrics[metric_index(name)] = std::move(v);
}

}  // namespace

SweepRow PointRunner::run(const SweepPlan& plan, const SweepPoint& point) {
  SweepRow row;
  row.point = point.index;
  row.key = point.key;
  row.values_json = point.values_json;
  try {
    const Scenario s =
        parse_scenario(point.scenario_json, sweep_point_file(plan, point.index), load_);
    const StudyCluster cluster = load_study_cluster(s, load_.data_dir, &cache_->compute);
    if (s.training) {
      const TrainingWorkload& w = *s.training;
      const StepOutcome run = simulate_training_step(s, cluster, /*want_trace=*/false);
      const StepResult& r = run.result;
      const ParallelConfig& p = w.par;
      const TimeBreakdown& b = r.breakdown;
      set(row, "workload", MetricValue::str("training"));
      set(row, "gpus", MetricValue::integral(w.gpus));
      set(row, "tp", MetricValue::integral(p.tp));
      set(row, "pp", MetricValue::integral(p.pp));
      set(row, "cp", MetricValue::integral(p.cp));
      set(row, "dp", MetricValue::integral(p.dp));
      set(row, "vp", MetricValue::integral(p.vp));
      set(row, "ep", MetricValue::integral(p.ep));
      set(row, "micro_batches", MetricValue::integral(r.micro_batches));
      set(row, "step_time_s", MetricValue::num(r.step_time_s));
      set(row, "tokens_per_s_per_gpu", MetricValue::num(r.tokens_per_s_per_gpu));
      set(row, "model_tflops_per_gpu", MetricValue::num(r.model_tflops_per_gpu));
      set(row, "mfu", MetricValue::num(r.mfu));
      set(row, "memory_total_gib",
          MetricValue::num(static_cast<double>(r.memory.total) / (1024.0 * 1024 * 1024)));
      set(row, "memory_fits", MetricValue::flag(r.memory.fits));
      set(row, "compute_s", MetricValue::num(b.compute));
      set(row, "tp_exposed_s", MetricValue::num(b.tp_exposed));
      set(row, "cp_exposed_s", MetricValue::num(b.cp_exposed));
      set(row, "ep_exposed_s", MetricValue::num(b.ep_exposed));
      set(row, "pp_exposed_s", MetricValue::num(b.pp_exposed));
      set(row, "dp_exposed_s", MetricValue::num(b.dp_exposed));
      set(row, "bubble_s", MetricValue::num(b.bubble));
      set(row, "optimizer_s", MetricValue::num(b.optimizer));
      set(row, "host_exposed_s", MetricValue::num(b.host_exposed));
      set(row, "events", MetricValue::integral(static_cast<int64_t>(r.events)));
      if (run.moe) set(row, "moe_slowdown_pct", MetricValue::num(run.moe->slowdown_pct));
      if (s.run) {
        const RunSummary m =
            simulate_run_level(s, cluster, run, /*threads=*/1, /*want_events=*/false).summary;
        set(row, "ettr_mean", MetricValue::num(m.ettr_mean));
        set(row, "ettr_p10", MetricValue::num(m.ettr_p10));
        set(row, "ettr_p50", MetricValue::num(m.ettr_p50));
        set(row, "ettr_p90", MetricValue::num(m.ettr_p90));
        set(row, "goodput_tokens_per_s", MetricValue::num(m.goodput_tokens_per_s));
        set(row, "interruptions_mean", MetricValue::num(m.interruptions_mean));
        if (m.reached_budget > 0) {
          set(row, "time_to_budget_p50_s", MetricValue::num(m.time_to_budget_p50_s));
          set(row, "time_to_budget_p90_s", MetricValue::num(m.time_to_budget_p90_s));
        }
      }
    } else {
      const CollectiveWorkload& w = *s.collective;
      const int n = static_cast<int>(collective_group(w, cluster.topo).size());
      // The largest message size of the list (the bandwidth-bound end).
      const Bytes size =
          *std::max_element(w.sizes.begin(), w.sizes.end(),
                            [](const Bytes& a, const Bytes& b) { return a.count() < b.count(); });
      const CollectiveResult r = simulate_scenario_collective(s, cluster, size);
      set(row, "workload", MetricValue::str("collective"));
      set(row, "gpus", MetricValue::integral(n));
      set(row, "size_bytes", MetricValue::integral(size.count()));
      set(row, "algorithm", MetricValue::str(to_string(r.algorithm)));
      set(row, "time_us", MetricValue::num(r.time.us()));
      set(row, "algbw_gbps", MetricValue::num(r.algbw_gbps));
      set(row, "busbw_gbps", MetricValue::num(r.busbw_gbps));
    }
    row.status = "ok";
  } catch (const InputError& e) {
    row = SweepRow{point.index, point.key, "invalid", point.values_json, {}, e.what()};
  } catch (const std::exception& e) {
    row = SweepRow{point.index, point.key, "error", point.values_json, {}, e.what()};
  }
  return row;
}

}  // namespace fleetsim
