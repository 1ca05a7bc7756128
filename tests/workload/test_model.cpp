// Closed forms of sim/workload/model.cpp against hand calculations, the published parameter
// counts stored in workloads/models/*.json, and NVIDIA's published "model TFLOP/s/GPU" /
// "tokens/s/GPU" pairs (validation/nemo_performance_summary.csv).
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "core/csv.h"
#include "scenario/model_loader.h"
#include "support/fixtures.h"
#include "workload/model.h"

using namespace fleetsim;
using namespace fleetsim::test;

TEST_CASE("Llama 3 8B parameters by hand") {
  const ModelSpec m = zoo("llama3-8b");
  // q, o: 4096·4096 each; k, v: 4096·(8·128) each → 2·16,777,216 + 2·4,194,304 = 41,943,040.
  // SwiGLU: 3·4096·14336 = 176,160,768. Two RMSNorms: 8192.
  const LayerParams p = layer_params(m, 0);
  CHECK(p.attention == 41'943'040);
  CHECK(p.dense_mlp == 176'160'768);
  CHECK(p.norms == 8'192);
  // Embedding and untied head: 128256·4096 = 525,336,576 each (+ final norm 4096).
  CHECK(embedding_params(m) == 525'336'576);
  CHECK(output_params(m) == 525'336'576 + 4'096);
  // 32 · 218,112,000 + 2 · 525,336,576 + 4096 = 8,030,261,248 (HF model card: 8.03B).
  CHECK(total_params(m) == 8'030'261'248);
  CHECK(active_params(m) == total_params(m));
}

TEST_CASE("MoE layer pattern: first_k_dense and layer_freq") {
  // DeepSeek-V3: layers 0-2 dense, 3-60 MoE → 58 MoE layers (config first_k_dense_replace 3).
  const ModelSpec ds = zoo("deepseek-v3");
  CHECK_FALSE(is_moe_layer(ds, 2));
  CHECK(is_moe_layer(ds, 3));
  CHECK(moe_layer_count(ds) == 58);
  // Llama 4 Maverick: MoE on odd layers 1, 3, ..., 47 (interleave step 2) → 24 of 48.
  const ModelSpec mav = zoo("llama4-maverick");
  CHECK_FALSE(is_moe_layer(mav, 0));
  CHECK(is_moe_layer(mav, 1));
  CHECK(is_moe_layer(mav, 47));
  CHECK(moe_layer_count(mav) == 24);
  CHECK_FALSE(is_moe_layer(zoo("llama3-8b"), 0));
}

TEST_CASE("Mixtral 8x7B expert parameters by hand") {
  const ModelSpec m = zoo("mixtral-8x7b");
  const LayerParams p = layer_params(m, 0);
  // One SwiGLU expert: 3·4096·14336 = 176,160,768; router 4096·8 = 32,768.
  CHECK(p.one_expert == 176'160'768);
  CHECK(p.routed_experts == 8 * 176'160'768LL);
  CHECK(p.router == 32'768);
  CHECK(p.dense_mlp == 0);
}

TEST_CASE("DeepSeek-V3 MLA attention parameters by hand") {
  const ModelSpec m = zoo("deepseek-v3");
  // q_a 7168·1536 + q_b 1536·128·192 + kv_a 7168·(512+64) + kv_b 512·128·(128+128)
  // + o 128·128·7168 + latent norms 1536 + 512
  // = 11,010,048 + 37,748,736 + 4,128,768 + 16,777,216 + 117,440,512 + 2,048 = 187,107,328.
  CHECK(layer_params(m, 0).attention == 187'107'328);
  // README_WEIGHTS: one MTP module with 11.5B unique parameters (embedding and head shared).
  CHECK(static_cast<double>(mtp_params(m)) == Approx(11.5e9).epsilon(0.015));
}

TEST_CASE("computed totals match the published parameter counts") {
  // Tolerance per model. Most published totals are model names ("7B", "70B") that round the
  // count; the expected gaps are stated. 1 % where the publisher gives three digits.
  struct Case {
    const char* id;
    double tol;
  };
  const Case cases[] = {
      {"llama2-7b", 0.05},        // 6.74B named "7B" (Llama 2 paper table: 6.7B)
      {"llama2-13b", 0.01},       // 13.0B
      {"llama2-70b", 0.02},       // 68.98B named "70B" (paper: 69B)
      {"llama3-8b", 0.01},        // 8.03B
      {"llama3-70b", 0.01},       // 70.55B
      {"llama3.1-405b", 0.01},    // 405.85B
      {"llama4-scout", 0.015},    // 107.8B: text decoder only; published 109B also counts the
                                  // multimodal parts (vision encoder / projector), not modelled
      {"llama4-maverick", 0.01},  // 400.7B
      {"mixtral-8x7b", 0.01},     // 46.70B
      {"mixtral-8x22b", 0.01},    // 140.6B
      {"deepseek-v3", 0.01},      // 671.0B (MTP excluded, as in the published figure)
      {"kimi-k2", 0.03},          // 1.026T named "1T"
      {"qwen3-30b-a3b", 0.01},    // 30.53B
      {"qwen3-235b-a22b", 0.01},  // 235.1B
      {"gpt-oss-120b", 0.01},     // 116.83B; expert / attention / router biases counted; the 64
                                  // attention-sink logits per layer are not (2.3k parameters)
      {"gpt-oss-20b", 0.01},      // 20.91B
      {"nemotron4-15b", 0.05},    // 15.63B named "15B" (report: 3.2B emb + 12.5B non-emb)
      {"nemotron4-340b", 0.01},   // 341.0B
      {"nemotron3-8b", 0.07},     // 8.54B named "8B": its 256k vocabulary adds 2.1B
      {"nemotron3-22b", 0.04},    // 21.27B named "22B"
      {"gpt3-175b", 0.01},        // 174.6B (learned positions, biases, tied head)
      {"gpt3-5b", 0.02},          // 5.05B
      {"gpt3-20b", 0.02},         // 20.26B
      {"grok-1", 0.01},           // 315.7B vs 314B
      {"nemotron-h-8b", 0.015},   // 8.10B named "8B"
      {"nemotron-h-47b", 0.01},   // 46.7B named "47B"
      {"nemotron-h-56b", 0.01},   // 56.4B named "56B"
      {"nemotron3-nano-30b-a3b", 0.01},     // 31.58B vs 31.6B (report)
      {"qwen3-next-80b-a3b", 0.01},         // 79.67B named "80B"
      {"deepseek-v3.2-exp", 0.01},          // 671.88B vs 671B (DeepSeek-V3 + the indexers)
      {"nemotron3-super-120b-a12b", 0.01},  // 120.67B vs 120.6B (LatentMoE, MTP excluded)
      {"nemotron3-ultra-550b-a55b", 0.01},  // 549.31B vs 550B
      {"kimi-linear-48b-a3b", 0.03},        // 49.12B named "48B" (llama.cpp counts 49.12B: below)
      {"deepseek-v4-flash", 0.01},          // 284.33B vs 284B (MTP excluded; test_v4.cpp)
  };
  for (const Case& c : cases) {
    const ModelSpec m = zoo(c.id);
    INFO(c.id);
    REQUIRE(m.published_total_params > 0);
    CHECK(static_cast<double>(total_params(m)) == Approx(m.published_total_params).epsilon(c.tol));
  }
  // Nemotron 3.5 Lightning publishes no count (test_hybrid.cpp: it equals Nano's).
  CHECK(std::size(cases) + 1 == known_models(kRoot).size());
}

TEST_CASE("Nemotron-4 15B split: 3.2B embedding + 12.5B non-embedding (technical report)") {
  const ModelSpec m = zoo("nemotron4-15b");
  const double emb = static_cast<double>(embedding_params(m) + output_params(m));
  CHECK(emb == Approx(3.2e9).epsilon(0.02));  // 2·256000·6144 = 3.15B
  CHECK(static_cast<double>(total_params(m)) - emb == Approx(12.5e9).epsilon(0.01));
}

TEST_CASE("computed active parameters match the published figures") {
  struct Case {
    const char* id;
    double tol;
  };
  // Published with two or three digits; DeepSeek's 37B (README_WEIGHTS: 36.7B) is 2.3 % under
  // our 37.55B, within 3 %.
  const Case cases[] = {{"llama4-scout", 0.02},  {"llama4-maverick", 0.02}, {"mixtral-8x7b", 0.01},
                        {"mixtral-8x22b", 0.01}, {"deepseek-v3", 0.03},     {"kimi-k2", 0.03},
                        {"qwen3-30b-a3b", 0.02}, {"qwen3-235b-a22b", 0.01}};
  for (const Case& c : cases) {
    const ModelSpec m = zoo(c.id);
    INFO(c.id);
    CHECK(static_cast<double>(active_params(m)) ==
          Approx(m.published_active_params).epsilon(c.tol));
  }
  // OpenAI counts GPT-OSS's active parameters without the input embedding (model card: 5.13B
  // and 3.61B); ours include it (the convention of every other publisher), so subtract it.
  for (const char* id : {"gpt-oss-120b", "gpt-oss-20b"}) {
    const ModelSpec m = zoo(id);
    INFO(id);
    CHECK(static_cast<double>(active_params(m) - embedding_params(m)) ==
          Approx(m.published_active_params).epsilon(0.01));
  }
  // Grok-1: "25% of the weights active on a given token" (xAI): 2 of 8 experts plus attention
  // and embeddings → 83.8B / 315.7B = 26.5 %.
  const ModelSpec grok = zoo("grok-1");
  const double share =
      static_cast<double>(active_params(grok)) / static_cast<double>(total_params(grok));
  CHECK(share == Approx(0.25).margin(0.02));
}

TEST_CASE("FLOPs per token by hand: Llama 3 8B at 8192 tokens") {
  const ModelSpec m = zoo("llama3-8b");
  // 6 · (32 · 218,103,808 GEMM weights + 525,336,576 head) = 45,027,950,592
  // + causal attention 32 layers · 6 · 8192 · 4096 (q width) = 6,442,450,944 → 51,470,401,536.
  CHECK(model_flops_per_token(m, 8192) == Approx(51'470'401'536.0).epsilon(1e-12));
  // Without causal halving the attention term doubles: 57,912,852,480.
  FlopConvention full;
  full.causal = false;
  CHECK(model_flops_per_token(m, 8192, full) == Approx(57'912'852'480.0).epsilon(1e-12));
}

TEST_CASE("windowed attention counts the keys attended") {
  const ModelSpec oss = zoo("gpt-oss-120b");
  // Layer 0 slides over 128 tokens: at s = 4096, 128 − 128²/(2·4096) = 126 keys on average.
  CHECK(attended_keys(oss, 0, 4096) == Approx(126.0));
  CHECK(attended_keys(oss, 1, 4096) == Approx(2048.0));
  const ModelSpec scout = zoo("llama4-scout");
  // Chunks of 8192: at s = 16384 two full chunks, 8192/2 = 4096 keys; layer 3 is global.
  CHECK(attended_keys(scout, 0, 16384) == Approx(4096.0));
  CHECK(attended_keys(scout, 3, 16384) == Approx(8192.0));
  CHECK(attended_keys(scout, 0, 4096) == Approx(2048.0));
}

// NVIDIA's tables give tokens/s/GPU and model TFLOP/s/GPU for the same run; their ratio is the
// FLOPs per token NVIDIA's code counted. Megatron-Bridge pages (NeMo 25.09 and later) count
// causal attention (s/2 keys per query); NeMo 2.0 pages (24.07–25.07) count all s keys, except
// its Mixtral 8x22B row at 64k tokens which matches the causal count. Rows whose model is not
// in the zoo, fine-tuning rows (SFT / LoRA: frozen weights, other formulas) and rows without a
// pair are skipped. Every remaining row must match within 1.5 %: the published TFLOP/s and
// tokens/s are rounded to 3–4 digits (≤ 0.2 %), and NeMo 25.02 / 25.04's "LLAMA3-405B" rows sit
// 1.0 % above NeMo 2.0's own formula (an unexplained offset in those two containers). The
// 26.04.01 page publishes tokens/s quantised to multiples of 64 (4224, 1664, 864, ...): ±32 on
// 1664 tokens/s is ±1.9 %, so its rows get 2.5 % (its ratios for one model spread by 2 %).
TEST_CASE("model_flops_per_token reproduces NVIDIA's model TFLOP/s per token") {
  const std::string path = kRoot + "/validation/nemo_performance_summary.csv";
  const CsvTable t = parse_csv(read_text_file(path), path);
  const int c_url = t.column("source_url"), c_ver = t.column("source_version");
  const int c_model = t.column("model"), c_seq = t.column("seq_len");
  const int c_metric = t.column("metric_name"), c_value = t.column("metric_value");
  const int c_notes = t.column("notes");
  REQUIRE(c_notes >= 0);
  std::map<std::string, std::map<std::string, double>> runs;
  std::map<std::string, std::vector<std::string>> row_of;
  for (const auto& r : t.rows) {
    std::string key;
    for (size_t i = 0; i < r.size(); ++i) {
      if (static_cast<int>(i) != c_metric && static_cast<int>(i) != c_value &&
          t.header[i] != "metric_unit") {
        key += r[i] + "|";
      }
    }
    runs[key][r[static_cast<size_t>(c_metric)]] = std::stod(r[static_cast<size_t>(c_value)]);
    row_of[key] = r;
  }
  std::map<std::string, int> checked;
  double worst = 0;
  for (const auto& [key, metrics] : runs) {
    if (!metrics.count("tokens_per_sec_per_gpu") || !metrics.count("model_tflops_per_sec_per_gpu"))
      continue;
    const auto& r = row_of[key];
    const std::string notes = r[static_cast<size_t>(c_notes)];
    if (notes.find("task=SFT") != std::string::npos || notes.find("task=LoRA") != std::string::npos)
      continue;
    std::string name = r[static_cast<size_t>(c_model)];
    const bool without_mtp = name.find("w/o MTP") != std::string::npos;
    const auto paren = name.find(" (");
    if (paren != std::string::npos) name = name.substr(0, paren);
    ModelSpec m = load_model(name, kRoot);
    if (without_mtp) m.mtp_layers = 0;
    const int seq = std::stoi(r[static_cast<size_t>(c_seq)]);
    const double measured =
        metrics.at("model_tflops_per_sec_per_gpu") * 1e12 / metrics.at("tokens_per_sec_per_gpu");
    FlopConvention conv;
    conv.benchmark_vocab = true;
    conv.causal = r[static_cast<size_t>(c_url)].find("Megatron-Bridge") != std::string::npos ||
                  (m.name == "mixtral-8x22b" && seq == 65536);
    const double predicted = model_flops_per_token(m, seq, conv);
    INFO(name << " seq " << seq << " " << r[static_cast<size_t>(c_ver)] << " measured "
              << measured / 1e9 << " GFLOP/token, predicted " << predicted / 1e9);
    // 26.04.01 rounds its figures; some Nemotron 3 Nano rows give tokens/s as whole multiples
    // of 1024 (39936 = 39·1024, 40960, 34816, 32768), rounded the same way.
    const double tok = metrics.at("tokens_per_sec_per_gpu");
    const bool quantised = r[static_cast<size_t>(c_ver)].rfind("26.04.01", 0) == 0 ||
                           (m.name == "nemotron3-nano-30b-a3b" && std::fmod(tok, 1024.0) == 0);
    CHECK(predicted == Approx(measured).epsilon(quantised ? 0.025 : 0.015));
    if (!quantised) worst = std::max(worst, std::fabs(predicted / measured - 1));
    checked[m.name]++;
  }
  // The models the brief names are all covered.
  for (const char* id :
       {"llama3-8b", "llama3-70b", "llama3.1-405b", "gpt3-175b", "nemotron4-15b", "nemotron4-340b",
        "mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "nemotron3-nano-30b-a3b"}) {
    INFO(id);
    CHECK(checked[id] > 0);
  }
  CHECK(worst < 0.011);  // the largest is the 1.0 % of LLAMA3-405B described above
}

TEST_CASE("benchmark vocabulary changes only the LM head term") {
  const ModelSpec m = zoo("gpt3-175b");
  // NeMo's GPT-3 benchmark uses vocab 51200 instead of 50257: 6 · 12288 · 943 more FLOPs.
  FlopConvention bench;
  bench.benchmark_vocab = true;
  CHECK(model_flops_per_token(m, 2048, bench) - model_flops_per_token(m, 2048) ==
        Approx(6.0 * 12288 * 943));
}

namespace {
// A count as workloads/sources/model-configs-hybrid.csv writes it: "49.12B" (the digits
// published) or an integer ("31577940288").
double published_count(const std::string& s) {
  if (!s.empty() && s.back() == 'B') return std::stod(s.substr(0, s.size() - 1)) * 1e9;
  return std::stod(s);
}
}  // namespace

// The exact published counts of the hybrid models (model-configs-hybrid.csv columns
// total_params_exact, checkpoint_params_exact, active_params_exact; their _scope and _source
// columns say what each counts and where it was published). The tolerance is 1 %; each
// count is also checked within the last digit it was published with (margin), which is what the
// comments' agreement figures show. Where a figure counts more than fleetsim's total (MTP
// modules, FP8 scale tensors, router bias buffers), the difference is added by hand below.
TEST_CASE("hybrid models match their exact published parameter counts") {
  const std::string path = kRoot + "/workloads/sources/model-configs-hybrid.csv";
  const CsvTable t = parse_csv(read_text_file(path), path);
  const int c_model = t.column("model"), c_total = t.column("total_params_exact");
  const int c_ckpt = t.column("checkpoint_params_exact"), c_act = t.column("active_params_exact");
  REQUIRE(c_model >= 0);
  REQUIRE(c_total >= 0);
  REQUIRE(c_ckpt >= 0);
  REQUIRE(c_act >= 0);
  std::map<std::string, std::vector<std::string>> row;
  for (const auto& r : t.rows)
    row[r[static_cast<size_t>(c_model)]] = r;
  const auto figure = [&](const std::string& model, int column) {
    INFO(model);
    REQUIRE(row.count(model) == 1);
    const std::string& s = row[model][static_cast<size_t>(column)];
    REQUIRE_FALSE(s.empty());
    return published_count(s);
  };
  const auto check = [](double counted, double published, double last_digit) {
    CHECK(counted == Approx(published).epsilon(0.01));
    CHECK(counted == Approx(published).margin(last_digit / 2));
  };
  const auto d = [](int64_t n) { return static_cast<double>(n); };

  // Nemotron 3 Nano / Super: llama-bench's exact tensor count of the converted checkpoint. The
  // checkpoint also stores each MoE layer's router expert-bias buffer (one value per expert),
  // which fleetsim does not count: Nano 23 × 128 = 2,944, Super 40 × 512 = 20,480 (Super's MTP
  // module is not converted). With them the counts are equal to the parameter. Lightning: Nano's
  // count (the same architecture, as its row says). Nemotron-H 8B / 47B / 56B have no count
  // beyond their names (docs/models.md says what was searched); Ultra's total only the Hub's
  // checkpoint count with its MTP module (below).
  for (const auto& [id, model] :
       {std::pair<const char*, const char*>{"nemotron3-nano-30b-a3b", "Nemotron 3 Nano 30B-A3B"},
        {"nemotron3.5-lightning-30b-a3b", "Nemotron 3.5 Lightning 30B-A3B"},
        {"nemotron3-super-120b-a12b", "Nemotron 3 Super 120B-A12B"}}) {
    INFO(id);
    const ModelSpec m = zoo(id);
    const int64_t bias = int64_t{moe_layer_count(m)} * m.moe.experts;
    CHECK(d(total_params(m)) == Approx(figure(model, c_total)).epsilon(0.01));
    CHECK(total_params(m) + bias == static_cast<int64_t>(figure(model, c_total)));
  }
  // Nemotron 3 Super / Ultra checkpoints: the Hub's safetensors counts, listed to the billion,
  // include the checkpoint's one MTP module (num_nextn_predict_layers 1; the zoo rows run it at
  // the recipes' 2 depths with shared weights, so one module is mtp_params / mtp_layers): Super
  // 120.6687B + 2.9423B = 123.611B (Hub 124B), Ultra 549.3090B + 11.2156B = 560.525B (Hub 561B,
  // [560.5, 561.5) as the Hub rounds; its 550B name is 0.13 % over the 549.31B without MTP).
  for (const auto& [id, model] : {std::pair<const char*, const char*>{"nemotron3-super-120b-a12b",
                                                                      "Nemotron 3 Super 120B-A12B"},
                                  {"nemotron3-ultra-550b-a55b", "Nemotron 3 Ultra 550B-A55B"}}) {
    INFO(id);
    const ModelSpec m = zoo(id);
    REQUIRE(m.mtp_layers == 2);
    check(d(total_params(m) + mtp_params(m) / m.mtp_layers), figure(model, c_ckpt), 1e9);
  }
  // Nemotron 3 Nano active: the report's 3.6B "including embeddings" (fleetsim's convention,
  // both counted: 3.5801B) and its 3.2B, the count without the input embedding (3.2275B).
  const ModelSpec nano = zoo("nemotron3-nano-30b-a3b");
  const double nano_active = figure("Nemotron 3 Nano 30B-A3B", c_act);
  check(d(active_params(nano)), nano_active, 0.1e9);
  check(d(active_params(nano) - embedding_params(nano)), 3.2e9, 0.1e9);
  // Kimi Linear: 49.12B counted by llama.cpp against 49.1227B (+ 26 × 256 expert biases); the
  // name's "48B" is 2.3 % under both.
  check(d(total_params(zoo("kimi-linear-48b-a3b"))), figure("Kimi Linear 48B-A3B", c_total),
        0.01e9);
  // DeepSeek-V4-Flash: 284.33B (MTP not converted) against 284.3322B. Active: the GGUF's size
  // label 256x8.4B is shared + one routed expert over all layers (E), so E = (284.33B − 8.4B) /
  // 255 = 1.0821B and top-6 active = 8.4B + 5·E = 13.81B, both embeddings counted, ±0.05B from
  // the label's two digits; fleetsim 13.7996B.
  const ModelSpec v4 = zoo("deepseek-v4-flash");
  const std::string v4_name = "DeepSeek-V4-Flash (284B-A13B)";
  check(d(total_params(v4)), figure(v4_name, c_total), 0.01e9);
  CHECK(8.4e9 + 5 * (figure(v4_name, c_total) - 8.4e9) / 255 ==
        Approx(figure(v4_name, c_act)).margin(0.005e9));
  check(d(active_params(v4)), figure(v4_name, c_act), 0.1e9);
  // Qwen3-Next: 79.67B without the MTP module (llama.cpp drops mtp.*) against 79.6744B; the
  // Hub's 81.3B counts the checkpoint's one MTP module too: 79.6744B + 1.6505B = 81.3249B.
  // Active: NVIDIA's 3.9B (two digits) against 3.8749B (top-10 + shared, both embeddings).
  const ModelSpec qn = zoo("qwen3-next-80b-a3b");
  REQUIRE(qn.mtp_layers == 1);
  check(d(total_params(qn)), figure("Qwen3-Next-80B-A3B", c_total), 0.01e9);
  check(d(total_params(qn) + mtp_params(qn)), figure("Qwen3-Next-80B-A3B", c_ckpt), 0.1e9);
  check(d(active_params(qn)), figure("Qwen3-Next-80B-A3B", c_act), 0.1e9);
  // DeepSeek-V3.2: the Hub's 685.4B counts every safetensors tensor: the main model (671.8779B),
  // the MTP module (11.6240B) with its own stored copies of the embedding and the output head
  // (2 × 129280 · 7168 = 1.8534B), the F32 weight_scale_inv of each FP8 weight, one per 128 × 128
  // block (per layer: attention q_a 12·56 + q_b 192·12 + kv_a 5·56 + kv_b 256·4 + o 56·128 =
  // 11,448, indexer wq_b 64·12 + wk 1·56 = 824, over 62 layers; 257 experts × 3 · 16·56 = 2,688
  // on 59 MoE layers; the 3 dense MLPs 3 · 144·56: 41,591,584 in all) and the routers'
  // e_score_correction_bias (59 × 256 = 15,104): 685.3969B.
  const ModelSpec v32 = zoo("deepseek-v3.2-exp");
  REQUIRE(v32.mtp_layers == 1);
  const int64_t scales = 62 * (11'448 + 824) + 59 * 257 * 2'688 + 3 * 3 * 144 * 56;
  CHECK(scales == 41'591'584);
  const int64_t ckpt =
      total_params(v32) + mtp_params(v32) + 2 * embedding_params(v32) + scales + 59 * 256;
  check(d(ckpt), figure("DeepSeek-V3.2-Exp (671B)", c_ckpt), 0.1e9);
}
