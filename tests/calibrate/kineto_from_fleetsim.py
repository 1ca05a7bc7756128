#!/usr/bin/env python3
"""Round-trip input for `calibrate import-trace`: turns fleetsim's own Chrome trace of a training
scenario (`fleetsim run --trace`) into a Kineto trace, splitting each "layer forward" slice of the
first TP unit's compute stream into the kernels of a layer with their shapes (what fleetsim's
trace leaves out): RMSNorm, the QKV / output / FC1 / FC2 GEMMs, attention and SwiGLU. A slice's
time is divided in fixed shares (GEMMs by FLOPs); each kernel time is rounded to the nanosecond,
as Kineto writes it. Also writes EXPECTED: every kernel written, with its class, shape and time.

usage: kineto_from_fleetsim.py FLEETSIM_TRACE SCENARIO OUT_TRACE EXPECTED [--slices N]
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kineto import Trace  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DTYPE = {"bf16": ("c10::BFloat16", "aten::mm"), "fp8_cs": ("c10::Float8_e4m3fn", "aten::_scaled_mm"),
         "fp8": ("c10::Float8_e4m3fn", "aten::_scaled_mm")}


def layer_kernels(scen):
    w = scen["workload"]
    model = json.loads((ROOT / "workloads" / "models" / f"{w['model']}.json").read_text())
    par, batch = w["parallelism"], w["batch"]
    tp = par.get("tp", 1)
    h, f = model["hidden"], model["ffn"]
    a = model["attention"]
    heads, kv, hd = a["heads"], a["kv_heads"], a["head_dim"]
    tokens = batch.get("micro", 1) * batch["seq_len"]
    gemms = [("qkv", (heads + 2 * kv) * hd // tp, h), ("proj", h, heads * hd // tp),
             ("fc1", 2 * f // tp, h), ("fc2", h, f // tp)]
    return tokens, h, f // tp, heads // tp, kv // tp, hd, gemms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fleetsim_trace")
    ap.add_argument("scenario")
    ap.add_argument("out")
    ap.add_argument("expected")
    ap.add_argument("--slices", type=int, default=40)
    a = ap.parse_args()
    scen = json.loads(Path(a.scenario).read_text())
    prec = scen["workload"].get("precision", "bf16")
    gtype, gop = DTYPE[prec]
    tokens, h, f_tp, heads, kv, hd, gemms = layer_kernels(scen)
    flops = {name: 2 * tokens * n * k for name, n, k in gemms}
    total = sum(flops.values())
    ev = json.loads(Path(a.fleetsim_trace).read_text())["traceEvents"]
    pid0 = min(e["pid"] for e in ev if e.get("ph") == "X")
    slices = [e for e in ev if e.get("ph") == "X" and e["pid"] == pid0 and e.get("tid") == 1
              and e["name"] == "layer forward"][: a.slices]
    t = Trace(device="NVIDIA B200")
    expected = []
    host_base = 0.0
    for s in slices:
        d, gpu = s["dur"], s["ts"]
        # shares of the slice: norms 2 %, GEMMs 80 % by FLOPs, attention 12 %, SwiGLU 4 % (2 % idle)
        parts = [("rms_norm_fwd", None, 0.02)]
        parts += [("gemm", g, 0.80 * flops[g[0]] / total) for g in gemms[:2]]
        parts += [("attention_fwd", None, 0.12)]
        parts += [("gemm", gemms[2], 0.80 * flops["fc1"] / total), ("swiglu_fwd", None, 0.04),
                  ("gemm", gemms[3], 0.80 * flops["fc2"] / total)]
        host = max(host_base, gpu - 40.0)
        for cls, g, share in parts:
            kd = round(d * share, 3)
            if cls == "gemm":
                _, n, k = g
                dims = [[tokens, k], [k, n]]
                t.op(gop, host, 12.0, dims, [gtype, gtype])
                kname = "nvjet_tst_192x192_64x3_2x1_v_bz_coopB_TNN"
                expected.append({"cls": "gemm", "m": tokens, "n": n, "k": k, "time_us": kd})
            elif cls == "rms_norm_fwd":
                t.op("aten::rms_norm", host, 12.0, [[1, tokens, h], [h]])
                kname = "void at::native::rms_norm_kernel<c10::BFloat16>"
                expected.append({"cls": cls, "m": tokens, "n": h, "time_us": kd})
            elif cls == "swiglu_fwd":
                t.op("fused::swiglu", host, 12.0, [[tokens, 2 * f_tp]])
                kname = "swiglu_fwd_kernel_bf16"
                expected.append({"cls": cls, "m": tokens, "n": f_tp, "time_us": kd})
            else:
                t.op("aten::_scaled_dot_product_flash_attention", host, 12.0,
                     [[1, heads, tokens, hd], [1, kv, tokens, hd], [1, kv, tokens, hd]])
                kname = "cudnn_generated_fort_native_sdpa_sm100_flash_fprop"
                expected.append({"cls": cls, "time_us": kd})
            t.launch(host + 4.0, kname, round(gpu, 3), kd, launch_dur=3.0)
            host += 14.0
            gpu += kd
        host_base = host
    Path(a.out).write_text(t.dump() + "\n")
    Path(a.expected).write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
