// Hardware, model and framework names as vendors, clouds, MLPerf and users write them
// (sim/validate/names.h), each spelling of issue 16 checked against the system it must map to.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.h"
#include "support/fixtures.h"
#include "validate/names.h"

using namespace fleetsim;
using namespace fleetsim::test;

TEST_CASE("GPU and system names map to the default fleetsim system of their GPU") {
  const struct {
    const char* hardware;
    const char* notes;
    const char* system;
  } cases[] = {
      {"H100", "", "dgx-h100"},
      {"NVIDIA H100-SXM5-80GB", "", "dgx-h100"},
      {"DGX-H100", "", "dgx-h100"},
      {"h100 sxm 80gb", "", "dgx-h100"},
      {"NVIDIA H200-SXM5-141GB", "", "hgx-h200"},
      {"H200 141GB (Azure ND H200 v5, 8 GPU)", "", "hgx-h200"},
      {"NVIDIA Blackwell GPU (B200-SXM-180GB)", "", "dgx-b200"},
      {"DGX-B200", "", "dgx-b200"},
      {"NVIDIA Blackwell GPU (GB200)", "", "dgx-gb200-nvl72"},
      {"GB200 NVL72", "", "dgx-gb200-nvl72"},
      {"NVIDIA Blackwell Ultra GPU (GB300)", "", "dgx-gb300-nvl72"},
      {"B300", "", "dgx-b300"},
      {"HGX B300", "", "dgx-b300"},
      // AWS rows run on the AWS instance of the GPU.
      {"H100", "AWS p5.48xlarge, EFA", "p5.48xlarge"},
      {"H200", "cluster=p5en", "p5en.48xlarge"},
      {"B200 (AWS)", "", "p6-b200.48xlarge"},
      {"NVIDIA B300", "ec2 p6-b300.48xlarge", "p6-b300.48xlarge"},
      {"GB200", "SageMaker HyperPod", "p6e-gb200-ultraserver-72"},
  };
  for (const auto& c : cases) {
    INFO(c.hardware << " | " << c.notes);
    const SystemChoice s = system_for_hardware(c.hardware, c.notes);
    CHECK(s.system == c.system);
    CHECK(s.reason.empty());
  }
}

TEST_CASE("unknown hardware is skipped with the known GPU names and the closest one") {
  SystemChoice s = system_for_hardware("A100-SXM4-80GB", "");
  CHECK(s.system.empty());
  CHECK_THAT(s.reason, Catch::Contains("no fleetsim system for hardware 'A100-SXM4-80GB'"));
  CHECK_THAT(s.reason, Catch::Contains("known GPUs: GB300, GB200, B300, B200, H200, H100"));
  s = system_for_hardware("NVIDIA H10O", "");
  CHECK(s.system.empty());
  CHECK_THAT(s.reason, Catch::Contains("did you mean H100?"));
  // PCIe and NVL cards are other products (no NVSwitch baseboard, other clocks).
  s = system_for_hardware("NVIDIA H100 PCIe", "");
  CHECK(s.system.empty());
  CHECK_THAT(s.reason, Catch::Contains("PCIe / NVL card"));
  s = system_for_hardware("H100 NVL", "");
  CHECK(s.system.empty());
  // GB300 on AWS has no fleetsim topology: said, not guessed.
  s = system_for_hardware("GB300", "AWS");
  CHECK(s.system.empty());
  CHECK_THAT(s.reason, Catch::Contains("--system"));
}

TEST_CASE("the node layout a row states is read from MLPerf notes and cloud descriptions") {
  SystemChoice s = system_for_hardware("NVIDIA Blackwell GPU (GB200)", "nodes=256x4 GPUs");
  CHECK(s.nodes == 256);
  CHECK(s.gpus_per_node == 4);
  s = system_for_hardware("GB200 NVL72 (GCP A4X a4x-highgpu-4g, 4 GPU/node)", "");
  CHECK(s.nodes == 0);
  CHECK(s.gpus_per_node == 4);
  s = system_for_hardware("H100 80GB HBM3 (Meta Grand Teton, 8 GPUs/server)", "");
  CHECK(s.gpus_per_node == 8);
  CHECK(system_for_hardware("H100", "").gpus_per_node == 0);
}

TEST_CASE("model names resolve after normalisation, then to the one close zoo model") {
  const ModelResolver r(kRoot);
  const struct {
    const char* name;
    const char* model;
    const char* how;
    const char* variant;
  } cases[] = {
      {"LLAMA3_70B", "llama3-70b", "alias", ""},
      {"Llama 3.1 405B", "llama3.1-405b", "alias", ""},
      {"llama31_405b", "llama3.1-405b", "alias", ""},
      {"LLAMA4-Scout-LLM", "llama4-scout", "normalised", ""},
      {"Llama 3.1 405B (MLPerf llama31_405b)", "llama3.1-405b", "alias", "MLPerf llama31_405b"},
      {"Llama3 70B pretrain", "llama3-70b", "normalised", ""},
      {"GPT3-175B pre-training", "gpt3-175b", "normalised", ""},
      {"DeepSeekV3 (w/o MTP)", "deepseek-v3", "alias", "w/o MTP"},
      {"Deepsek-V3", "deepseek-v3", "closest", ""},
      {"Mixtral-8x22B-v0", "mixtral-8x22b", "closest", ""},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const ModelChoice m = r.resolve(c.name);
    CHECK(m.model == c.model);
    CHECK(m.how == c.how);
    CHECK(m.variant == c.variant);
  }
  // As near to llama3-8b as to llama3-70b: not guessed.
  ModelChoice m = r.resolve("llama3");
  CHECK(m.model.empty());
  CHECK_THAT(m.reason, Catch::Contains("--model-map"));
  m = r.resolve("Falcon-180B");
  CHECK(m.model.empty());
  CHECK_THAT(m.reason, Catch::Contains("no zoo model for 'Falcon-180B'"));
}

TEST_CASE(
    "names in a --model-map file resolve first, and a malformed map is an error with its line") {
  const std::string path = temp_path("model_map.csv");
  {
    std::ofstream f(path);
    f << "name,model\nFalcon-180B,llama3-70b\nmy_llama,llama3-8b\n";
  }
  const ModelResolver r(kRoot, load_model_map(path));
  CHECK(r.resolve("Falcon-180B").model == "llama3-70b");
  CHECK(r.resolve("MY-LLAMA").how == "--model-map");
  {
    std::ofstream f(path);
    f << "name,model\nFalcon-180B,\n";
  }
  try {
    load_model_map(path);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.pointer() == "line 2");
  }
  std::remove(path.c_str());
}

TEST_CASE("frameworks: NeMo / Megatron rows are modelled, JAX and DeepSpeed rows are not") {
  CHECK(framework_of("Maxtext llama2-70b", "") == "maxtext");
  CHECK(framework_of("Paxml gpt3", "") == "paxml");
  CHECK(framework_of("Llama 3 70B", "task=pretrain; framework=DeepSpeed; zero=3") == "deepspeed");
  CHECK(framework_of("Llama 3 70B", "framework=NeMo 2.0") == "nemo 2.0");
  CHECK(framework_of("LLAMA3_70B", "task=Pre-Training") == "");
  CHECK_FALSE(framework_modelled("maxtext"));
  CHECK_FALSE(framework_modelled("paxml"));
  CHECK_FALSE(framework_modelled("deepspeed"));
  CHECK(framework_modelled(""));
  CHECK(framework_modelled("nemo 2.0"));
  CHECK(framework_modelled("Megatron-LM"));
  CHECK(framework_modelled("megatron-core"));
}
