#!/usr/bin/python3
"""Import the kernel-level rows of calibration/sources/*.csv into calibration/kernels/.

Writes four tables in one column format (documented in calibration/KERNELS.md), which the CUDA
harness also writes:

  gemm.csv          dense / batched GEMM (XLA per-shape tables, MAMF, vLLM SM100, DeepGEMM) and
                    Transformer Engine's per-layer GEMM sums in every precision (sources/)
  grouped_gemm.csv  grouped GEMM for MoE experts (torchao on B200, DeepGEMM on H800)
  attention.csv     fused attention fwd / bwd (cuDNN SDPA; FA2 rows kept with impl=fa2)
  memory.csv        memory-bound kernels: RMSNorm / LayerNorm, softmax, FP8 / MXFP8 casts
  ssm.csv           state-space / linear-attention kernels from sources/ssm-kernels.csv (Mamba-2
                    SSD chunk scan, Gated DeltaNet chunk kernel, TileLang sparse MLA rates); that
                    file feeds only this table

Every row keeps the GPU label, dtype and URL of its source. Derived values say so in `time_from`.
The main table is calibration/sources/kernel-timings.csv (the project's published kernel
timings, copied into the repository); rows published elsewhere live beside it in
calibration/sources/*.csv, in the same column format with their source_url. `--reference PATH`
reads another kernel-timings.csv in place of the committed one (to refresh from a newer copy).
Usage: /usr/bin/python3 calibration/import_kernels.py [--reference PATH] [--sources DIR] [--out DIR]
The output is a pure function of the input file (fixed row order, fixed number formatting).
"""

import argparse
import csv
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE_NAME = "kernel-timings.csv"
SSM_NAME = "ssm-kernels.csv"  # read only by ssm_rows (its FLA attention baselines stay out)
DEFAULT_REF = os.path.join(HERE, "sources", REFERENCE_NAME)

COLUMNS = [
    "gpu", "kernel", "dtype", "impl", "batch", "m", "n", "k", "seq_q", "seq_kv", "heads",
    "kv_heads", "head_dim_qk", "head_dim_v", "causal", "window", "bytes", "flops", "time_us",
    "achieved_tflops", "achieved_gbps", "time_from", "source_gpu", "source_dtype", "source_url",
    "notes",
]


def fmt(x):
    """Fixed formatting: integers without a decimal point, floats with 7 significant digits."""
    if x is None or x == "":
        return ""
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if x == int(x) and abs(x) < 1e15:
            return str(int(x))
        return "%.7g" % x
    return str(x)


def num(s):
    s = (s or "").strip()
    if s == "":
        return None
    v = float(s)
    return int(v) if v == int(v) and "." not in s and "e" not in s.lower() else v


def norm_gpu(label):
    """Maps a source GPU label to a GpuSpec::model name (None = not one we simulate)."""
    if "XLA key sm_100_B200" in label:
        return "B200"
    if "XLA key sm_90" in label:
        return "H100"
    if label.startswith("SM100 (B200-class)"):
        return "B200"
    for name in ("GB300", "GB200", "B300", "B200", "H200", "H800", "H100"):
        if label.startswith(name):
            return name
    return None


def norm_dtype(d):
    d = d.strip()
    if d.startswith("fp32"):
        return "fp32"
    if d.startswith("bf16->mxfp8") or d == "mxfp8":
        return "mxfp8"
    if d.startswith("bf16->fp8"):
        return "fp8"
    if d.startswith("fp8_e4m3 x fp8_e5m2"):
        return "fp8_e4m3_e5m2"
    if d.startswith("fp8_e5m2 x fp8_e4m3"):
        return "fp8_e5m2_e4m3"
    if d.startswith("fp8_e4m3") or d.startswith("fp8 "):
        return "fp8"
    if d in ("bf16", "fp16", "nvfp4"):
        return d
    return d


def blank():
    return {c: "" for c in COLUMNS}


def gemm_impl(r):
    n = r["notes"]
    if "XLA" in r["gpu"]:
        return "xla"
    if n.startswith("MAMF"):
        return "mamf"
    if "DeepGEMM" in n:
        return "deepgemm"
    if "cutlass_profiler" in n:
        return "cutlass_profiler"
    if "vLLM" in n or "vllm" in r["source_url"]:
        if n.startswith("torch bf16"):
            return "torch"
        if "incl. activation quantization" in n:
            return "cutlass_with_quant"
        return "cutlass"
    if "ThunderKittens" in n:
        return "thunderkittens"
    return "other"


def gemm_rows(src):
    out = []
    for r in src:
        if r["kernel"] not in ("gemm", "batched_gemm"):
            continue
        gpu = norm_gpu(r["gpu"])
        if gpu is None or r["m"] == "" or r["achieved_tflops"] == "":
            continue  # headline numbers without a shape cannot calibrate a shape model
        impl = gemm_impl(r)
        if impl == "thunderkittens" and "full" not in r["notes"]:
            continue  # educational kernels (levels 06-09) are not what training runs
        m, n, k = num(r["m"]), num(r["n"]), num(r["k"])
        b = num(r["batch"]) or 1
        tflops = float(r["achieved_tflops"])
        flops = 2 * b * m * n * k
        o = blank()
        o.update(gpu=gpu, kernel="gemm", dtype=norm_dtype(r["dtype"]), impl=impl, batch=b, m=m,
                 n=n, k=k, flops=flops, achieved_tflops=tflops, source_gpu=r["gpu"],
                 source_dtype=r["dtype"], source_url=r["source_url"], notes=r["notes"])
        if r["time_us"]:
            o["time_us"] = float(r["time_us"])
            o["time_from"] = "measured"
        else:
            o["time_us"] = flops / (tflops * 1e12) * 1e6
            o["time_from"] = "flops/tflops"
        if r["achieved_gbps"]:
            o["achieved_gbps"] = float(r["achieved_gbps"])
        out.append(o)
    return out


def layer_dtype_impl(r):
    """dtype and impl of a Transformer Engine benchmark_gemm.py layer row (calibration/sources)."""
    d = r["dtype"]
    mode = "te_prequant" if "pre-quantized mode" in r["notes"] else "te_autocast"
    if d.startswith("fp8 (per-tensor, delayed"):
        return "fp8", mode + "_delayed"
    if d.startswith("fp8 (per-tensor"):
        return "fp8", mode
    if "block scaling" in d:
        return "fp8_block", mode
    return norm_dtype(d), mode


def layer_rows(src):
    """Per-layer sums of a transformer layer's GEMMs (gemm_layer, gemm_layer_{fprop,dgrad,wgrad}):
    the same shapes timed in every precision, which is what fixes format-to-format ratios."""
    out = []
    for r in src:
        if not r["kernel"].startswith("gemm_layer"):
            continue
        gpu = norm_gpu(r["gpu"])
        if gpu is None:
            continue
        dtype, impl = layer_dtype_impl(r)
        m, n, k = num(r["m"]), num(r["n"]), num(r["k"])
        # Fprop GEMMs of one layer: QKV (k x 3k), attn out (k x k), MLP up (k x n), down (n x k).
        per_pass = 2 * m * (k * 3 * k + k * k + 2 * k * n)
        flops = per_pass * (3 if r["kernel"] == "gemm_layer" else 1)
        t = float(r["time_us"])
        o = blank()
        o.update(gpu=gpu, kernel=r["kernel"], dtype=dtype, impl=impl, batch=1, m=m, n=n, k=k,
                 flops=flops, time_us=t, achieved_tflops=flops / (t * 1e-6) / 1e12,
                 time_from="measured", source_gpu=r["gpu"], source_dtype=r["dtype"],
                 source_url=r["source_url"], notes=r["notes"])
        out.append(o)
    return out


def grouped_rows(src):
    out = []
    for r in src:
        if not r["kernel"].startswith("grouped_gemm"):
            continue
        gpu = norm_gpu(r["gpu"])
        if gpu is None:
            continue
        m, n, k = num(r["m"]), num(r["n"]), num(r["k"])
        g = num(r["batch"]) or 1
        notes = r["notes"]
        # Which m the source printed: torchao rows print total tokens; DeepGEMM M per group.
        m_total = m * g if "m=M per group" in notes else m
        passes = 3 if r["kernel"] == "grouped_gemm_fwd_bwd" else 1  # fwd + dgrad + wgrad
        flops = 2 * passes * m_total * n * k
        o = blank()
        kernel = r["kernel"]
        if "incl. quantization" in notes:
            kernel += "_incl_quant"  # not a GEMM-only time: excluded from the grouped factor
        o.update(gpu=gpu, kernel=kernel, dtype=norm_dtype(r["dtype"]),
                 impl="deepgemm" if "DeepGEMM" in notes or "DeepGEMM" in r["dtype"] else "torchao",
                 batch=g, m=m_total, n=n, k=k, flops=flops, source_gpu=r["gpu"],
                 source_dtype=r["dtype"], source_url=r["source_url"],
                 notes=("m = total rows over all groups; " + notes))
        if r["time_us"]:
            o["time_us"] = float(r["time_us"])
            o["achieved_tflops"] = flops / (o["time_us"] * 1e-6) / 1e12
            o["time_from"] = "measured"
        elif r["achieved_tflops"]:
            o["achieved_tflops"] = float(r["achieved_tflops"])
            o["time_us"] = flops / (o["achieved_tflops"] * 1e12) * 1e6
            o["time_from"] = "flops/tflops"
        else:
            continue
        out.append(o)
    return out


def attention_impl(notes):
    if "flash backend" in notes or "flash_attn package" in notes or "PyTorch SDPA (flash)" in notes:
        return "fa2"
    if "cuDNN" in notes or notes.startswith("cuDNN"):
        return "cudnn"
    return "other"


def kv_value(notes, key):
    m = re.search(key + r"=(\w+)", notes)
    return m.group(1) if m else None


def pairs(s_q, s_kv, causal, window):
    """Query-key pairs the source's TFLOP/s count covers (cuDNN convention: causal = s^2/2)."""
    if causal:
        if window and window < s_kv:
            return s_q * window - window * window / 2.0
        return s_q * s_kv / 2.0
    if window and window < s_kv:
        return s_q * window
    return s_q * s_kv


def attention_rows(src):
    out = []
    for r in src:
        if r["kernel"] not in ("attention_fwd", "attention_bwd"):
            continue
        gpu = norm_gpu(r["gpu"])
        if gpu not in ("B200", "GB200", "GB300", "H200") or r["seq_len"] == "":
            continue  # H100 / H800 rows are headline numbers without a shape
        notes = r["notes"]
        impl = attention_impl(notes)
        if kv_value(notes, "deterministic_bwd") == "True":
            impl += "_deterministic"  # slower deterministic dQ accumulation; not the default
        b, s, h, d = num(r["batch"]), num(r["seq_len"]), num(r["heads"]), num(r["head_dim"])
        kvh = int(kv_value(notes, "kv_heads") or h)
        dv = int(kv_value(notes, "head_dim_vo") or d)
        window = int(kv_value(notes, "sliding_window") or 0)
        causal = r["causal"] == "True"
        bwd = r["kernel"] == "attention_bwd"
        flops = 2.0 * b * h * pairs(s, s, causal, window) * (d + dv) * (2.5 if bwd else 1.0)
        tflops = float(r["achieved_tflops"])
        o = blank()
        o.update(gpu=gpu, kernel=r["kernel"], dtype=norm_dtype(r["dtype"]), impl=impl, batch=b,
                 seq_q=s, seq_kv=s, heads=h, kv_heads=kvh, head_dim_qk=d, head_dim_v=dv,
                 causal="1" if causal else "0", window=window, flops=flops,
                 achieved_tflops=tflops, source_gpu=r["gpu"], source_dtype=r["dtype"],
                 source_url=r["source_url"], notes=notes)
        if r["time_us"]:
            o["time_us"] = float(r["time_us"])
            o["time_from"] = "measured"
        else:
            o["time_us"] = flops / (tflops * 1e12) * 1e6
            o["time_from"] = "flops/tflops"
        out.append(o)
    return out


MEMORY_KERNELS = ("rms_norm_fwd", "rms_norm_bwd", "layer_norm_fwd", "layer_norm_bwd",
                  "softmax_fwd", "mxfp8_quant_cast", "mxfp8_quant_dim0", "mxfp8_quant_dim1",
                  "mxfp8_quant_3d", "fp8_blockwise_quant")


def memory_rows(src):
    out = []
    for r in src:
        if r["kernel"] not in MEMORY_KERNELS:
            continue
        gpu = norm_gpu(r["gpu"])
        if gpu is None:
            continue
        notes = r["notes"]
        m, n, k = num(r["m"]), num(r["n"]), num(r["k"])
        b = num(r["batch"]) or 1
        o = blank()
        impl = kv_value(notes, "backend") or ("quack" if "QuACK" in notes else
                                              "torch_compile" if "torch.compile" in notes else
                                              "triton" if "Triton" in notes or "triton" in notes else
                                              "cuda")
        o.update(gpu=gpu, kernel=r["kernel"], dtype=norm_dtype(r["dtype"]), impl=impl, batch=b,
                 m=m if m is not None else "", n=n, k=k if k is not None else "",
                 source_gpu=r["gpu"], source_dtype=r["dtype"], source_url=r["source_url"],
                 notes=notes)
        gbps = float(r["achieved_gbps"]) if r["achieved_gbps"] else None
        t = float(r["time_us"]) if r["time_us"] else None
        m_eff = m if m is not None else 1
        if "efficiency per source" in notes and gbps is None:
            # torchao MXFP8 quant rows: bytes = bf16 input read + fp8 output + E8M0 scale per 32.
            elems = b * m_eff * n
            nbytes = elems * 2 + elems * 1 + elems / 32.0
            gbps = nbytes / (t * 1e-6) / 1e9
            o["time_from"] = "measured; bytes = 2+1+1/32 per element"
        elif gbps is not None and t is not None:
            nbytes = gbps * 1e9 * t * 1e-6
            o["time_from"] = "measured; bytes = achieved_gbps*time"
        elif gbps is not None and r["kernel"] == "softmax_fwd" and m is not None:
            nbytes = 2.0 * 4 * m * n  # fp32 read + write
            t = nbytes / (gbps * 1e9) * 1e6
            o["time_from"] = "bytes/gbps; bytes = 2*4*m*n (fp32 in+out)"
        else:
            continue  # no size: cannot calibrate anything
        o["bytes"] = nbytes
        o["time_us"] = t
        o["achieved_gbps"] = gbps
        out.append(o)
    return out


SSM_KERNELS = ("mamba2_ssd_chunk_scan_fwd",)


def ssm_rows(src):
    """Mamba-2 SSD rows; flops by the source's formula, recomputed from the shape so that the
    table is self-consistent: 2*b*L*Q*h*p*0.5 + 2*b*L*h*p*N (chunk Q and state N from the notes).
    The causal_conv1d rows (a workstation GPU, not simulated) and the linear-attention rows (no
    layer of that kind is modelled yet) are left out."""
    out = []
    for r in src:
        if r["kernel"] not in SSM_KERNELS:
            continue
        gpu = norm_gpu(r["gpu"])
        if gpu is None:
            continue
        notes = r["notes"]
        state = int(re.search(r"d_state (\d+)", notes).group(1))
        chunk = int(re.search(r"chunk_size (\d+)", notes).group(1))
        groups = int(re.search(r"groups (\d+)", notes).group(1))
        b, L, h, p = num(r["batch"]), num(r["seq_len"]), num(r["heads"]), num(r["head_dim"])
        flops = 2.0 * b * L * chunk * h * p * 0.5 + 2.0 * b * L * h * p * state
        o = blank()
        o.update(gpu=gpu, kernel=r["kernel"], dtype=norm_dtype(r["dtype"].split(" ")[0]),
                 impl="tilelang", batch=b, m=state, n=chunk, k=groups, seq_q=L, seq_kv=L,
                 heads=h, kv_heads=h, head_dim_qk=p, head_dim_v=p, causal="1", window=0,
                 flops=flops, time_us=float(r["time_us"]),
                 achieved_tflops=float(r["achieved_tflops"]), time_from="measured",
                 source_gpu=r["gpu"], source_dtype=r["dtype"], source_url=r["source_url"],
                 notes="m = d_state, n = chunk_size, k = groups; " + notes)
        out.append(o)
    return out


GDN_KERNELS = ("gated_deltanet_fwd", "gated_deltanet_fwd_bwd")
GDN_CHUNK = 64  # FLA chunk_gated_delta_rule's chunk (the rows' kernels and Megatron-Core's)


def gdn_impl(notes):
    """Which implementation a Gated DeltaNet row times: FLA's Triton kernels (what Megatron-Core
    calls; the Paddle rows are a port of them) or FlashInfer's CuTe-DSL prefill."""
    if notes.startswith("FLA") or "fla.ops" in notes or "port of FLA" in notes:
        return "fla"
    if "FlashInfer" in notes or "CuTe-DSL" in notes:
        return "flashinfer"
    return None


def gdn_rows(src):
    """Gated DeltaNet chunk kernel rows with a full shape (batch, seq, v heads, head dim; rows
    without a head dim have no size and are left out). flops: the forward count of
    model.h gdn_chunk_flops_per_token, heads * (6*d*d + 1.5*C*2d + C*C) per token with C = 64,
    recomputed from the shape (for fwd_bwd rows too: the forward's count, so that the pair gives
    the backward's time ratio). h_qk < h_v rows (FlashInfer, Qwen3.5 at TP8) count the v heads,
    as the kernel runs q and k repeated to them."""
    out = []
    for r in src:
        if r["kernel"] not in GDN_KERNELS:
            continue
        gpu = norm_gpu(r["gpu"])
        impl = gdn_impl(r["notes"])
        if gpu is None or impl is None or not r["head_dim"] or not r["time_us"]:
            continue
        b, L, h, d = num(r["batch"]), num(r["seq_len"]), num(r["heads"]), num(r["head_dim"])
        C = GDN_CHUNK
        # varlen rows: seq_len is the total token count (their notes say so)
        tokens = L if "total tokens" in r["notes"] else b * L
        flops = float(tokens) * h * (6.0 * d * d + 1.5 * C * 2 * d + C * C)
        t = float(r["time_us"])
        o = blank()
        o.update(gpu=gpu, kernel=r["kernel"], dtype=norm_dtype(r["dtype"].split(" ")[0]),
                 impl=impl, batch=b, n=C, seq_q=L, seq_kv=L, heads=h, kv_heads=h,
                 head_dim_qk=d, head_dim_v=d, causal="1", window=0, flops=flops, time_us=t,
                 achieved_tflops=flops / (t * 1e-6) / 1e12, time_from="measured",
                 source_gpu=r["gpu"], source_dtype=r["dtype"], source_url=r["source_url"],
                 notes="n = chunk; flops = the forward chunk-kernel count (fwd_bwd rows too); " +
                 r["notes"])
        out.append(o)
    return out


SPARSE_MLA_KERNELS = ("sparse_mla_fwd", "sparse_mla_bwd")


def sparse_mla_rows(src):
    """TileLang sparse MLA training kernels (forward, backward): only an approximate achieved
    TFLOP/s each, at the test shape their notes give (B=1, S=4096, H=128 fwd / 64 bwd, top-k
    2048, d_qk 576, d_v 512). flops: the forward's 2*S*H*k*(d_qk + d_v); the backward's 2.5x that
    (scores recomputed, dP, dQ, dK, dV: five products for the forward's two, FlashAttention's
    convention); time = flops / rate (derived, the rate is what fleetsim uses). The decode rows
    are not training."""
    out = []
    for r in src:
        if r["kernel"] not in SPARSE_MLA_KERNELS:
            continue
        gpu = norm_gpu(r["gpu"])
        if gpu is None or not r["achieved_tflops"]:
            continue
        notes = r["notes"]
        S = int(re.search(r"S=(\d+)", notes).group(1))
        H = int(re.search(r"H=(\d+)", notes).group(1))
        k = int(re.search(r"topk=(\d+)", notes).group(1))
        flops = 2.0 * S * H * k * (576 + 512) * (2.5 if r["kernel"].endswith("bwd") else 1.0)
        rate = float(r["achieved_tflops"])
        o = blank()
        o.update(gpu=gpu, kernel=r["kernel"], dtype=norm_dtype(r["dtype"]), impl="tilelang",
                 batch=1, k=k, seq_q=S, seq_kv=S, heads=H, kv_heads=1, head_dim_qk=576,
                 head_dim_v=512, causal="1", window=0, flops=flops,
                 time_us=flops / (rate * 1e12) * 1e6, achieved_tflops=rate,
                 time_from="derived: flops / the stated rate", source_gpu=r["gpu"],
                 source_dtype=r["dtype"], source_url=r["source_url"],
                 notes="k = top-k; approximate TFLOP/s (README) at the test shape; flops "
                 "2*S*H*k*(576 + 512), x2.5 for bwd; " + notes)
        out.append(o)
    return out


def write(path, rows):
    with open(path, "w", newline="") as f:
        f.write("# fleetsim kernel calibration table; format: calibration/KERNELS.md\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([fmt(r[c]) for c in COLUMNS])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", default=DEFAULT_REF)
    ap.add_argument("--out", default=os.path.join(HERE, "kernels"))
    ap.add_argument("--sources", default=os.path.join(HERE, "sources"),
                    help="folder of further published rows in the reference's column format "
                    "(every row keeps its source_url); read in file-name order")
    a = ap.parse_args()
    with open(a.reference, newline="") as f:
        src = list(csv.DictReader(f))
    ssm_src = []
    if os.path.isdir(a.sources):
        for name in sorted(os.listdir(a.sources)):
            if name.endswith(".csv") and name != REFERENCE_NAME:
                with open(os.path.join(a.sources, name), newline="") as f:
                    (ssm_src if name == SSM_NAME else src).extend(csv.DictReader(f))
    os.makedirs(a.out, exist_ok=True)
    tables = {
        "gemm.csv": gemm_rows(src) + layer_rows(src),
        "grouped_gemm.csv": grouped_rows(src),
        "attention.csv": attention_rows(src),
        "memory.csv": memory_rows(src),
        "ssm.csv": ssm_rows(ssm_src) + gdn_rows(ssm_src) + sparse_mla_rows(ssm_src),
    }
    for name, rows in tables.items():
        write(os.path.join(a.out, name), rows)
        print("%s: %d rows" % (name, len(rows)), file=sys.stderr)


if __name__ == "__main__":
    main()
