#!/usr/bin/env python3
"""Generate workloads/models/<id>.json from workloads/sources/model-configs.csv and
workloads/sources/model-configs-hybrid.csv.

Every numeric field comes from a CSV column; the free-text columns (activation, norm, attention
pattern, sliding window, ...) are interpreted by the explicit rules below, and any text the rules
do not recognise stops the script, so nothing is approximated silently. Features the typed model
(sim/workload/model.h) cannot express are written under "unmodelled" with their impact:
  none     - no parameters and no GEMM FLOPs (element-wise maths, position encoding, routing rule);
  small    - parameters or FLOPs below 0.1 % of the model's;
  material - fleetsim cannot simulate the model; the loader rejects it (no zoo model has one).

Hybrid rows (Mamba-2 / attention / MLP / MoE block patterns) are read by interpret_hybrid(),
the Gated DeltaNet row (Qwen3-Next) by interpret_gdn(), the DeepSeek sparse attention row
(DeepSeek-V3.2-Exp) by interpret_dsa(), the Kimi Delta Attention row (Kimi Linear) by
interpret_kda(), the DeepSeek-V4 row (shared-KV attention with CSA / HCA compressors, mHC
residual streams, hash-routed MoE) by interpret_v4(); a row whose layers fleetsim cannot model
yet would be listed in HYBRID_SKIP with the reason and not written (none is).

Usage: workloads/import_models.py [--csv PATH] [--hybrid-csv PATH] [--out DIR] [--check]
  --csv     the model-config table (default: workloads/sources/model-configs.csv, the copy of the
            project's reference table kept in the repository; pass another path to refresh from it)
  --hybrid-csv  the hybrid table (default: workloads/sources/model-configs-hybrid.csv)
  --check compares the generated text with the committed files and exits 1 on any difference.
"""
import argparse
import csv
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CSV = os.path.join(HERE, "sources", "model-configs.csv")
DEFAULT_HYBRID_CSV = os.path.join(HERE, "sources", "model-configs-hybrid.csv")

# CSV "model" column -> canonical id, display name, extra aliases (obvious spellings). The
# aliases from perf_summary_model_names are added automatically.
IDS = {
    "Llama 2 7B": ("llama2-7b", "Llama 2 7B", ["llama-2-7b", "Llama-2-7b-hf"]),
    "Llama 2 13B": ("llama2-13b", "Llama 2 13B", ["llama-2-13b", "Llama-2-13b-hf"]),
    "Llama 2 70B": ("llama2-70b", "Llama 2 70B", ["llama-2-70b", "Llama-2-70b-hf"]),
    "Llama 3 8B": ("llama3-8b", "Llama 3 8B", ["llama-3-8b", "Meta-Llama-3-8B"]),
    "Llama 3 70B": ("llama3-70b", "Llama 3 70B", ["llama-3-70b", "Meta-Llama-3-70B"]),
    "Llama 3.1 405B": ("llama3.1-405b", "Llama 3.1 405B",
                       ["llama-3.1-405b", "Meta-Llama-3.1-405B", "llama405b"]),
    "Llama 4 Scout (17B-16E)": ("llama4-scout", "Llama 4 Scout (17B-16E)",
                                ["llama-4-scout", "Llama-4-Scout-17B-16E", "llama4-e16"]),
    "Llama 4 Maverick (17B-128E)": ("llama4-maverick", "Llama 4 Maverick (17B-128E)",
                                    ["llama-4-maverick", "Llama-4-Maverick-17B-128E",
                                     "llama4-e128"]),
    "Mixtral 8x7B": ("mixtral-8x7b", "Mixtral 8x7B", ["Mixtral-8x7B-v0.1"]),
    "Mixtral 8x22B": ("mixtral-8x22b", "Mixtral 8x22B", ["Mixtral-8x22B-v0.1"]),
    "DeepSeek-V3 (671B)": ("deepseek-v3", "DeepSeek-V3 (671B)", ["deepseek-v3-671b", "dsv3"]),
    "Kimi K2 (1T)": ("kimi-k2", "Kimi K2 (1T)", ["kimi-k2-base", "moonshot-kimi-k2"]),
    "Qwen3-30B-A3B": ("qwen3-30b-a3b", "Qwen3-30B-A3B", ["qwen3-30b"]),
    "Qwen3-235B-A22B": ("qwen3-235b-a22b", "Qwen3-235B-A22B", ["qwen3-235b"]),
    "GPT-OSS 120B": ("gpt-oss-120b", "GPT-OSS 120B", ["gptoss-120b"]),
    "GPT-OSS 20B": ("gpt-oss-20b", "GPT-OSS 20B", ["gptoss-20b"]),
    "Nemotron-4 15B": ("nemotron4-15b", "Nemotron-4 15B", ["nemotron-4-15b"]),
    "Nemotron-4 340B": ("nemotron4-340b", "Nemotron-4 340B", ["nemotron-4-340b"]),
    "Nemotron-3 8B": ("nemotron3-8b", "Nemotron-3 8B", ["nemotron-3-8b"]),
    "Nemotron-3 22B": ("nemotron3-22b", "Nemotron-3 22B", ["nemotron-3-22b"]),
    "GPT-3 175B": ("gpt3-175b", "GPT-3 175B", ["gpt-3-175b", "gpt3"]),
    "GPT-3 5B (NVIDIA NeMo variant)": ("gpt3-5b", "GPT-3 5B (NVIDIA NeMo variant)", ["gpt-3-5b"]),
    "GPT-3 20B (NVIDIA NeMo variant)": ("gpt3-20b", "GPT-3 20B (NVIDIA NeMo variant)",
                                        ["gpt-3-20b"]),
    "Grok-1 (314B)": ("grok-1", "Grok-1 (314B)", ["grok1", "grok-1-314b"]),
}

# Hybrid rows written to the zoo (model-configs-hybrid.csv "model" column -> id, display, aliases).
HYBRID_IDS = {
    "Nemotron-H 8B (Nemotron-H-8B-Base-8K)": ("nemotron-h-8b", "Nemotron-H 8B",
                                              ["Nemotron-H-8B-Base-8K", "nemotronh-8b"]),
    "Nemotron-H 47B (Nemotron-H-47B-Base-8K)": ("nemotron-h-47b", "Nemotron-H 47B",
                                                ["Nemotron-H-47B-Base-8K", "nemotronh-47b"]),
    "Nemotron-H 56B (Nemotron-H-56B-Base-8K)": ("nemotron-h-56b", "Nemotron-H 56B",
                                                ["Nemotron-H-56B-Base-8K", "nemotronh-56b"]),
    "Nemotron 3 Nano 30B-A3B": ("nemotron3-nano-30b-a3b", "Nemotron 3 Nano 30B-A3B",
                                ["nemotron-3-nano", "NVIDIA-Nemotron-3-Nano-30B-A3B"]),
    "Nemotron 3.5 Lightning 30B-A3B": ("nemotron3.5-lightning-30b-a3b",
                                       "Nemotron 3.5 Lightning 30B-A3B",
                                       ["nemotron-3.5-lightning"]),
    "Qwen3-Next-80B-A3B": ("qwen3-next-80b-a3b", "Qwen3-Next-80B-A3B",
                           ["Qwen3-Next-80B-A3B-Instruct", "qwen3-next"]),
    "DeepSeek-V3.2-Exp (671B)": ("deepseek-v3.2-exp", "DeepSeek-V3.2-Exp (671B)",
                                 ["DeepSeek-V3.2-Exp"]),
    "Nemotron 3 Super 120B-A12B": ("nemotron3-super-120b-a12b", "Nemotron 3 Super 120B-A12B",
                                   ["nemotron-3-super", "NVIDIA-Nemotron-3-Super-120B-A12B"]),
    "Nemotron 3 Ultra 550B-A55B": ("nemotron3-ultra-550b-a55b", "Nemotron 3 Ultra 550B-A55B",
                                   ["nemotron-3-ultra", "NVIDIA-Nemotron-3-Ultra-550B-A55B"]),
    "Kimi Linear 48B-A3B": ("kimi-linear-48b-a3b", "Kimi Linear 48B-A3B",
                            ["Kimi-Linear-48B-A3B-Instruct", "Kimi-Linear-48B-A3B-Base",
                             "kimi-linear"]),
    "DeepSeek-V4-Flash (284B-A13B)": ("deepseek-v4-flash", "DeepSeek-V4-Flash (284B-A13B)",
                                      ["DeepSeek-V4-Flash", "DeepSeek-V4-Flash-Base"]),
}

# Hybrid rows not written, and why (the layer kind fleetsim does not model yet).
HYBRID_SKIP = {}

# The Nemotron-H family's HF vocabulary (NemotronHConfig default 131072, the 8B row's value) for
# the hybrid rows that leave vocab_size empty.
HYBRID_VOCAB_FROM_ROW = "Nemotron-H 8B (Nemotron-H-8B-Base-8K)"

# Vocabulary of the NeMo GPT-3 variants: the CSV leaves vocab_size empty because GPTConfig has no
# fixed vocabulary. They are GPT-3 architectures trained with GPT-3's tokenizer (GPT-2 BPE,
# 50257 tokens, the vocab_size of the GPT-3 175B row); that value is used and flagged in "notes".
VOCAB_FROM_ROW = {"GPT-3 5B (NVIDIA NeMo variant)": "GPT-3 175B",
                  "GPT-3 20B (NVIDIA NeMo variant)": "GPT-3 175B"}


class Unrecognised(Exception):
    pass


def need(cond, model, column, text):
    if not cond:
        raise Unrecognised(f"{model}: cannot interpret {column} = {text!r}")


def to_int(s):
    return int(s.replace(",", "")) if s not in ("", None) else None


def params_number(s):
    """'46.7B' -> 46700000000, '1T' -> 1e12; anything else (e.g. '25% of weights') -> None."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([BT])", s.strip())
    if not m:
        return None
    scale = 10**9 if m.group(2) == "B" else 10**12
    return int(round(float(m.group(1)) * scale))


def context_tokens(s):
    m = re.fullmatch(r"(\d+)([kKM])", s.strip())
    if not m:
        return None
    return int(m.group(1)) * (1024 if m.group(2) in "kK" else 1024 * 1024)


def unm(feature, impact, note):
    return {"feature": feature, "impact": impact, "note": note}


def interpret(row):
    name = row["model"]
    out = {}
    unmodelled = []
    notes = []

    # --- MLP kind from the activation text ---
    act = row["activation"]
    if act.startswith("SwiGLU") or act.startswith("GeGLU"):
        mlp = "gated"
    elif "(not gated)" in act:
        mlp = "plain"
    else:
        need(False, name, "activation", act)
    if act not in ("SwiGLU", "GeLU (not gated)"):
        unmodelled.append(unm("activation", "none",
                              f"activation function '{act}'; the matmul count ({mlp} MLP) is "
                              "modelled, the element-wise function is not"))

    # --- norms ---
    norm = row["norm_type"]
    if norm.startswith("RMSNorm"):
        out_norm = "rmsnorm"
    elif norm.startswith("LayerNorm"):
        out_norm = "layernorm"
    else:
        need(False, name, "norm_type", norm)
    norms_per_layer = 4 if "before and after" in norm else 2
    if "zero-centered gamma" in norm:
        unmodelled.append(unm("zero_centered_gamma", "none",
                              "LayerNorm1p (weight stored as gamma-1); same parameters and FLOPs"))

    # --- attention ---
    variant = row["attention_variant"]
    kind = "mla" if variant.startswith("MLA") else "gqa"
    need(kind == "mla" or re.match(r"(MHA|GQA)", variant), name, "attention_variant", variant)
    heads = to_int(row["num_attention_heads"])
    kv_heads = to_int(row["num_kv_heads"])
    att = {"kind": kind, "heads": heads, "kv_heads": kv_heads}
    if kind == "mla":
        att["head_dim"] = to_int(row["v_head_dim"])
        for k in ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                  "v_head_dim"):
            att[k] = to_int(row[k])
    else:
        att["head_dim"] = to_int(row["head_dim"])
    bias_all = "with bias" in variant or "biases on qkv and out projections" in variant
    att["qkv_bias"] = bias_all
    qk = row["qk_norm"]
    if qk.startswith("none") or qk.startswith("RMSNorm on q/kv low-rank latents"):
        att["qk_norm"] = False  # MLA latent norms are part of the MLA parameter count
    elif qk.startswith("QK RMSNorm (per head)"):
        att["qk_norm"] = True
    elif qk.startswith("L2 (unscaled RMS) norm"):
        att["qk_norm"] = False
        unmodelled.append(unm("qk_l2_norm", "none",
                              f"{qk}: parameter-free L2 normalisation of q and k"))
    else:
        need(False, name, "qk_norm", qk)
    if "soft-capped" in variant:
        unmodelled.append(unm("attention_logit_softcap", "none",
                              "attention logits scaled by 0.0884 and soft-capped with "
                              "30*tanh(x/30): element-wise"))

    sw = row["sliding_window"]
    pattern = row["attention_layer_pattern"]
    if sw.startswith("none"):
        need(pattern.startswith("all layers") or pattern.startswith("paper: alternating"), name,
             "attention_layer_pattern", pattern)
        if pattern.startswith("paper: alternating"):
            unmodelled.append(unm(
                "sparse_attention_layers", "none",
                "the GPT-3 paper alternates dense and locally banded sparse attention layers; "
                "NVIDIA's NeMo/Megatron GPT-3 benchmarks (the configuration modelled here) use "
                "dense causal attention in every layer"))
    else:
        m = re.match(r"(\d+)", sw)
        need(m, name, "sliding_window", sw)
        att["sliding_window"] = int(m.group(1))
        if "chunked local" in sw:
            att["window_kind"] = "chunked"
            need("(i+1)%4==0" in pattern and "NoPE global" in pattern, name,
                 "attention_layer_pattern", pattern)
            # layers i with i%4 in {0,1,2} are chunked-local, i%4==3 global.
            att["window_pattern"], att["window_layers"] = 4, 3
            unmodelled.append(unm("nope_layers", "none",
                                  "every 4th layer (the global ones) uses no position encoding "
                                  "(NoPE); no parameters or FLOPs differ"))
        else:
            att["window_kind"] = "sliding"
            need(pattern.startswith("even layers (i%2==0"), name, "attention_layer_pattern",
                 pattern)
            att["window_pattern"], att["window_layers"] = 2, 1
    if not row["attention_sinks"].startswith("none"):
        unmodelled.append(unm("attention_sinks", "small",
                              f"{row['attention_sinks']}: {heads} parameters per layer, one extra "
                              "softmax term per head"))

    pos = row["position_embedding"]
    learned_positions = pos.startswith("learned absolute")
    if not learned_positions:
        need("RoPE" in pos, name, "position_embedding", pos)
        unmodelled.append(unm("position_encoding", "none", pos))

    # --- MoE ---
    experts = to_int(row["num_experts"]) or 0
    moe = None
    if experts > 0:
        freq = to_int(row["moe_layer_freq"]) or 1
        moe = {
            "experts": experts,
            "shared_experts": to_int(row["num_shared_experts"]) or 0,
            "top_k": to_int(row["top_k"]),
            "expert_ffn": to_int(row["moe_ffn_hidden_size"]),
            "shared_expert_ffn": to_int(row["shared_expert_ffn_hidden_size"]) or 0,
            "first_k_dense": to_int(row["first_k_dense_replace"]) or 0,
            "layer_freq": freq,
        }
        pat = row["moe_layer_pattern"]
        if freq == 2:
            need(pat.startswith("MoE on odd layers"), name, "moe_layer_pattern", pat)
        router = row["router_score_func"]
        extra = ""
        if row["router_n_group"]:
            extra = (f"; group-limited routing n_group {row['router_n_group']}, topk_group "
                     f"{row['router_topk_group']}, routed_scaling_factor "
                     f"{row['routed_scaling_factor']}")
        unmodelled.append(unm("router_scoring", "none",
                              f"{router}{extra}; routing statistics are modelled in moe/, the "
                              "router GEMM's parameters are counted"))
        if "expert bias" in router or "learned expert bias" in router:
            unmodelled.append(unm("router_expert_bias", "small",
                                  f"{experts} selection-bias values per MoE layer "
                                  "(aux-loss-free balancing), not trained by gradient"))

    tied = row["tied_embeddings"]
    need(tied in ("true", "false"), name, "tied_embeddings", tied)

    vocab = to_int(row["vocab_size"])
    if vocab is None and name in VOCAB_FROM_ROW:
        vocab = None  # filled by the caller from the referenced row
        notes.append(f"vocab_size is empty in the reference CSV (tokenizer-dependent); the GPT-2 "
                     f"BPE vocabulary of the '{VOCAB_FROM_ROW[name]}' row is used")
    max_seq = to_int(row["max_position_embeddings"])
    if max_seq is None:
        max_seq = context_tokens(row["context_length_published"])
        need(max_seq, name, "context_length_published", row["context_length_published"])
        notes.append(f"max_seq_len from context_length_published "
                     f"'{row['context_length_published']}' (max_position_embeddings not "
                     "published)")

    if name.startswith("Grok-1"):
        unmodelled.append(unm("embedding_multipliers", "none",
                              "embedding_multiplier_scale 78.38 and output_multiplier_scale "
                              "0.577: scalar multiplies"))

    out.update({
        "layers": to_int(row["num_layers"]),
        "hidden": to_int(row["hidden_size"]),
        "ffn": to_int(row["ffn_hidden_size"]) or 0,
        "vocab": vocab,
        "mlp": mlp,
        "norm": out_norm,
        "norms_per_layer": norms_per_layer,
        "linear_bias": bias_all,
        "tied_embeddings": tied == "true",
        "learned_positions": learned_positions,
        "max_seq_len": max_seq,
        "attention": att,
    })
    if moe:
        out["moe"] = moe
    return out, unmodelled, notes


def interpret_hybrid(row, vocab_row):
    """A Nemotron-H / Nemotron 3 row: blocks from layer_pattern, Mamba-2 from the mamba_* columns,
    squared-ReLU MLP / MoE, GQA without position encoding."""
    name = row["model"]
    unmodelled, notes = [], []
    pattern = row["layer_pattern"]
    need(re.fullmatch(r"[M*\-E]+", pattern), name, "layer_pattern", pattern)
    layers = to_int(row["num_layers"])
    need(len(pattern) == layers, name, "layer_pattern", pattern)
    act = row["activation"]
    need(act.startswith("Squared ReLU (relu2)") and "non-gated" in act, name, "activation", act)
    unmodelled.append(unm("activation", "none", f"activation function '{act}'; the matmul count "
                          "(plain MLP) is modelled, the element-wise function is not"))
    norm = row["norm_type"]
    need(norm.startswith("RMSNorm (pre-norm, one norm per block)"), name, "norm_type", norm)
    variant = row["attention_variant"]
    need(variant.startswith("GQA"), name, "attention_variant", variant)
    need(row["qk_norm"].startswith("none"), name, "qk_norm", row["qk_norm"])
    need(row["sliding_window"].startswith("none"), name, "sliding_window", row["sliding_window"])
    pos = row["position_embedding"]
    need(pos.startswith("none (NoPE"), name, "position_embedding", pos)
    unmodelled.append(unm("position_encoding", "none", pos))
    need(row["attention_sinks"].startswith("none"), name, "attention_sinks", row["attention_sinks"])
    tied = row["tied_embeddings"]
    need(tied in ("true", "false"), name, "tied_embeddings", tied)
    att = {"kind": "gqa", "heads": to_int(row["num_attention_heads"]),
           "kv_heads": to_int(row["num_kv_heads"]), "head_dim": to_int(row["head_dim"]),
           "qkv_bias": False, "qk_norm": False}
    heads = to_int(row["mamba_num_heads"])
    mamba = {"heads": heads, "head_dim": to_int(row["mamba_head_dim"]),
             "state": to_int(row["mamba_d_state"]), "groups": to_int(row["mamba_n_groups"]),
             "conv_kernel": to_int(row["mamba_conv_kernel"]),
             "chunk": to_int(row["mamba_chunk_size"])}
    d_inner = heads * mamba["head_dim"]
    notes.append(f"Mamba-2 d_inner = mamba_num_heads x mamba_head_dim = {d_inner} (Megatron-Core "
                 f"MambaMixer); mamba_expand {row['mamba_expand']} is not used")
    vocab = to_int(row["vocab_size"])
    if vocab is None:
        vocab = to_int(vocab_row["vocab_size"])
        notes.append(f"vocab_size is empty in the reference CSV; the Nemotron-H family's "
                     f"vocabulary {vocab} of the '{vocab_row['model']}' row is used")
    max_seq = to_int(row["max_position_embeddings"])
    if max_seq is None:
        max_seq = context_tokens(row["context_length_published"].split(" ")[0])
        need(max_seq, name, "context_length_published", row["context_length_published"])
        notes.append(f"max_seq_len from context_length_published "
                     f"'{row['context_length_published']}' (max_position_embeddings not "
                     "published)")
    out = {
        "layers": layers,
        "hidden": to_int(row["hidden_size"]),
        "ffn": to_int(row["ffn_hidden_size"]) if "-" in pattern else 0,
        "vocab": vocab,
        "mlp": "plain",
        "norm": "rmsnorm",
        "norms_per_layer": 2,
        "linear_bias": False,
        "tied_embeddings": tied == "true",
        "learned_positions": False,
        "max_seq_len": max_seq,
        "attention": att,
    }
    experts = to_int(row["num_experts"]) or 0
    need(("E" in pattern) == (experts > 0), name, "num_experts", row["num_experts"])
    if experts:
        shared = to_int(row["num_shared_experts"]) or 0
        shared_ffn = to_int(row["shared_expert_ffn_hidden_size"]) or 0
        # Megatron's moe_shared_expert_intermediate_size is the total width of the shared
        # experts, run as one MLP: one shared expert of that width.
        out["moe"] = {"experts": experts, "shared_experts": 1 if shared_ffn else 0,
                      "top_k": to_int(row["top_k"]),
                      "expert_ffn": to_int(row["moe_ffn_hidden_size"]),
                      "shared_expert_ffn": shared_ffn, "first_k_dense": 0, "layer_freq": 1}
        pat = row["moe_layer_pattern"]
        if "LatentMoE" in pat:
            lat = re.search(r"-> latent (\d+)", pat)
            need(lat, name, "moe_layer_pattern", pat)
            need("router and shared expert" in pat or "shared expert" in pat, name,
                 "moe_layer_pattern", pat)
            out["moe"]["latent"] = int(lat.group(1))
            notes.append(f"LatentMoE: moe.latent {lat.group(1)} (Megatron-Core moe_latent_size; "
                         "fc1_latent_proj / fc2_latent_proj around the routed experts, counted "
                         "with the router)")
        if shared > 1:
            notes.append(f"{shared} shared experts of total width {shared_ffn} "
                         "(Megatron moe_shared_expert_intermediate_size) modelled as one shared "
                         "MLP of that width: the same parameters and GEMMs")
        router = row["router_score_func"]
        unmodelled.append(unm("router_scoring", "none", f"{router}; routing statistics are "
                              "modelled in moe/, the router GEMM's parameters are counted"))
        if "expert bias" in router:
            unmodelled.append(unm("router_expert_bias", "small",
                                  f"{experts} selection-bias values per MoE layer "
                                  "(aux-loss-free balancing), not trained by gradient"))
    out["blocks"] = pattern
    out["mamba"] = mamba
    return out, unmodelled, notes


def two_block_model(row, layers, ffn, att, moe, blocks, gdn):
    """The model of a linear-attention MoE row whose layers are written as two blocks each
    (interpret_gdn, interpret_kda): SwiGLU MLPs, one RMSNorm per block, no biases, no learned
    positions; the other numbers from the row's columns, the typed parts as the caller built
    them."""
    return {
        "layers": 2 * layers,
        "hidden": to_int(row["hidden_size"]),
        "ffn": ffn,
        "vocab": to_int(row["vocab_size"]),
        "mlp": "gated",
        "norm": "rmsnorm",
        "norms_per_layer": 2,
        "linear_bias": False,
        "tied_embeddings": row["tied_embeddings"] == "true",
        "learned_positions": False,
        "max_seq_len": to_int(row["max_position_embeddings"]),
        "attention": att,
        "moe": moe,
        "blocks": blocks,
        "gdn": gdn,
    }


def interpret_gdn(row):
    """Qwen3-Next: every layer is a token mixer (Gated DeltaNet, or gated full attention where
    (i+1) % full_attention_interval == 0) and an MoE, written as two blocks per layer (G or *,
    then E), each with its own RMSNorm; GDN dims from the linear_* columns."""
    name = row["model"]
    unmodelled, notes = [], []
    need(row["linear_attn_type"] == "gated_deltanet", name, "linear_attn_type",
         row["linear_attn_type"])
    layers = to_int(row["num_layers"])
    pat = row["layer_pattern"]
    m = re.fullmatch(r"layer_types = \['linear_attention','linear_attention','linear_attention',"
                     r"'full_attention'\] x (\d+) \(full_attention_interval 4\)", pat)
    need(m and int(m.group(1)) * 4 == layers, name, "layer_pattern", pat)
    need(row["activation"] == "SwiGLU", name, "activation", row["activation"])
    norm = row["norm_type"]
    need(norm.startswith("zero-centered RMSNorm"), name, "norm_type", norm)
    unmodelled.append(unm("zero_centered_norm", "none",
                          "zero-centred RMSNorm (weight stored as gamma - 1, weight-decayed): "
                          "same parameters and FLOPs"))
    variant = row["attention_variant"]
    need("gated full attention" in variant and "sigmoid output gate" in variant, name,
         "attention_variant", variant)
    need(row["qk_norm"].startswith("per-head RMSNorm on q,k"), name, "qk_norm", row["qk_norm"])
    unmodelled.append(unm("qk_l2_norm", "none", "L2 normalisation of q and k inside the Gated "
                          "DeltaNet kernel: parameter-free"))
    need(row["sliding_window"].startswith("none"), name, "sliding_window", row["sliding_window"])
    pos = row["position_embedding"]
    need("RoPE" in pos, name, "position_embedding", pos)
    unmodelled.append(unm("position_encoding", "none", pos))
    att = {"kind": "gqa", "heads": to_int(row["num_attention_heads"]),
           "kv_heads": to_int(row["num_kv_heads"]), "head_dim": to_int(row["head_dim"]),
           "qkv_bias": False, "qk_norm": True, "output_gate": True}
    need("chunk size 64" in row["notes"], name, "notes", "GDN chunk size")
    gdn = {"qk_heads": to_int(row["linear_num_key_heads"]),
           "v_heads": to_int(row["linear_num_value_heads"]),
           "qk_head_dim": to_int(row["linear_key_head_dim"]),
           "v_head_dim": to_int(row["linear_value_head_dim"]),
           "conv_kernel": to_int(row["linear_conv_kernel"]), "chunk": 64}
    need(row["moe_layer_pattern"].startswith("all 48 layers MoE"), name, "moe_layer_pattern",
         row["moe_layer_pattern"])
    experts = to_int(row["num_experts"])
    moe = {"experts": experts, "shared_experts": to_int(row["num_shared_experts"]),
           "top_k": to_int(row["top_k"]), "expert_ffn": to_int(row["moe_ffn_hidden_size"]),
           "shared_expert_ffn": to_int(row["shared_expert_ffn_hidden_size"]),
           "first_k_dense": 0, "layer_freq": 1, "shared_expert_gate": True}
    need("shared expert scaled by a sigmoid gate" in row["router_score_func"], name,
         "router_score_func", row["router_score_func"])
    unmodelled.append(unm("router_scoring", "none", f"{row['router_score_func']}; routing "
                          "statistics are modelled in moe/, the router GEMM's parameters are "
                          "counted"))
    tied = row["tied_embeddings"]
    need(tied in ("true", "false"), name, "tied_embeddings", tied)
    blocks = "".join(("*" if (i + 1) % 4 == 0 else "G") + "E" for i in range(layers))
    notes.append(f"{layers} layers written as {2 * layers} blocks (mixer, then MoE; one RMSNorm "
                 "each); gdn.chunk 64 is FLA's chunk_gated_delta_rule chunk (MCore); "
                 "ffn_hidden_size is unused (every layer is MoE)")
    return two_block_model(row, layers, 0, att, moe, blocks, gdn), unmodelled, notes


def interpret_kda(row):
    """Kimi Linear: every layer is a token mixer (Kimi Delta Attention, or MLA on the 1-based
    full_attn_layers) and an FFN (dense SwiGLU on the first first_k_dense_replace layers, else
    MoE), written as two blocks per layer (G or *, then - or E) as Qwen3-Next; KDA dims from the
    linear_* columns (one head count and dim for q, k, v)."""
    name = row["model"]
    unmodelled, notes = [], []
    need(row["linear_attn_type"].startswith("kda"), name, "linear_attn_type",
         row["linear_attn_type"])
    layers = to_int(row["num_layers"])
    pat = row["layer_pattern"]
    m = re.fullmatch(r"linear_attn_config: kda_layers=\[([\d,]+)\], full_attn_layers=\[([\d,]+)\]",
                     pat)
    need(m, name, "layer_pattern", pat)
    kda = [int(x) for x in m.group(1).split(",")]
    full = [int(x) for x in m.group(2).split(",")]
    need(sorted(kda + full) == list(range(1, layers + 1)), name, "layer_pattern", pat)
    need(row["activation"] == "SwiGLU", name, "activation", row["activation"])
    need(row["norm_type"].startswith("RMSNorm"), name, "norm_type", row["norm_type"])
    variant = row["attention_variant"]
    need("Kimi Delta Attention" in variant and "MLA (NoPE)" in variant, name,
         "attention_variant", variant)
    pos = row["position_embedding"]
    need(pos.startswith("none (NoPE"), name, "position_embedding", pos)
    unmodelled.append(unm("position_encoding", "none", pos))
    need(row["qk_norm"] == "", name, "qk_norm", row["qk_norm"])
    need(row["sliding_window"].startswith("none"), name, "sliding_window", row["sliding_window"])
    heads = to_int(row["linear_num_key_heads"])
    need(heads == to_int(row["linear_num_value_heads"]), name, "linear_num_value_heads",
         row["linear_num_value_heads"])
    need(row["linear_key_head_dim"] == row["linear_value_head_dim"], name,
         "linear_value_head_dim", row["linear_value_head_dim"])
    need("chunk size 64" in row["notes"], name, "notes", "KDA chunk size")
    gdn = {"qk_heads": heads, "v_heads": heads,
           "qk_head_dim": to_int(row["linear_key_head_dim"]),
           "v_head_dim": to_int(row["linear_value_head_dim"]),
           "conv_kernel": to_int(row["linear_conv_kernel"]), "chunk": 64, "kda": True}
    att = {"kind": "mla", "heads": to_int(row["num_attention_heads"]),
           "kv_heads": to_int(row["num_kv_heads"]), "head_dim": to_int(row["v_head_dim"]),
           "qkv_bias": False, "qk_norm": False,
           "q_lora_rank": to_int(row["q_lora_rank"]) or 0,
           "kv_lora_rank": to_int(row["kv_lora_rank"]),
           "qk_nope_head_dim": to_int(row["qk_nope_head_dim"]),
           "qk_rope_head_dim": to_int(row["qk_rope_head_dim"]),
           "v_head_dim": to_int(row["v_head_dim"])}
    first_dense = to_int(row["first_k_dense_replace"]) or 0
    need(row["moe_layer_pattern"].startswith(f"layer 1 dense") and first_dense == 1, name,
         "moe_layer_pattern", row["moe_layer_pattern"])
    need((to_int(row["moe_layer_freq"]) or 1) == 1, name, "moe_layer_freq", row["moe_layer_freq"])
    experts = to_int(row["num_experts"])
    shared = to_int(row["num_shared_experts"]) or 0
    expert_ffn = to_int(row["moe_ffn_hidden_size"])
    shared_ffn = to_int(row["shared_expert_ffn_hidden_size"])
    if shared and shared_ffn is None:
        shared_ffn = expert_ffn
        notes.append(f"shared_expert_ffn_hidden_size is empty in the reference CSV: each of the "
                     f"{shared} shared experts is moe_intermediate_size ({expert_ffn}) wide, the "
                     "Kimi / DeepSeek config convention (num_shared_experts x "
                     "moe_intermediate_size)")
    moe = {"experts": experts, "shared_experts": shared, "top_k": to_int(row["top_k"]),
           "expert_ffn": expert_ffn, "shared_expert_ffn": shared_ffn if shared else 0,
           "first_k_dense": 0, "layer_freq": 1}
    unmodelled.append(unm("router_scoring", "none", f"{row['router_score_func']}; routing "
                          "statistics are modelled in moe/, the router GEMM's parameters are "
                          "counted"))
    tied = row["tied_embeddings"]
    need(tied in ("true", "false"), name, "tied_embeddings", tied)
    blocks = "".join(("G" if i + 1 in kda else "*") + ("-" if i < first_dense else "E")
                     for i in range(layers))
    notes.append(f"{layers} layers written as {2 * layers} blocks (mixer, then FFN; one RMSNorm "
                 "each); gdn.kda: Kimi Delta Attention (low-rank f / g projections, per-channel "
                 "decay); gdn.chunk 64 is FLA's chunk_kda chunk")
    out = two_block_model(row, layers, to_int(row["ffn_hidden_size"]), att, moe, blocks, gdn)
    return out, unmodelled, notes


def interpret_dsa(row):
    """DeepSeek-V3.2-Exp: DeepSeek-V3 (interpret()) with DeepSeek sparse attention in every
    layer: top-k and the lightning indexer from the sparse_attn_* columns."""
    name = row["model"]
    pat = row["attention_layer_pattern"]
    need(re.fullmatch(r"all \d+ layers MLA\+DSA", pat), name, "attention_layer_pattern", pat)
    plain = dict(row)
    plain["attention_layer_pattern"] = "all layers"
    out, unmodelled, notes = interpret(plain)
    need(out["attention"]["kind"] == "mla", name, "attention_variant", row["attention_variant"])
    out["attention"]["sparse_topk"] = to_int(row["sparse_attn_topk"])
    out["attention"]["indexer_heads"] = to_int(row["sparse_attn_indexer_heads"])
    out["attention"]["indexer_head_dim"] = to_int(row["sparse_attn_indexer_head_dim"])
    unmodelled.append(unm("indexer_rotation_fp8", "none",
                          "the indexer's Hadamard rotation, partial RoPE and FP8 casts of q / k: "
                          "element-wise"))
    notes.append("DeepSeek sparse attention in every layer (attention.sparse_topk, indexer_*); "
                 "the indexer's key LayerNorm is counted with its parameters")
    return out, unmodelled, notes


def interpret_v4(row):
    """DeepSeek-V4: attention.kind "shared_kv" (one KV head, q LoRA, grouped low-rank output,
    a sink logit per head), a sliding window on every layer, per-layer compress_ratios (from
    the layer_pattern column; ratio 4 = CSA with the lightning indexer of the sparse_attn_*
    columns, 128 = HCA), mHC residual streams (the notes column), every layer MoE with the
    first ones hash-routed (moe_layer_pattern)."""
    name = row["model"]
    variant = row["attention_variant"]
    m = re.match(r"shared-KV MQA \(1 KV head of dim (\d+), no kv LoRA\), q LoRA (\d+), grouped "
                 r"low-rank output projection \(o_groups (\d+), o_lora_rank (\d+)\)", variant)
    need(m, name, "attention_variant", variant)
    need(to_int(m.group(1)) == to_int(row["head_dim"]) and
         to_int(m.group(2)) == to_int(row["q_lora_rank"]), name, "attention_variant", variant)
    csa = re.search(r"CSA \(compress ratio (\d+) \+ lightning indexer top-(\d+)\)", variant)
    need(csa and to_int(csa.group(2)) == to_int(row["sparse_attn_topk"]), name,
         "attention_variant", variant)
    layers = to_int(row["num_layers"])
    mtp = to_int(row["mtp_layers"]) or 0
    lp = re.match(r"compress_ratios=\[([\d,]+)\] \((\d+) layers \+ MTP;", row["layer_pattern"])
    need(lp, name, "layer_pattern", row["layer_pattern"])
    ratios = [int(x) for x in lp.group(1).split(",")]
    need(len(ratios) == layers + mtp and to_int(lp.group(2)) == layers, name, "layer_pattern",
         row["layer_pattern"])
    sw = re.fullmatch(r"(\d+) \(every layer\)", row["sliding_window"])
    need(sw, name, "sliding_window", row["sliding_window"])
    att = {"kind": "shared_kv", "heads": to_int(row["num_attention_heads"]),
           "kv_heads": to_int(row["num_kv_heads"]), "head_dim": to_int(row["head_dim"]),
           "q_lora_rank": to_int(row["q_lora_rank"]),
           "qk_rope_head_dim": to_int(row["qk_rope_head_dim"]),
           "o_groups": to_int(m.group(3)), "o_lora_rank": to_int(m.group(4)),
           # DeepseekV4Attention.sinks (transformers modeling_deepseek_v4.py, the source_url's
           # model folder): one learned logit per head; the CSV has no column for it.
           "sinks": True,
           "qkv_bias": False, "qk_norm": False,
           "sparse_topk": to_int(row["sparse_attn_topk"]),
           "indexer_heads": to_int(row["sparse_attn_indexer_heads"]),
           "indexer_head_dim": to_int(row["sparse_attn_indexer_head_dim"]),
           "sliding_window": int(sw.group(1)), "window_kind": "sliding",
           "window_pattern": 1, "window_layers": 1,
           "compress_ratios": ratios, "csa_ratio": to_int(csa.group(1))}
    need(row["qk_norm"] == "RMSNorm on q latent and kv", name, "qk_norm", row["qk_norm"])
    hc = re.search(r"hc_mult (\d+) parallel residual streams mixed by Sinkhorn-normalized "
                   r"matrices, (\d+) iterations", row["notes"])
    need(hc, name, "notes", row["notes"])
    pat = row["moe_layer_pattern"]
    hm = re.match(r"all (\d+) layers MoE; first (\d+) use hash routing", pat)
    need(hm and to_int(hm.group(1)) == layers, name, "moe_layer_pattern", pat)
    moe = {"experts": to_int(row["num_experts"]),
           "shared_experts": to_int(row["num_shared_experts"]),
           "top_k": to_int(row["top_k"]), "expert_ffn": to_int(row["moe_ffn_hidden_size"]),
           "shared_expert_ffn": to_int(row["shared_expert_ffn_hidden_size"]),
           "first_k_dense": to_int(row["first_k_dense_replace"]),
           "layer_freq": to_int(row["moe_layer_freq"]), "hash_layers": to_int(hm.group(2))}
    need(row["activation"].startswith("SwiGLU"), name, "activation", row["activation"])
    tied = row["tied_embeddings"]
    need(tied in ("true", "false"), name, "tied_embeddings", tied)
    unmodelled = [
        unm("router_scoring", "none", f"{row['router_score_func']}; routing statistics are "
            "modelled in moe/, the router GEMM's parameters are counted"),
        unm("hash_routing", "none",
            f"{pat}: the table is an integer buffer, not a parameter; the router GEMM still "
            "weights the chosen experts"),
        unm("activation", "none", row["activation"]),
        unm("position_encoding", "none", row["position_embedding"]),
        unm("compressor_pooling", "none",
            "the compressors' softmax pooling over each window, RoPE and the causal masks of "
            "compressed entries: element-wise"),
        unm("mhc_mixing", "small",
            "mHC's Sinkhorn-Knopp iterations and the n-stream collapse / expand: element-wise; "
            "its projections are counted as parameters, not in Megatron-Bridge's model FLOPs"),
    ]
    notes = ["attention.kind shared_kv: DeepSeek-V4's shared-KV MQA; compress_ratios from the "
             "layer_pattern column (decoder layers, then MTP); hyper_connections from the notes "
             "column; the sinks (one per head) from transformers' DeepseekV4Attention"]
    out = {
        "layers": layers,
        "hidden": to_int(row["hidden_size"]),
        "ffn": 0,
        "vocab": to_int(row["vocab_size"]),
        "mlp": "gated",
        "norm": "rmsnorm",
        "norms_per_layer": 2,
        "linear_bias": False,
        "tied_embeddings": tied == "true",
        "learned_positions": False,
        "max_seq_len": to_int(row["max_position_embeddings"]),
        "attention": att,
        "moe": moe,
        "hyper_connections": {"streams": to_int(hc.group(1)),
                              "sinkhorn_iters": to_int(hc.group(2))},
    }
    return out, unmodelled, notes


def active_number(s):
    """'3.2B (3.6B incl. embeddings)' -> the figure including embeddings, as active_params counts;
    '12.7B (12.1B excl. embeddings)' -> 12.7B, likewise."""
    m = re.fullmatch(r"[\d.]+[BT] \(([\d.]+[BT]) incl\. embeddings\)", s.strip())
    if m:
        return params_number(m.group(1))
    m = re.fullmatch(r"([\d.]+[BT]) \([\d.]+[BT] excl\. embeddings\)", s.strip())
    return params_number(m.group(1)) if m else params_number(s)


def build_hybrid(rows, models, seen_alias):
    by_name = {r["model"]: r for r in rows}
    for row in rows:
        name = row["model"]
        if name in HYBRID_SKIP:
            continue
        if name not in HYBRID_IDS:
            raise Unrecognised(f"unknown hybrid model row {name!r}: add it to HYBRID_IDS or "
                               "HYBRID_SKIP")
        mid, display, extra = HYBRID_IDS[name]
        if row["attention_variant"].startswith("shared-KV MQA"):
            body, unmodelled, notes = interpret_v4(row)
        elif row["linear_attn_type"].startswith("kda"):
            body, unmodelled, notes = interpret_kda(row)
        elif row["linear_attn_type"]:
            body, unmodelled, notes = interpret_gdn(row)
        elif row["sparse_attn_topk"]:
            body, unmodelled, notes = interpret_dsa(row)
        else:
            body, unmodelled, notes = interpret_hybrid(row, by_name[HYBRID_VOCAB_FROM_ROW])
        aliases = [a.strip() for a in row["perf_summary_model_names"].split(";") if a.strip()]
        aliases += extra
        for a in aliases:
            key = re.sub(r"[-_. ]", "", a.lower())
            if key in seen_alias and seen_alias[key] != mid:
                raise Unrecognised(f"alias {a!r} of {mid} collides with {seen_alias[key]}")
            seen_alias[key] = mid
        doc = {"id": mid, "display_name": display, "developer": row["developer"],
               "source": [u.strip() for u in
                          (row["source_url"] + " ; " + row["source2_url"]).split(" ; ")
                          if u.strip()],
               "aliases": aliases}
        doc.update(body)
        doc["mtp_layers"] = to_int(row["mtp_layers"]) or 0
        total = params_number(row["total_params_published"])
        active = active_number(row["active_params_published"])
        if total:
            doc["published_total_params"] = total
        elif row["total_params_published"]:
            notes.append(f"total_params_published '{row['total_params_published']}' is not a "
                         "number; not stored")
        if active:
            doc["published_active_params"] = active
        elif row["active_params_published"]:
            notes.append(f"active_params_published '{row['active_params_published']}' is not a "
                         "number; not stored")
        if active and "excl. embeddings" in row["active_params_published"]:
            notes.append(f"published active '{row['active_params_published']}': the figure "
                         "including embeddings is stored (active_params counts them)")
        if active and "incl. embeddings" in row["active_params_published"]:
            notes.append(f"published active '{row['active_params_published']}': the figure "
                         "including embeddings is stored (active_params counts them)")
        doc["unmodelled"] = unmodelled
        notes.append(row["notes"])
        doc["notes"] = " | ".join(n for n in notes if n)
        models[mid] = doc
    return models


def build(rows):
    by_name = {r["model"]: r for r in rows}
    models = {}
    seen_alias = {}
    for row in rows:
        name = row["model"]
        if name not in IDS:
            raise Unrecognised(f"unknown model row {name!r}: add it to IDS")
        mid, display, extra = IDS[name]
        body, unmodelled, notes = interpret(row)
        if body["vocab"] is None:
            body["vocab"] = to_int(by_name[VOCAB_FROM_ROW[name]]["vocab_size"])
        aliases = [a.strip() for a in row["perf_summary_model_names"].split(";") if a.strip()]
        aliases += extra
        for a in aliases:
            key = re.sub(r"[-_. ]", "", a.lower())
            if key in seen_alias and seen_alias[key] != mid:
                raise Unrecognised(f"alias {a!r} of {mid} collides with {seen_alias[key]}")
            seen_alias[key] = mid
        doc = {
            "id": mid,
            "display_name": display,
            "developer": row["developer"],
            "source": [u.strip() for u in
                       (row["source_url"] + " ; " + row["source2_url"]).split(" ; ") if u.strip()],
            "aliases": aliases,
        }
        doc.update(body)
        if row["nemo_perf_vocab_size"]:
            doc["benchmark_vocab"] = to_int(row["nemo_perf_vocab_size"])
        doc["mtp_layers"] = to_int(row["mtp_layers"]) or 0
        total = params_number(row["total_params_published"])
        active = params_number(row["active_params_published"])
        if total:
            doc["published_total_params"] = total
        if active:
            doc["published_active_params"] = active
        elif row["active_params_published"]:
            notes.append(f"active_params_published '{row['active_params_published']}' is not a "
                         "number; not stored")
        doc["unmodelled"] = unmodelled
        notes.append(row["notes"])
        doc["notes"] = " | ".join(n for n in notes if n)
        models[mid] = doc
    return models, seen_alias


def render(doc):
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--csv", default=DEFAULT_CSV)
    ap.add_argument("--hybrid-csv", default=DEFAULT_HYBRID_CSV)
    ap.add_argument("--out", default=os.path.join(HERE, "models"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    with open(args.csv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with open(args.hybrid_csv, newline="", encoding="utf-8") as f:
        hybrid_rows = list(csv.DictReader(f))
    try:
        models, seen_alias = build(rows)
        build_hybrid(hybrid_rows, models, seen_alias)
    except Unrecognised as e:
        print(f"import_models.py: {e}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    differ = []
    for mid in sorted(models):
        path = os.path.join(args.out, mid + ".json")
        text = render(models[mid])
        if args.check:
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
            if old != text:
                differ.append(path)
        else:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
    if args.check:
        extra = sorted(set(os.listdir(args.out)) - {m + ".json" for m in models})
        for p in differ + extra:
            print(f"out of date: {p}", file=sys.stderr)
        return 1 if differ or extra else 0
    print(f"wrote {len(models)} models to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
