// Framework releases as feature switches (calibration/releases.json, docs/calibration.md
// "Framework releases"): which mechanisms NVIDIA's performance recipes of a NeMo release turn on
// for a model, GPU and precision, each switch with the recipe file or release note it comes
// from. A release changes only which mechanisms are on, never a speed. The switches fleetsim
// models are applied to the workload; the others are recorded ("recorded, not yet modelled")
// and listed in the report's warnings, never dropped silently.
#pragma once

#include <string>
#include <vector>

#include "scenario/scenario.h"

namespace fleetsim {

struct ReleaseSwitch {
  std::string name;       // "cuda_graphs", "ep_comm_overlap", ...
  std::string value;      // as written in the table: "true", "full_iteration", "attn+moe_router"
  std::string source;     // the recipe file / release note of the rule that set it
  bool modelled = false;  // applied by apply_release (false: recorded, not yet modelled)
};

struct ReleaseRecipe {
  std::string release;                  // "nemo-26.06"
  std::vector<ReleaseSwitch> switches;  // by name; the last matching rule wins
  const ReleaseSwitch* find(const std::string& name) const;
};

// Names of calibration/releases.json in release order, and the default release (validate rows
// without a container version).
std::vector<std::string> known_releases(const std::string& data_dir);
std::string default_release(const std::string& data_dir);

// The release a container version names ("26.08 NeMo container", "NeMo 24.07 container (final
// revision of page)", "NeMo docs performance_long_sequence.md (NeMo25.04.rc2)"): the first
// YY.MM[.PP] in the text, "nemo-" prefixed, if the table knows it; "" otherwise.
std::string release_for_version(const std::string& source_version, const std::string& data_dir);

// The software stack a release's recipes ran on (its "stack" entry: "NeMo 2.0", "Megatron-Bridge
// 0.3.0"); for a fine-tuning task (`fine_tuning`) its "finetune_stack" where the release has one
// (NeMo 24.07's SFT / LoRA rows ran NeMo-Framework-Launcher's examples, "NeMo-Framework-Launcher
// 24.07"); "" for an unknown release.
std::string release_stack(const std::string& release, const std::string& data_dir,
                          bool fine_tuning = false);

// The switches `release` sets for `model` (zoo name) on `gpu` (GpuSpec::model, "GB300") with
// `par` (its precision; a rule with a "layout" also needs the recipe variant's pp / vp / ep). An
// unknown release is an InputError at (file, ptr) listing the known names.
ReleaseRecipe resolve_release(const std::string& release, const std::string& model,
                              const std::string& gpu, const ParallelConfig& par,
                              const std::string& data_dir, const std::string& file,
                              const std::string& ptr);

// Sets the modelled switches on t (framework options; recompute only when set_recompute) and
// returns one line per switch that was not applied: recorded, not yet modelled, or not
// applicable to t's parallelism. Explicit scenario keys are read after this and override it.
std::vector<std::string> apply_release(const ReleaseRecipe& r, bool set_recompute,
                                       TrainingWorkload* t);

}  // namespace fleetsim
