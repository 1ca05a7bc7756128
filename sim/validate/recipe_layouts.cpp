// The performance recipes' layouts per release (recipe_layouts.h).
#include "validate/recipe_layouts.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/csv.h"
#include "core/error.h"

namespace fleetsim {
namespace {

// A cell of a count column: empty → `empty`; else an integer in [lo, 2^24].
int count_cell(const std::string& cell, int empty, int lo, const std::string& path, int line,
               const char* column) {
  if (cell.empty()) return empty;
  try {
    size_t pos = 0;
    const long v = std::stol(cell, &pos);
    if (pos == cell.size() && v >= lo && v <= (1 << 24)) return static_cast<int>(v);
  } catch (const std::exception&) {
  }
  throw InputError(path, "line " + std::to_string(line) + ", column " + column,
                   "expected an integer from " + std::to_string(lo) +
                       " to 16777216 or an empty cell, got '" + cell + "'");
}

// A stated cell of the recipe that differs from the printed one.
void add_difference(std::string* out, const char* what, int recipe, int printed) {
  if (recipe == 0 || recipe == printed) return;
  *out += std::string(out->empty() ? "" : ", ") + what + " " + std::to_string(recipe) +
          " (printed " + std::to_string(printed) + ")";
}

// The recipe's global batch at `num_gpus` (its batch per GPU is what the variants fix), or 0
// when it does not scale to a whole number.
int64_t scaled_gbs(const RecipeLayout& r, int num_gpus) {
  if (r.gbs == 0 || r.num_gpus == 0) return r.gbs;
  const int64_t total = int64_t{r.gbs} * num_gpus;
  return total % r.num_gpus == 0 ? total / r.num_gpus : 0;
}

}  // namespace

std::vector<RecipeLayout> read_recipe_layouts(const std::string& path) {
  const std::string text = read_text_file(path);
  const CsvTable t = parse_csv_after_comments(text, path);
  static const char* kColumns[] = {
      "release", "tag", "task", "model", "gpu", "precision", "variant", "config", "num_gpus", "tp",
      "pp",      "cp",  "vp",   "ep",    "etp", "mbs",       "gbs",     "fsdp",   "source"};
  for (const char* c : kColumns) {
    if (t.column(c) < 0)
      throw InputError(path, "line " + std::to_string(t.header_line),
                       std::string("missing column '") + c + "' in the header");
  }
  std::vector<RecipeLayout> out;
  out.reserve(t.rows.size());
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    const int line = t.line_of_row[i];
    if (row.size() != t.header.size())
      throw InputError(path, "line " + std::to_string(line),
                       "expected " + std::to_string(t.header.size()) + " fields, got " +
                           std::to_string(row.size()));
    auto s = [&](const char* c) { return row[static_cast<size_t>(t.column(c))]; };
    auto n = [&](const char* c, int empty, int lo) {
      return count_cell(s(c), empty, lo, path, line, c);
    };
    RecipeLayout r;
    r.line = line;
    r.release = s("release");
    r.tag = s("tag");
    r.task = s("task");
    r.model = s("model");
    r.gpu = s("gpu");
    r.precision = s("precision");
    r.variant = s("variant");
    r.config = s("config");
    r.source = s("source");
    if (r.release.empty() || r.task.empty() || r.model.empty() || r.gpu.empty() ||
        r.precision.empty() || r.config.empty())
      throw InputError(path, "line " + std::to_string(line),
                       "release, task, model, gpu, precision and config must not be empty");
    r.num_gpus = n("num_gpus", 0, 1);
    r.tp = n("tp", 0, 1);
    r.pp = n("pp", 0, 1);
    r.cp = n("cp", 0, 1);
    r.vp = n("vp", 0, 1);
    r.ep = n("ep", 0, 1);
    r.etp = n("etp", 0, 1);
    r.mbs = n("mbs", 0, 1);
    r.gbs = n("gbs", 0, 1);
    r.fsdp = n("fsdp", -1, 0);
    if (t.column("cpu_offload_layers") >= 0) r.cpu_offload_layers = n("cpu_offload_layers", 0, 0);
    if (t.column("recompute_layers") >= 0) r.recompute_layers = n("recompute_layers", 0, 0);
    if (r.fsdp > 1)
      throw InputError(path, "line " + std::to_string(line) + ", column fsdp",
                       "expected 0, 1 or an empty cell, got '" + s("fsdp") + "'");
    out.push_back(std::move(r));
  }
  return out;
}

const std::vector<RecipeLayout>& recipe_layouts(const std::string& data_dir) {
  static std::mutex mu;
  static std::map<std::string, std::vector<RecipeLayout>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(data_dir);
  if (it == cache.end())
    it = cache.emplace(data_dir, read_recipe_layouts(data_dir + "/calibration/recipe-layouts.csv"))
             .first;
  return it->second;
}

int unstated_vp_from_recipe(const PrintedLayout& printed, const RecipeLayout& r) {
  if (printed.vp_stated || r.vp <= 1 || r.pp != printed.p.pp) return 0;
  return r.vp;
}

std::string layout_differences(const PrintedLayout& printed, const RecipeLayout& r) {
  const ParallelConfig& p = printed.p;
  std::string d;
  add_difference(&d, "tp", r.tp, p.tp);
  add_difference(&d, "pp", r.pp, p.pp);
  add_difference(&d, "cp", r.cp, p.cp);
  add_difference(&d, "vp", r.vp, p.vp);
  add_difference(&d, "ep", r.ep, p.ep);
  if (printed.etp_stated) add_difference(&d, "etp", r.etp, p.etp);
  add_difference(&d, "mbs", r.mbs, p.micro_batch);
  if (r.fsdp >= 0 && printed.fsdp_stated && r.fsdp != (p.fsdp ? 1 : 0))
    d += std::string(d.empty() ? "" : ", ") + "fsdp " + std::to_string(r.fsdp) + " (printed " +
         (p.fsdp ? "1" : "0") + ")";
  return d;
}

const RecipeLayout* find_recipe_layout(const std::vector<RecipeLayout>& table, const RecipeKey& k,
                                       const PrintedLayout& printed) {
  const RecipeLayout* best = nullptr;
  int best_rank = 0;
  size_t best_diffs = 0;
  for (const RecipeLayout& r : table) {
    if (r.release != k.release || r.task != k.task || r.model != k.model || r.gpu != k.gpu ||
        r.precision != k.precision)
      continue;
    const ParallelConfig rp = recipe_parallel(printed.p, r, k.num_gpus);
    if (int64_t{rp.tp} * rp.pp * rp.cp * rp.dp != k.num_gpus) continue;
    if (r.gbs > 0 && scaled_gbs(r, k.num_gpus) != printed.p.global_batch) continue;
    // rank 0: the row's GPU count (or a recipe that states none); 1: another count.
    const int rank = r.num_gpus == 0 || r.num_gpus == k.num_gpus ? 0 : 1;
    const std::string d = layout_differences(printed, r);
    const size_t diffs =
        d.empty() ? 0 : 1 + static_cast<size_t>(std::count(d.begin(), d.end(), ','));
    if (best == nullptr || rank < best_rank || (rank == best_rank && diffs < best_diffs)) {
      best = &r;
      best_rank = rank;
      best_diffs = diffs;
    }
  }
  return best;
}

ParallelConfig recipe_parallel(const ParallelConfig& printed, const RecipeLayout& r, int num_gpus) {
  ParallelConfig p = printed;
  auto stated = [](int recipe, int row) { return recipe > 0 ? recipe : row; };
  p.tp = stated(r.tp, p.tp);
  p.pp = stated(r.pp, p.pp);
  p.cp = stated(r.cp, p.cp);
  p.vp = stated(r.vp, p.vp);
  p.ep = stated(r.ep, p.ep);
  p.etp = stated(r.etp, p.etp);
  p.micro_batch = stated(r.mbs, p.micro_batch);
  if (r.fsdp >= 0) p.fsdp = r.fsdp == 1;
  p.dp = num_gpus / (p.tp * p.pp * p.cp);
  return p;
}

LayoutSource judge_layout(bool printed_fits, bool recipe_differs, bool recipe_fits) {
  return !printed_fits && recipe_differs && recipe_fits ? LayoutSource::kRecipe
                                                        : LayoutSource::kPrinted;
}

const char* to_string(LayoutSource s) {
  return s == LayoutSource::kRecipe ? "recipe" : "printed";
}

}  // namespace fleetsim
