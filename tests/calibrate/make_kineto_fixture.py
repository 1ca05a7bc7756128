#!/usr/bin/env python3
"""Writes tests/calibrate/traces/kineto-h100-small.json (a few hundred events, four profiler steps
of a toy transformer layer on an H100 in bf16) and its two broken variants: -truncated.json (cut
mid-file) and -no-shapes.json (profiled without record_shapes). Kernel durations are set here, so
the test knows every expected median (tests/calibrate/test_import_trace.sh).

Per step: forward GEMMs through aten::linear -> aten::addmm on a 2 x 2 grid of (n, k) at m = 4096
(times T_GEMM), backward dgrad (m 2048) / wgrad (k 2048) through MmBackward0 -> aten::mm (outside the grid), SDPA flash attention fwd /
bwd, RMSNorm fwd, an elementwise add, a fused SwiGLU, an fp16 GEMM (no fp16 calibration rows),
an NCCL all-reduce (record_param_comms) on its own stream, a device-to-device and a host-to-device
copy, and a kernel whose launch is missing (no correlation).
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kineto import Trace  # noqa: E402

OUT = Path(__file__).resolve().parent / "traces"
M = 4096
STEPS = 4
# (n, k) -> kernel time (us) in steps 0..3; the median of four is the mean of the middle two.
T_GEMM = {(4096, 4096): (210.0, 216.0, 212.0, 214.0), (4096, 8192): (420.0, 424.0, 430.0, 421.0),
          (8192, 4096): (415.0, 419.0, 417.0, 415.0), (8192, 8192): (830.0, 838.0, 834.0, 836.0)}


def build(shapes=True):
    t = Trace()
    ts = 0.0
    for step in range(STEPS):
        t0 = ts
        host = ts + 5

        def op(name, dims, types=None, dur=30.0, extra=None):
            nonlocal host
            a = t.op(name, host, dur, dims if shapes else None, types, extra)
            start = host
            host += dur + 2
            return start, a

        gpu = ts + 50
        # RMSNorm forward: x [2, 2048, 4096] bf16, weight [4096]
        s, _ = op("aten::rms_norm", [[2, 2048, 4096], [4096]])
        t.launch(s + 10, "void at::native::rms_norm_kernel<c10::BFloat16>", gpu, 30.0)
        gpu += 32
        for (n, k), times in T_GEMM.items():
            outer = t.op("aten::linear", host, 40, [[2, 2048, k], [n, k], [n]] if shapes else None)
            inner = t.op("aten::addmm", host + 5, 30, [[n], [M, k], [k, n]] if shapes else None)
            t.launch(host + 15, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                     gpu, times[step])
            host += 42
            gpu += times[step] + 3
        s, _ = op("aten::_scaled_dot_product_flash_attention",
                  [[2, 32, 2048, 128], [2, 8, 2048, 128], [2, 8, 2048, 128]])
        t.launch(s + 10, "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128>>",
                 gpu, 300.0 + step)
        gpu += 305
        s, _ = op("aten::add", [[2, 2048, 4096], [2, 2048, 4096]])
        t.launch(s + 10, "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor>",
                 gpu, 25.0)
        gpu += 27
        s, _ = op("fused::swiglu", [[4096, 28672]])
        t.launch(s + 10, "swiglu_fwd_kernel_bf16", gpu, 110.0 + 2 * step)
        gpu += 115
        s, _ = op("aten::mm", [[4096, 4096], [4096, 4096]], ["c10::Half", "c10::Half"])
        t.launch(s + 10, "ampere_fp16_s16816gemm_fp16_128x128_ldg8_stages_64x3_nn", gpu, 260.0)
        gpu += 262
        # backward: dgrad and wgrad of the (4096, 4096) projection, attention backward
        t.op("autograd::engine::evaluate_function: MmBackward0", host, 80)
        t.op("MmBackward0", host + 2, 76)
        t.op("aten::mm", host + 5, 30, [[2048, 4096], [4096, 4096]] if shapes else None)
        t.launch(host + 15, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64", gpu,
                 212.0 + step)
        gpu += 215
        t.op("aten::mm", host + 40, 30, [[4096, 2048], [2048, 4096]] if shapes else None)
        t.launch(host + 50, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64", gpu,
                 209.0)
        gpu += 211
        host += 82
        t.op("autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0",
             host, 40)
        s = host
        t.op("aten::_scaled_dot_product_flash_attention_backward", s + 2, 36,
             [[2, 32, 2048, 128]] * 3 if shapes else None)
        t.launch(s + 10, "void pytorch_flash::flash_bwd_dq_dk_dv_loop_kernel", gpu, 760.0)
        gpu += 765
        host += 42
        # gradient all-reduce of 64 Mi bf16 elements over 8 GPUs, NCCL stream 20
        comm = {"Collective name": "allreduce", "In msg nelems": 67108864,
                "Out msg nelems": 67108864, "Group size": 8, "dtype": "BFloat16"}
        s, _ = op("record_param_comms", [[67108864]], extra=comm)
        t.launch(s + 10, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                 gpu, 1500.0 + 10 * step, stream=20)
        # copies: device to device 256 MiB, host to device 1 MiB
        s, _ = op("aten::copy_", [[134217728], [134217728]])
        t.launch(s + 10, "Memcpy DtoD (Device -> Device)", gpu + 1, 80.0, cat="gpu_memcpy",
                 kargs={"bytes": 268435456}, launch_dur=3.0)
        gpu += 82
        s, _ = op("aten::copy_", [[262144], [262144]], ["float", "float"])
        t.launch(s + 10, "Memcpy HtoD (Pageable -> Device)", gpu, 40.0, cat="gpu_memcpy",
                 kargs={"bytes": 1048576}, launch_dur=3.0)
        gpu += 42
        # a kernel whose runtime event the profiler lost
        t.events.append({"ph": "X", "cat": "kernel", "name": "void orphan_kernel", "pid": 0,
                         "tid": 7, "ts": gpu, "dur": 5.0,
                         "args": {"stream": 7, "correlation": 999999 + step}})
        gpu += 7
        ts = max(host, gpu) + 100
        t.step(step, t0, ts - t0 - 50)
    return t.dump()


def main():
    OUT.mkdir(exist_ok=True)
    full = build()
    (OUT / "kineto-h100-small.json").write_text(full + "\n")
    (OUT / "kineto-h100-small-no-shapes.json").write_text(build(shapes=False) + "\n")
    (OUT / "kineto-h100-small-truncated.json").write_text(full[: len(full) * 3 // 5])


if __name__ == "__main__":
    main()
