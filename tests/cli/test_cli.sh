#!/usr/bin/env bash
# CLI contract: exit codes (0 ok, 2 bad input), messages with file and JSON pointer, byte-identical
# reports for the same scenario and seed.
set -u
bin="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() {  # name, expected rc, command...
  local name="$1" want="$2"; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -eq "$want" ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $name: rc=$rc want $want"; cat "$tmp/err"; fi
}
check version 0 "$bin" --version
check help 0 "$bin" run --help
check run-quickstart 0 "$bin" run scenarios/quickstart.json --out "$tmp/a"
check run-again 0 "$bin" run scenarios/quickstart.json --out "$tmp/b"
if cmp -s "$tmp/a/report.json" "$tmp/b/report.json"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL determinism"; fi
printf '{"name": "x", "cluster": {"system": "p6-b200.48xlarge", "count": 2, "fabrc": {}}, "workload": {}}' >"$tmp/bad.json"
check bad-key 2 "$bin" run "$tmp/bad.json"
if grep -q "bad.json:/cluster/fabrc: unknown key 'fabrc'; did you mean 'fabric'?" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL bad-key message"; cat "$tmp/err"; fi
# framework.release: an unknown release is exit 2 with the pointer and the known names.
printf '{"name": "r", "cluster": {"system": "p6-b200.48xlarge", "count": 1}, "workload": {"type": "training", "model": "llama3-8b", "parallelism": {"tp": 1}, "batch": {"global": 8, "micro": 1, "seq_len": 4096}, "framework": {"release": "nemo-26.07"}}}' >"$tmp/release.json"
check bad-release 2 "$bin" run "$tmp/release.json"
if grep -q "release.json:/workload/framework/release: unknown release 'nemo-26.07'.*known: nemo-24.03.01, nemo-24.07, .*nemo-26.08" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL bad-release message"; cat "$tmp/err"; fi
printf '\xff\xfe not json' >"$tmp/binary.json"
check not-json 2 "$bin" run "$tmp/binary.json"
check missing-file 2 "$bin" run "$tmp/none.json"
# A system name longer than a file name may be (fuzz_scenario finding): unknown system, exit 2.
printf '{"name": "x", "cluster": {"system": "%s", "count": 1}, "workload": {}}' "$(printf 'x%.0s' $(seq 1 300))" >"$tmp/long-system.json"
check long-system-name 2 "$bin" run "$tmp/long-system.json"
if grep -q "long-system.json:/cluster/system: unknown system" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL long-system-name message"; cat "$tmp/err"; fi
check unknown-flag 2 "$bin" run scenarios/quickstart.json --frobnicate
# --html / --timeline: the same HTML bytes twice; exit 2 where they do not apply.
check html 0 "$bin" run scenarios/quickstart.json --out "$tmp/h1" --html
check html-again 0 "$bin" run scenarios/quickstart.json --out "$tmp/h2" --html
if cmp -s "$tmp/h1/report.html" "$tmp/h2/report.html"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL html determinism"; fi
check timeline-no-run 2 "$bin" run scenarios/quickstart.json --out "$tmp/h3" --timeline "$tmp/h3/t.json"
if grep -q "quickstart.json:/run: --events and --timeline need a scenario with a run section" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL timeline message"; cat "$tmp/err"; fi
check html-collective 2 "$bin" run scenarios/allreduce-2x-p6-b200.json --out "$tmp/h4" --html
check run-collective 0 "$bin" run scenarios/allreduce-2x-p6-b200.json --out "$tmp/c"
check run-trace 0 "$bin" run scenarios/quickstart.json --out "$tmp/d" --trace "$tmp/d/trace.json"
if /usr/bin/python3 -c "import json,sys; t=json.load(open(sys.argv[1])); assert len(t['traceEvents']) > 100" "$tmp/d/trace.json"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL trace is not JSON with events"; fi
check memory 0 "$bin" memory scenarios/quickstart.json
check memory-json 0 "$bin" memory scenarios/quickstart.json --json
# A configuration that does not fit (Llama 3.1 405B, TP 8 PP 16 VP 8 on 80 GiB H100s): the peak's
# moment and the changes that make it fit.
printf '{"name": "oom", "cluster": {"system": "p5.48xlarge", "count": 512}, "workload": {"type": "training", "model": "llama3.1-405b", "parallelism": {"tp": 8, "pp": 16, "vp": 8}, "batch": {"global": 2048, "micro": 1, "seq_len": 8192}}}' >"$tmp/oom.json"
check memory-oom 0 "$bin" memory "$tmp/oom.json"
if grep -q "DOES NOT FIT" "$tmp/out" && grep -q "^  peak: the first backward of micro-batch 0, chunk 7, after the forward of micro-batch 30, chunk 0" "$tmp/out" &&
   grep -q "^fits with one of (cheapest first):" "$tmp/out" && grep -q "^  selective recompute (core_attn, mlp): " "$tmp/out"; then
  pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL memory-oom output"; cat "$tmp/out"; fi
# A training scenario with tp not dividing the heads: exit 2 and the JSON pointer.
printf '{"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 1}, "workload": {"type": "training", "model": "llama3-8b", "parallelism": {"tp": 3}, "batch": {"global": 8, "seq_len": 4096}}}' >"$tmp/tp3.json"
check bad-tp 2 "$bin" run "$tmp/tp3.json"
if grep -q "tp3.json:/workload/parallelism" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL bad-tp message"; cat "$tmp/err"; fi
printf '{"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 1}, "workload": {"type": "training", "model": "llama-9b", "parallelism": {}, "batch": {"global": 8, "seq_len": 4096}}}' >"$tmp/model.json"
check unknown-model 2 "$bin" run "$tmp/model.json"
if grep -q "model.json:/workload/model" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL unknown-model message"; cat "$tmp/err"; fi
# Fine-tuning tasks: a LoRA run works; a bad task value, fine_tuning on pre-training and a bad
# LoRA target are exit 2 with the JSON pointer.
ft() {  # file, task JSON fragment
  printf '{"name": "t", "cluster": {"system": "p6-b200.48xlarge", "count": 1}, "workload": {"type": "training", "model": "llama3-8b", "parallelism": {}, "batch": {"global": 8, "seq_len": 4096}, %s}}' "$2" >"$tmp/$1"
}
ft lora.json '"task": "lora", "fine_tuning": {"mean_document_tokens": 240, "lora_rank": 16, "lora_targets": ["linear_qkv"]}'
check lora-run 0 "$bin" run "$tmp/lora.json"
ft task.json '"task": "dpo"'
check bad-task 2 "$bin" run "$tmp/task.json"
if grep -q "task.json:/workload/task" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL bad-task message"; cat "$tmp/err"; fi
ft ftpre.json '"fine_tuning": {"mean_document_tokens": 240}'
check fine-tuning-pretrain 2 "$bin" run "$tmp/ftpre.json"
if grep -q "ftpre.json:/workload/fine_tuning: fine_tuning applies to task 'sft' or 'lora'" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL fine_tuning on pretrain message"; cat "$tmp/err"; fi
ft target.json '"task": "lora", "fine_tuning": {"lora_targets": ["linear_qkv", "q_proj"]}'
check bad-lora-target 2 "$bin" run "$tmp/target.json"
if grep -q "target.json:/workload/fine_tuning/lora_targets/1: expected one of linear_qkv" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL bad lora target message"; cat "$tmp/err"; fi
ft doc.json '"task": "sft", "fine_tuning": {"mean_document_tokens": 8192}'
check long-document 2 "$bin" run "$tmp/doc.json"
if grep -q "doc.json:/workload/fine_tuning/mean_document_tokens: expected a mean document length of at most seq_len = 4096" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL long document message"; cat "$tmp/err"; fi
# MoE routing: the imbalance section, and bad routing histograms (exit 2 with the position).
check moe-skew 0 "$bin" run scenarios/deepseek-v3-skew-gb200.json --out "$tmp/moe"
if grep -q "EP-rank load max/mean" "$tmp/out"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL moe section"; fi
moe_scenario() {  # histogram file name
  printf '{"name": "h", "cluster": {"system": "dgx-b200", "count": 8}, "workload": {"type": "training", "model": "mixtral-8x7b", "parallelism": {"ep": 8}, "batch": {"global": 64, "seq_len": 4096}, "routing": {"model": "histogram", "file": "%s"}}}' "$1" >"$tmp/h.json"
}
printf 'layer,expert,tokens\n' >"$tmp/neg.csv"
for l in $(seq 0 31); do for e in $(seq 0 7); do echo "$l,$e,100" >>"$tmp/neg.csv"; done; done
sed -i 's/^5,3,100$/5,3,-4/' "$tmp/neg.csv"
moe_scenario neg.csv
check routing-negative 2 "$bin" run "$tmp/h.json" --out "$tmp/h"
if grep -q "neg.csv:line 45: expected a token count >= 0" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL routing-negative message"; cat "$tmp/err"; fi
head -n 200 "$tmp/neg.csv" | sed 's/-4/4/' >"$tmp/short.csv"
moe_scenario short.csv
check routing-missing-layer 2 "$bin" run "$tmp/h.json" --out "$tmp/h"
if grep -q "missing tokens for layer 24" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL routing-missing message"; cat "$tmp/err"; fi
printf '{"experts": 16, "tokens": []}' >"$tmp/wrong.json"
moe_scenario wrong.json
check routing-wrong-experts 2 "$bin" run "$tmp/h.json" --out "$tmp/h"
if grep -q "wrong.json:/experts: the model has 8 routed experts" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL routing-wrong-experts message"; cat "$tmp/err"; fi
# A sweep over the routing skew: the dropless slowdown rises as alpha falls.
check moe-sweep 0 "$bin" sweep scenarios/sweeps/moe-alpha.json --out "$tmp/sweep" -j 2
if /usr/bin/python3 - "$tmp/sweep/results.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if float(r["/workload/routing/capacity_factor"]) == 0]
rows.sort(key=lambda r: -float(r["/workload/routing/alpha"]))
slow = [float(r["moe_slowdown_pct"]) for r in rows]
assert len(slow) == 5 and all(a < b for a, b in zip(slow, slow[1:])), slow
PY
then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL moe sweep slowdown is not rising with skew"; fi
# Capacity plans: a candidate type without a price, and a negative price, are exit 2 with the pointer.
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
base = json.load(open("scenarios/plans/llama3.1-405b-15t.json"))
a = dict(base); a["prices"] = {k: v for k, v in base["prices"].items() if k != "p5en.48xlarge"}
json.dump(a, open(sys.argv[1] + "/noprice.json", "w"))
b = json.loads(json.dumps(base)); b["prices"]["p6-b200.48xlarge"]["usd_per_instance_hour"] = -1
json.dump(b, open(sys.argv[1] + "/negprice.json", "w"))
PY
check plan-missing-price 2 "$bin" plan "$tmp/noprice.json" --out "$tmp/plan"
if grep -q "noprice.json:/candidates/1/system" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL plan-missing-price message"; cat "$tmp/err"; fi
check plan-negative-price 2 "$bin" plan "$tmp/negprice.json" --out "$tmp/plan"
if grep -q "negprice.json:/prices/p6-b200.48xlarge/usd_per_instance_hour" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL plan-negative-price message"; cat "$tmp/err"; fi
check topo 0 "$bin" topo show p6-b200.48xlarge --count 4
check topo-dot 0 "$bin" topo show p6e-gb200-ultraserver-72 --dot
check topo-unknown 2 "$bin" topo show p7.48xlarge
printf 'a,b\n"unterminated,1\n' >"$tmp/bad.csv"
check validate-bad-csv 2 "$bin" validate --reference "$tmp/bad.csv"
# fleetsim model import: every Hugging Face config.json fixture maps (exit 0) and reloads as a
# zoo JSON; a scenario may name a config.json as its model; bad configs exit 2 naming the key.
for f in tests/scenario/hf_configs/*.json; do
  n=$(basename "$f" .json)
  check "model-import-$n" 0 "$bin" model import "$f" --out "$tmp/imp-$n.json"
  if grep -q '"origin"' "$tmp/imp-$n.json"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL model-import-$n: no origin"; fi
done
mkdir -p "$tmp/Mixtral-ckpt" && cp tests/scenario/hf_configs/mixtral-8x7b.json "$tmp/Mixtral-ckpt/config.json"
check model-import-folder 0 "$bin" model import "$tmp/Mixtral-ckpt" --out "$tmp/imp-folder.json"
if grep -q '"id": "Mixtral-ckpt"' "$tmp/imp-folder.json"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL model-import-folder: id"; fi
mkdir -p "$tmp/empty-ckpt"
check model-import-empty-folder 2 "$bin" model import "$tmp/empty-ckpt"
if grep -qF "empty-ckpt:/: a folder without a config.json" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL model-import-empty-folder message"; cat "$tmp/err"; fi
check model-import-stdout 0 "$bin" model import tests/scenario/hf_configs/mixtral-8x7b.json --name mx
if /usr/bin/python3 -c "import json,sys; m=json.load(open(sys.argv[1])); assert m['id']=='mx' and m['moe']['experts']==8 and m['origin']['/moe/experts']=='config.json:/num_local_experts = 8'" "$tmp/out"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL model-import-stdout"; cat "$tmp/out"; fi
hf_scenario() {  # file, model path, ep
  printf '{"name": "hf", "cluster": {"system": "p5.48xlarge", "count": 1}, "workload": {"type": "training", "model": "%s", "parallelism": {"tp": 1, "ep": %s}, "batch": {"global": 8, "seq_len": 2048}, "precision": "bf16"}}' "$2" "$3" >"$1"
}
mini='{"model_type": "mixtral", "num_hidden_layers": 2, "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2, "num_local_experts": 6, "num_experts_per_tok": 2, "vocab_size": 1000, "max_position_embeddings": 4096'
printf '%s}' "$mini" >"$tmp/mini-moe.json"
hf_scenario "$tmp/hf-run.json" "$tmp/mini-moe.json" 2
check run-hf-config 0 "$bin" run "$tmp/hf-run.json" --out "$tmp/hfrun"
hf_scenario "$tmp/hf-run-zoo.json" tests/scenario/hf_configs/llama3-8b.json 1
check run-hf-config-llama 0 "$bin" run "$tmp/hf-run-zoo.json" --out "$tmp/hfrun2"
hf_scenario "$tmp/hf-ep4.json" "$tmp/mini-moe.json" 4
check hf-experts-not-divisible-by-ep 2 "$bin" run "$tmp/hf-ep4.json"
if grep -q "hf-ep4.json:/workload/parallelism/ep: ep = 4 must divide the model's 6 experts ($tmp/mini-moe.json:/num_local_experts)" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL hf-ep message"; cat "$tmp/err"; fi
hf_bad() {  # name, json body, expected message
  printf '%s' "$2" >"$tmp/$1.json"
  check "hf-$1" 2 "$bin" model import "$tmp/$1.json"
  if grep -qF "$tmp/$1.json:$3" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL hf-$1 message"; cat "$tmp/err"; fi
  hf_scenario "$tmp/$1-scn.json" "$tmp/$1.json" 1
  check "hf-$1-run" 2 "$bin" run "$tmp/$1-scn.json"
  if grep -qF "$1-scn.json:/workload/model: $tmp/$1.json:$3" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL hf-$1-run message"; cat "$tmp/err"; fi
}
hf_bad unknown-type '{"model_type": "falcon", "hidden_size": 64}' "/model_type: unknown model_type 'falcon'"
hf_bad no-hidden '{"model_type": "llama", "num_hidden_layers": 2, "vocab_size": 100, "max_position_embeddings": 64}' "/hidden_size: missing required key 'hidden_size'"
hf_bad negative-layers '{"model_type": "llama", "num_hidden_layers": -2, "hidden_size": 64}' "/num_hidden_layers: expected an integer in [1, 100000], got -2"
hf_bad unknown-key "${mini}, \"moe_layer_period\": 2}" "/moe_layer_period: key not understood"
hf_bad mamba '{"model_type": "mamba2", "hidden_size": 64}' "/model_type: 'mamba2': pure Mamba-2"
hf_bad v4-ratios "$(sed 's/4, 0]/4, 0, 0, 0]/' tests/scenario/hf_configs/deepseek-v4-flash.json)" "/compress_ratios: expected one ratio per layer and MTP module"
# DeepSeek-V4: imported and counted, its step refused (exit 2) naming what is not modelled.
hf_scenario "$tmp/hf-v4.json" tests/scenario/hf_configs/deepseek-v4-flash.json 8
check run-v4-refused 2 "$bin" run "$tmp/hf-v4.json"
if grep -qF "hf-v4.json:/workload/model: the step model of DeepSeek-V4" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL run-v4-refused message"; cat "$tmp/err"; fi
# Granite 4.0-H (Mamba-2 / attention mixers, each layer's MoE with a shared MLP): a step runs.
hf_scenario "$tmp/hf-granite.json" tests/scenario/hf_configs/granite-4.0-h-tiny.json 8
check run-hf-granite 0 "$bin" run "$tmp/hf-granite.json" --out "$tmp/hfgranite"
# Bamba-9B (attention at attn_layer_indices, Mamba-2 elsewhere, an MLP on every layer): a step
# runs; TP 2 would split its one B/C group, refused naming the field.
hf_scenario "$tmp/hf-bamba.json" tests/scenario/hf_configs/bamba-9b.json 1
check run-hf-bamba 0 "$bin" run "$tmp/hf-bamba.json" --out "$tmp/hfbamba"
# Qwen3.5 (the language model of a Qwen3_5MoeForConditionalGeneration config.json, nested in
# text_config): a step runs; a bad nested key is named with its full pointer.
hf_scenario "$tmp/hf-qwen35.json" tests/scenario/hf_configs/qwen3.5-35b-a3b.json 8
check run-hf-qwen3.5 0 "$bin" run "$tmp/hf-qwen35.json" --out "$tmp/hfqwen35"
if grep -qF "vision_encoder not modelled (impact small)" "$tmp/hfqwen35/report.json"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL run-hf-qwen3.5: no vision_encoder source"; fi
# Gemma 3 (a sparse text_config at Gemma3TextConfig's defaults, a SigLIP vision_config): a step
# runs with its 5-of-6 sliding layers and sandwich norms.
hf_scenario "$tmp/hf-gemma3.json" tests/scenario/hf_configs/gemma-3-12b.json 1
check run-hf-gemma3 0 "$bin" run "$tmp/hf-gemma3.json" --out "$tmp/hfgemma3"
# Llama 4 Scout (Llama4ForConditionalGeneration: the language model in text_config, chunked
# attention on its RoPE layers, a vision encoder not simulated): a step runs, and says so.
hf_scenario "$tmp/hf-llama4.json" tests/scenario/hf_configs/llama4-scout.json 8
check run-hf-llama4 0 "$bin" run "$tmp/hf-llama4.json" --out "$tmp/hfllama4"
if grep -qF "vision_encoder not modelled (impact small)" "$tmp/hfllama4/report.json"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL run-hf-llama4: no vision_encoder source"; fi
hf_bad llama4-moe-layers "$(sed '0,/^      1,$/s//      5,/' tests/scenario/hf_configs/llama4-scout.json)" "/text_config/moe_layers: only every k-th layer MoE"
hf_bad qwen35-nested "$(sed 's/"linear_num_key_heads": 16/"linear_num_key_heads": 0/' tests/scenario/hf_configs/qwen3.5-35b-a3b.json)" "/text_config/linear_num_key_heads: expected an integer in [1, 65536], got 0"
hf_bad granite-layer-type "$(sed '0,/"attention",/s//"mlp",/' tests/scenario/hf_configs/granite-4.0-h-tiny.json)" "/layer_types/5: expected 'mamba' or 'attention', got 'mlp'"
hf_bad hybrid-pattern '{"model_type": "nemotron_h", "num_hidden_layers": 2, "hidden_size": 64, "vocab_size": 100, "max_position_embeddings": 64, "hybrid_override_pattern": "MX"}' "/hybrid_override_pattern: character 1 'X' is not a block kind"
# Work limits: each refused up front with exit 2, the estimate and the flag that raises it.
limit() {  # name, message (fixed string), command...
  local name="$1" msg="$2"; shift 2
  check "limit-$name" 2 "$@"
  if grep -qF -- "$msg" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL limit-$name message"; cat "$tmp/err"; fi
}
a2a_scenario() {  # file, p6-b200 instances
  printf '{"name": "a", "cluster": {"system": "p6-b200.48xlarge", "count": %d}, "workload": {"type": "collective", "operation": "all_to_all", "algorithm": "direct", "sizes": ["1GiB"]}}' "$2" >"$1"
}
a2a_scenario "$tmp/a2a-4096.json" 512
limit flows "a2a-4096.json:/cluster/count: all_to_all over 4096 GPUs (direct) simulates 16773120 flows per size (one per ordered GPU pair); the limit is 8388608 (raise it with --max-flows)" "$bin" run "$tmp/a2a-4096.json" --out "$tmp/l"
# Raised, the flows pass and the memory estimate (16773120 × 270 B) is what refuses it here.
limit flows-raised "the simulation would take about 4.22 GiB of memory (all_to_all over 4096 GPUs (direct): 16773120 flows in its largest plan × 270 B); the limit is 1 GiB (raise it with --max-sim-memory)" "$bin" run "$tmp/a2a-4096.json" --out "$tmp/l" --max-flows 20000000 --max-sim-memory 1GiB
a2a_scenario "$tmp/a2a-64.json" 8
check a2a-64-flows-ok 0 "$bin" run "$tmp/a2a-64.json" --out "$tmp/l" --max-flows 4032
limit flows-custom "simulates 4032 flows per size (one per ordered GPU pair); the limit is 4031 (raise it with --max-flows)" "$bin" run "$tmp/a2a-64.json" --out "$tmp/l" --max-flows 4031
limit sim-memory "quickstart.json:/workload/batch: the simulation would take about" "$bin" run scenarios/quickstart.json --out "$tmp/l" --max-sim-memory 1KiB
if grep -qF "the limit is 1 KiB (raise it with --max-sim-memory)" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL sim-memory limit"; cat "$tmp/err"; fi
check sim-memory-not-a-size 2 "$bin" run scenarios/quickstart.json --max-sim-memory 8XB
if grep -qF "unknown unit 'XB'" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL sim-memory-not-a-size message"; cat "$tmp/err"; fi
# The 16K-GPU run example with a gray-failure rate of 2 per GPU-hour (a typo away from 5e-6):
# 2 × 16384 GPUs × 720 h × (2 + 4 health-check events) per onset ≈ 1.42e8 events per replica.
sed 's/"rate_per_hour": 5e-6/"rate_per_hour": 2/' scenarios/run-llama3.1-405b-16k-b200.json >"$tmp/gray-typo.json"
limit run-events "gray-typo.json:/run: the Monte Carlo would process about 2.83e+10 run-level events (1.42e+08 per replica" "$bin" run "$tmp/gray-typo.json" --out "$tmp/l"
if grep -qF "× 200 replicas); the limit is 200000000 (raise it with --max-run-events)" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL run-events limit"; cat "$tmp/err"; fi
limit run-events-custom "the limit is 1000 (raise it with --max-run-events)" "$bin" run scenarios/run-llama3.1-405b-16k-b200.json --out "$tmp/l" --max-run-events 1000
limit gpus "quickstart.json:/cluster/count: cluster has 64 GPUs; the limit is 8 (raise it with --max-gpus)" "$bin" run scenarios/quickstart.json --out "$tmp/l" --max-gpus 8
# quickstart: 16 TP units × 32 micro-batches × 5 chunks × 2 (hand count in the message's formula).
limit passes "quickstart.json:/workload/batch: the step has 5120 forward/backward passes to simulate (TP units × micro-batches per pipeline × model chunks × 2); the limit is 10 (raise it with --max-passes)" "$bin" run scenarios/quickstart.json --out "$tmp/l" --max-passes 10
limit trace-events "quickstart.json:/workload/batch: --trace would write about 15360 trace events" "$bin" run scenarios/quickstart.json --out "$tmp/l" --trace "$tmp/t.json" --max-trace-events 100
if grep -qF "the limit is 100 (raise it with --max-trace-events)" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL trace-events limit"; cat "$tmp/err"; fi
limit plan-candidates "the limit is 2 (raise it with --max-candidates)" "$bin" plan scenarios/plans/llama3.1-405b-15t.json --out "$tmp/l" --max-candidates 2
# A sweep records a refused point as invalid, with the limit's message.
check sweep-limits 0 "$bin" sweep scenarios/sweeps/quickstart-parallelism.json --out "$tmp/sw" --progress none --max-passes 1
if grep -qF "(raise it with --max-passes)" "$tmp/sw/results.jsonl"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL sweep-limits rows"; head -2 "$tmp/sw/results.jsonl"; fi
# std::bad_alloc is never an internal error: under a 200 MB address-space limit the 2,048-GPU
# all-to-all (4,192,256 flows, about 1.1 GB of plan: within the default limits) runs out while
# planning; exit 2 naming the limit flags. Not under a sanitizer (its shadow memory needs the
# address space).
if ! grep -q __asan_init "$bin"; then
  a2a_scenario "$tmp/a2a-2048.json" 256
  check out-of-memory 2 bash -c "ulimit -v 200000; exec \"\$0\" run \"\$1\" --out \"\$2\"" "$bin" "$tmp/a2a-2048.json" "$tmp/l"
  if grep -qF "fleetsim: error: out of memory:" "$tmp/err" && grep -qF -- "--max-flows, --max-run-events and --max-sim-memory" "$tmp/err" && ! grep -q "internal error" "$tmp/err"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL out-of-memory message"; cat "$tmp/err"; fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
