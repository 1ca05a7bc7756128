// The layouts of the performance recipes per NeMo release (calibration/recipe-layouts.csv,
// written by calibration/extract_recipe_layouts.py from the Megatron-Bridge tag
// calibration/releases.json maps each release to, and for NeMo 24.07's fine-tuning rows from
// NeMo-Framework-Launcher's examples), and the rule `validate` judges a throughput row's layout
// by (docs/memory.md, "Printed layouts and the release's recipe"):
// - a row that leaves its virtual-pipeline cell empty runs the recipe's virtual pipeline where
//   the recipe states one at the row's pipeline size (a table without a VP column);
// - a row whose printed layout differs from its release's recipe is noted and counted;
// - a row whose printed layout is predicted not to fit (or is layout_infeasible) while the
//   recipe's layout fits is judged with the recipe's layout (throughput and fit), said in its
//   notes and layout_source column: the configuration ran, so it fits, and the recipe is the
//   cited file the measurement ran;
// - otherwise the printed layout is kept (no recipe: kept and counted as it is).
// The same test on every row; no list of lines, models or systems.
#pragma once

#include <string>
#include <vector>

#include "workload/parallel.h"

namespace fleetsim {

// One recipe of the table. A cell the recipe does not state (the model's library recipe or the
// command line decides it) is 0 (-1 for fsdp): it is neither compared nor applied.
struct RecipeLayout {
  int line = 0;  // line in the CSV
  std::string release, tag, task, model, gpu, precision, variant, config, source;
  int num_gpus = 0, tp = 0, pp = 0, cp = 0, vp = 0, ep = 0, etp = 0, mbs = 0, gbs = 0;
  int fsdp = -1;  // 1 Megatron-FSDP, 0 not, -1 not stated
  // Layers whose activations are offloaded to the host (cpu_offloading_num_layers) and fully
  // recomputed (recompute_num_layers); 0 = not stated. Not applied by recipe_parallel: the
  // memory options of a recipe are validate_memory.h recipe_memory_options.
  int cpu_offload_layers = 0, recompute_layers = 0;
};

// A row's printed layout: the configuration parsed from its cells, and which of the cells that
// may be empty it states (an empty etp cell is read as 1, a row without FSDP=N as no FSDP).
struct PrintedLayout {
  ParallelConfig p;
  bool fsdp_stated = false;
  bool etp_stated = false;
  bool vp_stated = true;  // false: the row's vp cell is empty (p.vp is then 1)
};

// Reads the table at `path` (InputError naming the file and line on a malformed cell or a
// missing column). Leading '#' lines are its header comment.
std::vector<RecipeLayout> read_recipe_layouts(const std::string& path);

// calibration/recipe-layouts.csv under `data_dir`, read once per data_dir.
const std::vector<RecipeLayout>& recipe_layouts(const std::string& data_dir);

// What a throughput row states, to find its recipe by.
struct RecipeKey {
  std::string release;    // calibration/releases.json name ("nemo-26.02.01")
  std::string task;       // to_string(TrainingTask)
  std::string model;      // zoo model ("llama3-70b")
  std::string gpu;        // the system's GPU model ("GB300")
  std::string precision;  // to_string(PrecisionRecipe)
  int num_gpus = 0;
};

// The printed layout's differences from recipe `r` ("pp 4 (printed 1), vp 5 (printed 1)");
// empty when every cell both state agrees (the global batch is compared when choosing the
// recipe, find_recipe_layout).
std::string layout_differences(const PrintedLayout& printed, const RecipeLayout& r);

// The row's recipe: the table's recipes of key's release, task, model, GPU and precision whose
// global batch per GPU is the row's (that picks the V1 / V2 variant) and whose layout divides
// num_gpus; those at the row's GPU count first; among several, the one with the fewest
// differences from the printed layout (then file order). nullptr when none.
const RecipeLayout* find_recipe_layout(const std::vector<RecipeLayout>& table, const RecipeKey& key,
                                       const PrintedLayout& printed);

// The virtual pipeline a row runs when its vp cell is empty: recipe r's, where r states one
// (more than 1) and its pipeline size is the printed one; 0 when the printed layout stands.
int unstated_vp_from_recipe(const PrintedLayout& printed, const RecipeLayout& r);

// The printed configuration with the cells recipe r states (tp, pp, cp, vp, ep, etp,
// micro-batch, FSDP) and dp from num_gpus. Batch, sequence, precision, recompute and task are
// the row's.
ParallelConfig recipe_parallel(const ParallelConfig& printed, const RecipeLayout& r, int num_gpus);

// Which layout judges a row: the recipe's only when the printed one does not fit, a recipe
// exists with a different layout, and that layout fits.
enum class LayoutSource { kPrinted, kRecipe };
LayoutSource judge_layout(bool printed_fits, bool recipe_differs, bool recipe_fits);
const char* to_string(LayoutSource s);

}  // namespace fleetsim
