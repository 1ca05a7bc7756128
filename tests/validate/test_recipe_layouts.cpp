// The release recipes' layouts (calibration/recipe-layouts.csv) and the rule validate judges a
// throughput row's layout by (validate/recipe_layouts.h, docs/memory.md).
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "scenario/model_loader.h"
#include "scenario/release_loader.h"
#include "scenario/scenario.h"
#include "support/fixtures.h"
#include "validate/recipe_layouts.h"
#include "validate/validate.h"
#include "validate/validate_memory.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

RecipeLayout recipe(int tp, int pp, int vp, int mbs, int gbs, int num_gpus) {
  RecipeLayout r;
  r.release = "nemo-26.02.01";
  r.task = "pretrain";
  r.model = "llama3-70b";
  r.gpu = "GB300";
  r.precision = "mxfp8";
  r.config = "HAND_MADE";
  r.cp = 1;
  r.ep = 1;
  r.tp = tp;
  r.pp = pp;
  r.vp = vp;
  r.mbs = mbs;
  r.gbs = gbs;
  r.num_gpus = num_gpus;
  return r;
}

PrintedLayout printed(int tp, int pp, int vp, int mbs, int gbs, int num_gpus) {
  PrintedLayout out;
  out.fsdp_stated = true;
  ParallelConfig& p = out.p;
  p.tp = tp;
  p.pp = pp;
  p.vp = vp;
  p.micro_batch = mbs;
  p.global_batch = gbs;
  p.seq_len = 8192;
  p.dp = num_gpus / (tp * pp);
  return out;
}

const char* kHeader =
    "source_url,source_version,hardware,num_gpus,model,precision,seq_len,gbs,mbs,tp,pp,cp,vp,ep,"
    "etp,dp,metric_name,metric_value,metric_unit,notes\n";

// A Llama 3 70B pre-training row on 64 GPUs, GBS 256, 8K tokens.
std::string row70(const char* version, const char* hw, const char* prec, int mbs, int pp,
                  const char* vp) {
  return std::string("https://example.invalid/x,") + version + "," + hw + ",64,LLAMA3_70B," + prec +
         ",8192,256," + std::to_string(mbs) + ",1," + std::to_string(pp) + ",1," + vp +
         ",,,,tokens_per_sec_per_gpu,4800,tokens/s/GPU,task=Pre-Training; FSDP=0\n";
}

// validate_reference on a temporary table of kHeader and `rows`.
ValidationReport validate_rows(const std::string& name, const std::vector<std::string>& rows) {
  const std::string path = temp_path(name);
  {
    std::ofstream f(path);
    f << kHeader;
    for (const std::string& r : rows)
      f << r;
  }
  ValidationReport rep = validate_reference(path, kRoot);
  std::remove(path.c_str());
  return rep;
}

}  // namespace

TEST_CASE("the judging rule: printed kept when it fits or no other layout fits") {
  // fits: printed kept, whatever the recipe
  CHECK(judge_layout(true, true, true) == LayoutSource::kPrinted);
  CHECK(judge_layout(true, false, false) == LayoutSource::kPrinted);
  // does not fit, the recipe's (different) layout fits: the recipe judges the row
  CHECK(judge_layout(false, true, true) == LayoutSource::kRecipe);
  // does not fit, the recipe's does not either: printed kept (and counted as not fitting)
  CHECK(judge_layout(false, true, false) == LayoutSource::kPrinted);
  // does not fit, no recipe (or the same layout): printed kept
  CHECK(judge_layout(false, false, false) == LayoutSource::kPrinted);
  CHECK(std::string(to_string(LayoutSource::kRecipe)) == "recipe");
}

TEST_CASE("layout differences, recipe choice by batch per GPU and the recipe's configuration") {
  const PrintedLayout p = printed(1, 4, 1, 2, 256, 64);
  const RecipeLayout v1 = recipe(1, 4, 5, 1, 128, 64);  // GBS 128: another variant
  const RecipeLayout v2 = recipe(1, 4, 5, 1, 256, 64);
  CHECK(layout_differences(p, v2) == "vp 5 (printed 1), mbs 1 (printed 2)");
  CHECK(layout_differences(printed(1, 4, 5, 1, 256, 64), v2).empty());
  // FSDP compared only where both state it
  RecipeLayout fsdp = v2;
  fsdp.fsdp = 1;
  PrintedLayout unstated = printed(1, 4, 5, 1, 256, 64);
  unstated.fsdp_stated = false;
  CHECK(layout_differences(unstated, fsdp).empty());
  CHECK(layout_differences(printed(1, 4, 5, 1, 256, 64), fsdp) == "fsdp 1 (printed 0)");
  // a cell the recipe does not state (0) is neither compared nor applied
  RecipeLayout partial = v2;
  partial.vp = 0;
  partial.mbs = 0;
  CHECK(layout_differences(p, partial).empty());
  CHECK(recipe_parallel(p.p, partial, 64).vp == 1);
  CHECK(recipe_parallel(p.p, partial, 64).micro_batch == 2);

  const std::vector<RecipeLayout> table = {v1, v2};
  RecipeKey key{"nemo-26.02.01", "pretrain", "llama3-70b", "GB300", "mxfp8", 64};
  const RecipeLayout* r = find_recipe_layout(table, key, p);
  REQUIRE(r != nullptr);
  CHECK(r->gbs == 256);
  // at 128 GPUs the batch per GPU of V2 is GBS 512 (4 per GPU): a GBS 256 row there is V1's
  key.num_gpus = 128;
  r = find_recipe_layout(table, key, printed(1, 4, 1, 2, 256, 128));
  REQUIRE(r != nullptr);
  CHECK(r->gbs == 128);
  key.num_gpus = 64;
  key.release = "nemo-26.04";  // no recipe of that release in the table
  CHECK(find_recipe_layout(table, key, p) == nullptr);

  const ParallelConfig rp = recipe_parallel(p.p, v2, 64);
  CHECK(rp.tp == 1);
  CHECK(rp.pp == 4);
  CHECK(rp.vp == 5);
  CHECK(rp.micro_batch == 1);
  CHECK(rp.dp == 16);
  CHECK(rp.global_batch == 256);
  CHECK(rp.micro_batches() == 16);  // 256 / (1 · 16)
}

TEST_CASE("the committed recipe-layout table parses and every row resolves") {
  const std::vector<RecipeLayout>& t = recipe_layouts(kRoot);
  REQUIRE(t.size() > 100);
  std::set<std::string> gpus;
  for (const auto& e : std::filesystem::directory_iterator(kRoot + "/topologies")) {
    if (e.path().extension() == ".json")
      gpus.insert(load_system(e.path().stem().string(), kRoot).gpu.model);
  }
  const std::set<std::string> precisions = {"bf16",    "fp8_cs", "fp8_ds",
                                            "fp8_blk", "mxfp8",  "nvfp4"};
  const std::set<std::string> tasks = {"pretrain", "sft", "lora"};
  std::set<std::string> models;
  for (const RecipeLayout& r : t) {
    INFO("line " << r.line << ": " << r.config);
    // the release's stack for the task (Megatron-Bridge, or NeMo-Framework-Launcher for NeMo
    // 24.07's fine-tuning rows), at the tag the table names
    const std::string stack = release_stack(r.release, kRoot, r.task != "pretrain");
    if (stack.rfind("NeMo-Framework-Launcher ", 0) == 0) {
      CHECK(stack.substr(24) == r.tag);
      CHECK(r.task != "pretrain");
    } else {
      REQUIRE(stack.rfind("Megatron-Bridge ", 0) == 0);
      CHECK("v" + stack.substr(16) == r.tag);
    }
    CHECK(r.source.size() > r.tag.size());
    CHECK(r.source.compare(r.source.size() - r.tag.size() - 1, std::string::npos, "@" + r.tag) ==
          0);
    CHECK(gpus.count(r.gpu) == 1);
    CHECK(precisions.count(r.precision) == 1);
    CHECK(tasks.count(r.task) == 1);
    models.insert(r.model);
  }
  for (const std::string& m : models)
    CHECK_NOTHROW(load_model(m, kRoot));
  // v0.3.1 scripts/performance/configs/llama/llama3_workload_base_configs.py:
  // LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_MX_V2 = replace(BASE_LLAMA3_70B_CONFIG_GBS256,
  // pipeline_model_parallel_size=4, virtual_pipeline_model_parallel_size=5): num_gpus 64,
  // GBS 256, the dataclass defaults TP 1, CP 1, MBS 1, expert TP None (Megatron: the TP);
  // use_megatron_fsdp None, which the scripts do not apply: not stated.
  const RecipeKey key{"nemo-26.02.01", "pretrain", "llama3-70b", "GB300", "mxfp8", 64};
  const RecipeLayout* r = find_recipe_layout(t, key, printed(1, 4, 1, 2, 256, 64));
  REQUIRE(r != nullptr);
  CHECK(r->config == "LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_MX_V2");
  CHECK(r->tp == 1);
  CHECK(r->pp == 4);
  CHECK(r->vp == 5);
  CHECK(r->cp == 1);
  CHECK(r->mbs == 1);
  CHECK(r->gbs == 256);
  CHECK(r->etp == 1);
  CHECK(r->fsdp == -1);
}

TEST_CASE("an empty vp cell runs the recipe's virtual pipeline at the same pipeline size") {
  RecipeLayout r;
  r.pp = 4;
  r.vp = 20;
  PrintedLayout p = printed(4, 4, 1, 1, 32, 16);
  p.vp_stated = false;
  CHECK(unstated_vp_from_recipe(p, r) == 20);
  p.vp_stated = true;  // a stated vp 1 stands
  CHECK(unstated_vp_from_recipe(p, r) == 0);
  p.vp_stated = false;
  p.p.pp = 8;  // another pipeline: the recipe's VP does not apply
  CHECK(unstated_vp_from_recipe(p, r) == 0);
  p.p.pp = 4;
  r.vp = 1;  // the recipe runs no virtual pipeline: nothing to fill
  CHECK(unstated_vp_from_recipe(p, r) == 0);
  r.vp = 0;  // not stated by the recipe either
  CHECK(unstated_vp_from_recipe(p, r) == 0);
}

TEST_CASE("NeMo 24.07's fine-tuning rows find NeMo-Framework-Launcher's examples") {
  // examples/peft/llama/h100/70b_2node.sh at tag 24.07: 2 nodes × 8 devices, TP 4, PP 4, VP 20,
  // MBS 1, GBS 32, fp8; 13b_1node.sh: 8 devices, TP 1, PP 4, VP 10.
  const std::vector<RecipeLayout>& t = recipe_layouts(kRoot);
  PrintedLayout p70 = printed(4, 4, 1, 1, 32, 16);
  p70.vp_stated = false;
  const RecipeLayout* r70 =
      find_recipe_layout(t, {"nemo-24.07", "sft", "llama2-70b", "H100", "fp8_ds", 16}, p70);
  REQUIRE(r70 != nullptr);
  CHECK(r70->config == "70b_2node");
  CHECK(r70->tag == "24.07");
  CHECK(r70->source == "examples/peft/llama/h100/70b_2node.sh@24.07");
  CHECK(unstated_vp_from_recipe(p70, *r70) == 20);
  PrintedLayout p13 = printed(1, 4, 1, 1, 32, 8);
  p13.vp_stated = false;
  const RecipeLayout* r13 =
      find_recipe_layout(t, {"nemo-24.07", "sft", "llama2-13b", "H100", "fp8_ds", 8}, p13);
  REQUIRE(r13 != nullptr);
  CHECK(unstated_vp_from_recipe(p13, *r13) == 10);
  // the LoRA example of the 70B runs TP 2 PP 4 without a virtual pipeline
  const RecipeLayout* lora = find_recipe_layout(
      t, {"nemo-24.07", "lora", "llama2-70b", "H100", "fp8_ds", 8}, printed(2, 4, 1, 1, 32, 8));
  REQUIRE(lora != nullptr);
  CHECK(lora->tp == 2);
  CHECK(lora->vp == 1);
}

TEST_CASE("validate fills an empty vp cell from the recipe only where the row's layout allows it") {
  // 26.02.01, GB300, MXFP8 (the recipe: PP 4, VP 5, MBS 1): PP 4 with the vp cell empty at
  // MBS 1 runs VP 5 and is the recipe's own layout. At MBS 8 the 256 sequences make 2
  // micro-batches per pipeline, which an interleaved schedule on 4 stages cannot run (a multiple
  // of pp): VP 1 is kept and said.
  const ValidationReport rep =
      validate_rows("validate_unstated_vp.csv",
                    {row70("26.02.01 NeMo container", "DGX-GB300", "MXFP8", 1, 4, ""),
                     row70("26.02.01 NeMo container", "DGX-GB300", "MXFP8", 8, 4, "")});
  REQUIRE(rep.rows.size() == 2);
  CHECK(rep.rows[0].config.find("tp1 pp4 cp1 vp5 ") == 0);
  CHECK(rep.rows[0].recipe_differences.empty());
  CHECK(rep.rows[0].notes.find("vp 5 from the release's recipe") != std::string::npos);
  CHECK(rep.rows[1].notes.find("runs vp 5, which the row's layout cannot") != std::string::npos);
  CHECK(rep.rows[1].notes.find("vp 1 kept") != std::string::npos);
}

TEST_CASE("a malformed recipe-layout cell is an error naming the file and line") {
  const std::string path = temp_path("recipe_layouts.csv");
  {
    std::ofstream f(path);
    f << "# comment\n"
         "release,tag,task,model,gpu,precision,variant,config,num_gpus,tp,pp,cp,vp,ep,etp,"
         "mbs,gbs,fsdp,source\n"
         "nemo-26.02.01,v0.3.1,pretrain,llama3-70b,GB300,mxfp8,v2,X,64,1,four,1,5,1,,1,256,0,f@v0."
         "3.1\n";
  }
  try {
    read_recipe_layouts(path);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.pointer() == "line 3, column pp");
  }
  std::remove(path.c_str());
}

TEST_CASE("validate judges a printed layout that does not fit with its release's recipe") {
  // 26.02.01 (Megatron-Bridge v0.3.1), GB300, MXFP8: the recipe's own layout, TP 1 PP 4 VP 5
  // MBS 1 (it fits: kept as printed, no difference). The same with PP 4, the VP cell empty and
  // MBS 2: the recipe's VP 5 at the same PP is taken for the empty cell; at MBS 2 that does not
  // fit, the recipe's layout does: judged with it. NeMo 25.07 is NeMo 2.0: no recipe in the
  // table. Plain data parallelism at MBS 4 on B200 does not fit and stays printed, counted as
  // not fitting.
  const ValidationReport rep =
      validate_rows("validate_recipe_layout.csv",
                    {row70("26.02.01 NeMo container", "DGX-GB300", "MXFP8", 1, 4, "5"),
                     row70("26.02.01 NeMo container", "DGX-GB300", "MXFP8", 2, 4, ""),
                     row70("25.07 NeMo container", "DGX-B200", "FP8", 4, 1, "")});
  REQUIRE(rep.rows.size() == 3);
  const ValidationRow& same = rep.rows[0];
  const ValidationRow& misprinted = rep.rows[1];
  const ValidationRow& none = rep.rows[2];
  CHECK(same.breakdown.memory_fits);
  CHECK(same.layout_source == "printed");
  CHECK(same.recipe_differences.empty());
  CHECK(same.recipe_config.find("LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_MX_V2") == 0);

  CHECK(misprinted.layout_source == "recipe");
  CHECK(misprinted.breakdown.memory_fits);
  CHECK(misprinted.recipe_differences == "mbs 1 (printed 2)");
  CHECK(misprinted.notes.find("vp 5 from the release's recipe "
                              "LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_MX_V2") != std::string::npos);
  CHECK(misprinted.config.find("tp1 pp4 cp1 vp5 ") == 0);
  CHECK(misprinted.config.find(" mbs1 ") != std::string::npos);
  // judged with the recipe's layout, the row predicts what the recipe's own row predicts
  CHECK(misprinted.predicted == Approx(same.predicted).epsilon(1e-12));
  CHECK(misprinted.notes.find("judged with the recipe's layout") != std::string::npos);

  CHECK(none.layout_source == "printed");
  CHECK(none.recipe_config.empty());
  CHECK_FALSE(none.breakdown.memory_fits);
  CHECK(rep.n_not_fitting + rep.n_layout_infeasible == 1);
  CHECK(rep.n_layout_differs == 1);
  CHECK(rep.n_recipe_layout == 1);
}

TEST_CASE("the FSDP recipes' offloaded layers of recipe_memory_options are the recipe table's") {
  // Every Megatron-FSDP pre-training recipe of a release on Megatron-Bridge 0.2.0 or later:
  // the activation-offloaded layers validate applies (validate_memory.cpp kFsdpOffload) are
  // those the recipe sets (cpu_offloading_num_layers; none where it sets none).
  const std::map<std::string, PrecisionRecipe> precision = {
      {"bf16", PrecisionRecipe::kBf16},         {"fp8_cs", PrecisionRecipe::kFp8Current},
      {"fp8_ds", PrecisionRecipe::kFp8Delayed}, {"fp8_blk", PrecisionRecipe::kFp8Block},
      {"mxfp8", PrecisionRecipe::kMxfp8},       {"nvfp4", PrecisionRecipe::kNvfp4}};
  int checked = 0;
  for (const RecipeLayout& r : recipe_layouts(kRoot)) {
    const std::string stack = release_stack(r.release, kRoot);
    if (r.task != "pretrain" || r.fsdp != 1 || !bridge_at_least(stack, 0, 2, 0)) continue;
    INFO("line " << r.line << ": " << r.config << " (" << r.release << ")");
    const ModelSpec m = load_model(r.model, kRoot);
    ParallelConfig p = printed(r.tp, r.pp, r.vp, r.mbs, r.gbs, r.num_gpus).p;
    p.fsdp = true;
    p.precision = precision.at(r.precision);
    CHECK(recipe_memory_options(m, p, r.gpu, stack).cpu_offload_layers == r.cpu_offload_layers);
    ++checked;
  }
  CHECK(checked > 20);
}
