// Parsing of the scenario's "run" section and of failure profiles (failures/*.json). Every
// value is range-checked; errors name the file and JSON pointer.
#include "scenario/run_loader.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/units.h"
#include "scenario/json_reader.h"
#include "scenario/scenario.h"

namespace fleetsim {
namespace {

using namespace jsonr;

const std::vector<std::string> kRunKeys = {
    "duration",   "token_budget", "replicas", "failures",    "gray_failures", "health_checks",
    "checkpoint", "recovery",     "spares",   "maintenance", "reservation"};
const std::vector<std::string> kFailuresKeys = {"profile", "scale", "overrides", "inject"};
const std::vector<std::string> kClassKeys = {"rate_per_hour", "per", "takes_down", "weibull_shape"};
const std::vector<std::string> kInjectKeys = {"at", "component", "node"};
const std::vector<std::string> kGrayKeys = {"kind", "rate_per_hour", "speed", "duration_median",
                                            "duration_sigma"};
const std::vector<std::string> kHealthKeys = {"interval", "cost", "hard_detection",
                                              "gray_threshold", "gray_consecutive"};
const std::vector<std::string> kCheckpointKeys = {
    "mode",           "interval",        "interval_steps",
    "size",           "bytes_per_param", "write_bandwidth",
    "read_bandwidth", "blocking_time",   "upload_time",
    "load_time",      "persistent_every"};
const std::vector<std::string> kRecoveryKeys = {"mode",           "restart", "replace",
                                                "checkpointless", "repair",  "on_no_spare"};
const std::vector<std::string> kMaintenanceKeys = {"interval", "duration"};
const std::vector<std::string> kReservationKeys = {"segments", "termination_notice"};
const std::vector<std::string> kSegmentKeys = {"start", "duration"};
const std::vector<std::string> kProfileKeys = {"name", "description", "source", "classes"};
const std::vector<std::string> kProfileClassKeys = {"component",  "rate_per_hour", "per",
                                                    "takes_down", "weibull_shape", "source"};

FaultUnit unit_of(const Obj& o, const std::string& key) {
  const std::string u = o.choice(key, {"gpu", "node", "domain", "job"});
  return u == "gpu"      ? FaultUnit::kGpu
         : u == "node"   ? FaultUnit::kNode
         : u == "domain" ? FaultUnit::kDomain
                         : FaultUnit::kJob;
}

std::string component_of(const Obj& o, const std::string& key) {
  return o.choice(key, known_components());
}

double seconds(const Obj& o, const std::string& key, bool positive) {
  const double s = o.time(key).seconds();
  if (positive && s <= 0) o.fail(o.at(key), "expected a time > 0");
  return s;
}

void read_class_fields(const Obj& o, FailureClass* c) {
  if (o.has("rate_per_hour")) c->rate_per_hour = o.number("rate_per_hour", 0.0, 1e3);
  if (o.has("per")) c->per = unit_of(o, "per");
  if (o.has("takes_down")) c->takes_down = unit_of(o, "takes_down");
  if (o.has("weibull_shape")) c->weibull_shape = o.number("weibull_shape", 0.05, 20.0);
}

void read_failures(const Obj& f, RunSpec* r, const std::string& data_dir) {
  if (f.has("profile")) {
    try {
      r->failures = load_failure_profile(f.str("profile"), data_dir);
    } catch (const InputError& e) {
      if (e.file().empty()) throw InputError(f.file(), f.at("profile"), e.message());
      throw;
    }
  }
  if (f.has("scale")) {
    const double k = f.number("scale", 0.0, 1e6);
    for (auto& c : r->failures.classes)
      c.rate_per_hour *= k;
  }
  if (f.has("overrides")) {
    const Obj ov = f.object("overrides", known_components());
    for (const auto& comp : known_components()) {
      if (!ov.has(comp)) continue;
      const Obj o = ov.object(comp, kClassKeys);
      auto it = std::find_if(r->failures.classes.begin(), r->failures.classes.end(),
                             [&](const FailureClass& c) { return c.component == comp; });
      if (it == r->failures.classes.end()) {
        if (!o.has("rate_per_hour"))
          o.fail(o.at("rate_per_hour"), "missing required key 'rate_per_hour' (component '" + comp +
                                            "' is not in the profile)");
        FailureClass c;
        c.component = comp;
        c.source = "scenario override";
        r->failures.classes.push_back(c);
        it = r->failures.classes.end() - 1;
      }
      read_class_fields(o, &*it);
    }
  }
  if (f.has("inject")) {
    const json& arr = f.get("inject");
    if (!arr.is_array()) f.fail(f.at("inject"), "expected an array of {at, component, node}");
    for (size_t i = 0; i < arr.size(); ++i) {
      const Obj o(arr[i], f.file(), f.at("inject") + "/" + std::to_string(i), kInjectKeys);
      InjectedFailure inj;
      inj.at_s = seconds(o, "at", false);
      const std::string comp = component_of(o, "component");
      auto it = std::find_if(r->failures.classes.begin(), r->failures.classes.end(),
                             [&](const FailureClass& c) { return c.component == comp; });
      if (it == r->failures.classes.end())
        o.fail(o.at("component"), "component '" + comp +
                                      "' has no failure class; add it to the profile or under "
                                      "/run/failures/overrides");
      inj.failure_class = static_cast<int>(it - r->failures.classes.begin());
      inj.node = o.has("node") ? static_cast<int>(o.integer("node", 0, 1 << 24)) : 0;
      r->injected.push_back(inj);
    }
    std::stable_sort(
        r->injected.begin(), r->injected.end(),
        [](const InjectedFailure& a, const InjectedFailure& b) { return a.at_s < b.at_s; });
  }
}

void read_gray(const Obj& run, RunSpec* r) {
  const json& arr = run.get("gray_failures");
  if (!arr.is_array()) run.fail(run.at("gray_failures"), "expected an array of gray failures");
  for (size_t i = 0; i < arr.size(); ++i) {
    const Obj o(arr[i], run.file(), run.at("gray_failures") + "/" + std::to_string(i), kGrayKeys);
    GrayFailureSpec g;
    g.kind = o.choice("kind", {"gpu_clock", "storage"}) == "storage" ? GrayKind::kStorage
                                                                     : GrayKind::kGpuClock;
    g.rate_per_hour = o.number("rate_per_hour", 0.0, 1e3);
    const json& sp = o.get("speed");
    if (!sp.is_array() || sp.size() != 2 || !sp[0].is_number() || !sp[1].is_number())
      o.fail(o.at("speed"), "expected [min, max] fractions of clock / bandwidth in (0, 1)");
    g.speed_min = sp[0].get<double>();
    g.speed_max = sp[1].get<double>();
    if (!(g.speed_min > 0 && g.speed_min <= g.speed_max && g.speed_max < 1))
      o.fail(o.at("speed"), "expected 0 < min <= max < 1, got " + show(sp));
    g.duration_median_s = seconds(o, "duration_median", true);
    if (o.has("duration_sigma")) g.duration_sigma = o.number("duration_sigma", 0.0, 5.0);
    r->gray.push_back(g);
  }
}

// The GPUs and nodes of the job (as run/step_table.h job_shape counts them).
struct JobSize {
  int gpus = 1;
  int nodes = 1;
};
JobSize job_size(const ParallelConfig& par, const SystemSpec& system) {
  JobSize j;
  j.gpus = par.tp * par.pp * par.cp * par.dp;
  const int gpus_per_node = std::max(1, system.node.gpus);
  j.nodes = (j.gpus + gpus_per_node - 1) / gpus_per_node;
  return j;
}

void read_checkpoint(const Obj& c, RunSpec* r, const ModelSpec& model, const JobSize& job,
                     const SystemSpec& system) {
  CheckpointSpec& k = r->checkpoint;
  const std::string mode = c.choice("mode", {"sync", "async", "in_memory", "tiered"});
  k.mode = mode == "sync"        ? CheckpointMode::kSync
           : mode == "async"     ? CheckpointMode::kAsync
           : mode == "in_memory" ? CheckpointMode::kInMemory
                                 : CheckpointMode::kTiered;
  if (c.has("interval") && c.has("interval_steps"))
    c.fail(c.at("interval_steps"), "give either interval or interval_steps, not both");
  if (c.has("interval_steps")) {
    k.interval_kind = IntervalKind::kSteps;
    k.interval_steps = c.integer("interval_steps", 1, int64_t{1} << 40);
  } else if (c.has("interval")) {
    const json& v = c.get("interval");
    if (v.is_string() && v.get<std::string>() == "auto") {
      k.interval_kind = IntervalKind::kAuto;
    } else if (v.is_string() && v.get<std::string>() == "none") {
      k.interval_kind = IntervalKind::kNone;
    } else {
      k.interval_kind = IntervalKind::kMinutes;
      k.interval_minutes = seconds(c, "interval", true) / 60.0;
    }
  }
  const double bpp = c.has("bytes_per_param") ? c.number("bytes_per_param", 0.1, 64.0) : 14.0;
  k.size_bytes =
      c.has("size") ? c.bytes("size").as_double() : static_cast<double>(total_params(model)) * bpp;
  if (c.has("size") && c.has("bytes_per_param"))
    c.fail(c.at("bytes_per_param"), "give either size or bytes_per_param, not both");
  k.gpus = job.gpus;
  k.nodes = job.nodes;
  k.host_copy_bytes_per_s = system.node.pcie_bandwidth.bytes_per_second();
  k.peer_bytes_per_s = system.nics.bandwidth.bytes_per_second() * system.nics.per_node;
  if (c.has("write_bandwidth"))
    k.write_bytes_per_s = c.bandwidth("write_bandwidth").bytes_per_second();
  k.read_bytes_per_s = c.has("read_bandwidth") ? c.bandwidth("read_bandwidth").bytes_per_second()
                                               : k.write_bytes_per_s;
  if (c.has("blocking_time")) k.blocking_s = seconds(c, "blocking_time", false);
  if (c.has("upload_time")) k.upload_s = seconds(c, "upload_time", false);
  if (c.has("load_time")) k.load_s = seconds(c, "load_time", false);
  if (c.has("persistent_every")) {
    if (k.mode != CheckpointMode::kTiered)
      c.fail(c.at("persistent_every"), "persistent_every applies to mode 'tiered' only");
    k.persistent_every = static_cast<int>(c.integer("persistent_every", 1, 1 << 20));
  }
  // Storage is needed to write (sync), upload (async, tiered) and to load.
  const bool writes = k.mode == CheckpointMode::kSync       ? k.blocking_s < 0
                      : k.mode == CheckpointMode::kInMemory ? false
                                                            : k.upload_s < 0;
  if ((writes || k.load_s < 0) && k.mode != CheckpointMode::kInMemory && k.write_bytes_per_s <= 0)
    c.fail(c.at("write_bandwidth"),
           "missing required key 'write_bandwidth' (shared storage throughput, e.g. \"50GBps\"; "
           "or give blocking_time / upload_time and load_time)");
}

void read_recovery(const Obj& o, RunSpec* r) {
  RecoverySpec& k = r->recovery;
  if (o.has("mode"))
    k.mode = o.choice("mode", {"restart", "checkpointless"}) == "checkpointless"
                 ? RecoveryMode::kCheckpointless
                 : RecoveryMode::kRestart;
  if (o.has("restart")) k.restart_s = seconds(o, "restart", false);
  if (o.has("replace")) k.replace_s = seconds(o, "replace", false);
  if (o.has("checkpointless")) k.checkpointless_s = seconds(o, "checkpointless", false);
  if (o.has("repair")) k.repair_s = seconds(o, "repair", true);
  if (o.has("on_no_spare"))
    k.no_spare = o.choice("on_no_spare", {"wait", "shrink"}) == "shrink" ? NoSparePolicy::kShrink
                                                                         : NoSparePolicy::kWait;
}

void read_reservation(const Obj& o, RunSpec* r) {
  const json& arr = o.get("segments");
  if (!arr.is_array() || arr.empty())
    o.fail(o.at("segments"), "expected a non-empty array of {start, duration}");
  double prev_end = 0;
  for (size_t i = 0; i < arr.size(); ++i) {
    const Obj s(arr[i], o.file(), o.at("segments") + "/" + std::to_string(i), kSegmentKeys);
    ReservationSegment seg;
    seg.start_s = seconds(s, "start", false);
    seg.duration_s = seconds(s, "duration", true);
    if (seg.start_s < prev_end)
      s.fail(s.at("start"), "segments must be in order and must not overlap");
    prev_end = seg.start_s + seg.duration_s;
    r->reservation.segments.push_back(seg);
  }
  if (o.has("termination_notice"))
    r->reservation.termination_notice_s = seconds(o, "termination_notice", false);
  for (size_t i = 0; i < r->reservation.segments.size(); ++i) {
    if (r->reservation.segments[i].duration_s <= r->reservation.termination_notice_s)
      o.fail(o.at("segments") + "/" + std::to_string(i) + "/duration",
             "expected a segment longer than the termination notice");
  }
}

}  // namespace

std::vector<std::string> known_failure_profiles(const std::string& data_dir) {
  return json_stems(fs::path(data_dir) / "failures");
}

FailureProfile load_failure_profile(const std::string& name_or_path, const std::string& data_dir) {
  const std::string path =
      resolve_named_file(name_or_path, data_dir, "failures", "failure profile");
  const json j = parse_strict(read_file(path), path);
  const Obj root(j, path, "", kProfileKeys);
  FailureProfile p;
  p.name = root.str("name");
  p.source = root.str("source");
  const json& arr = root.get("classes");
  if (!arr.is_array() || arr.empty()) root.fail("/classes", "expected a non-empty array");
  for (size_t i = 0; i < arr.size(); ++i) {
    const Obj o(arr[i], path, "/classes/" + std::to_string(i), kProfileClassKeys);
    FailureClass c;
    c.component = component_of(o, "component");
    c.rate_per_hour = o.number("rate_per_hour", 0.0, 1e3);
    c.per = unit_of(o, "per");
    c.takes_down = unit_of(o, "takes_down");
    if (o.has("weibull_shape")) c.weibull_shape = o.number("weibull_shape", 0.05, 20.0);
    c.source = o.str("source");
    for (const auto& d : p.classes)
      if (d.component == c.component) o.fail(o.at("component"), "component given twice");
    p.classes.push_back(c);
  }
  return p;
}

RunSpec read_run_section(const Obj& run, const ModelSpec& model, const ParallelConfig& par,
                         const SystemSpec& system, const std::string& data_dir) {
  RunSpec r;
  const JobSize job = job_size(par, system);
  if (run.has("duration")) r.duration_s = seconds(run, "duration", true);
  if (run.has("token_budget")) r.token_budget = run.number("token_budget", 1.0, 1e18);
  if (r.duration_s <= 0 && r.token_budget <= 0)
    run.fail(run.ptr(), "expected a token_budget (tokens to train) or a duration (or both)");
  if (run.has("replicas")) r.replicas = static_cast<int>(run.integer("replicas", 1, 1000000));
  if (run.has("failures")) read_failures(run.object("failures", kFailuresKeys), &r, data_dir);
  for (const auto& inj : r.injected)
    if (inj.node >= job.nodes)
      run.fail(run.at("failures") + "/inject", "node " + std::to_string(inj.node) +
                                                   " is outside the job's " +
                                                   std::to_string(job.nodes) + " nodes");
  if (run.has("gray_failures")) read_gray(run, &r);
  if (run.has("health_checks")) {
    const Obj h = run.object("health_checks", kHealthKeys);
    r.health.enabled = true;
    r.health.interval_s = seconds(h, "interval", true);
    if (h.has("cost")) r.health.cost_s = seconds(h, "cost", false);
    if (r.health.cost_s >= r.health.interval_s)
      h.fail(h.at("cost"), "expected a cost below the interval");
    if (h.has("hard_detection")) r.health.hard_detection_s = seconds(h, "hard_detection", false);
    if (h.has("gray_threshold")) r.health.gray_threshold = h.number("gray_threshold", 1.0, 100.0);
    if (h.has("gray_consecutive"))
      r.health.gray_consecutive = static_cast<int>(h.integer("gray_consecutive", 1, 1000000));
  }
  if (run.has("checkpoint")) {
    read_checkpoint(run.object("checkpoint", kCheckpointKeys), &r, model, job, system);
  } else {
    r.checkpoint.interval_kind = IntervalKind::kNone;
  }
  if (run.has("recovery")) read_recovery(run.object("recovery", kRecoveryKeys), &r);
  if (run.has("spares")) r.recovery.spares = static_cast<int>(run.integer("spares", 0, 1 << 20));
  if (run.has("maintenance")) {
    const Obj m = run.object("maintenance", kMaintenanceKeys);
    r.maintenance.interval_s = seconds(m, "interval", true);
    r.maintenance.duration_s = seconds(m, "duration", false);
  }
  if (run.has("reservation")) read_reservation(run.object("reservation", kReservationKeys), &r);
  return r;
}

std::map<std::string, std::vector<std::string>> run_scenario_keys() {
  return {{"/run", kRunKeys},
          {"/run/failures", kFailuresKeys},
          {"/run/failures/overrides", known_components()},
          {"/run/health_checks", kHealthKeys},
          {"/run/checkpoint", kCheckpointKeys},
          {"/run/recovery", kRecoveryKeys},
          {"/run/maintenance", kMaintenanceKeys},
          {"/run/reservation", kReservationKeys}};
}

}  // namespace fleetsim
