#!/usr/bin/env python3
"""`fleetsim calibrate import-trace` end to end (ctest calibrate_import_trace):
1. the Kineto fixture (make_kineto_fixture.py): every written row equals the median the fixture
   set (hand-computed below), the file imports into a set, the summary names what was not
   written and why, and the output is byte-identical on a rerun;
2. a truncated trace and one without shapes: exit 2 with the reason;
3. round trip: fleetsim's own --trace of scenarios/quickstart.json turned into a Kineto trace
   with kernel shapes (kineto_from_fleetsim.py) imports back to the kernel times it was written
   from, within the trace's rounding (1 ns);
4. run --compare-trace: the trace's per-stream compute and NCCL time per step as recomputed here.

usage: test_import_trace.py FLEETSIM_BIN
"""
import csv
import io
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TRACES = HERE / "traces"
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def run(*args):
    return subprocess.run([BIN, *map(str, args)], cwd=ROOT, capture_output=True, text=True)


def rows_of(path):
    text = "".join(l for l in Path(path).read_text().splitlines(True) if not l.startswith("#"))
    return list(csv.DictReader(io.StringIO(text)))


def fixture(tmp):
    out = tmp / "small.csv"
    r = run("calibrate", "import-trace", TRACES / "kineto-h100-small.json", "--out", out,
            "--date", "2026-12-01T00:00:00Z")
    check(r.returncode == 0, f"fixture imports (exit {r.returncode}: {r.stderr.strip()})")
    if r.returncode != 0:
        return
    print(r.stdout)
    rows = rows_of(out)
    gemm = {(int(x["m"]), int(x["n"]), int(x["k"])): float(x["time_us"])
            for x in rows if x["kernel"] == "gemm"}
    # Medians of the four steps' times set by make_kineto_fixture.py.
    want = {(4096, 4096, 4096): 213.0, (4096, 4096, 8192): 422.5, (4096, 8192, 4096): 416.0,
            (4096, 8192, 8192): 835.0}
    check(gemm == want, f"GEMM grid rows {gemm} == {want}")
    check(all(x["gpu"] == "H100" and x["dtype"] in ("bf16", "u8", "bfloat16") for x in rows),
          "GPU H100 from the device name, bf16 rows")
    by = {x["kernel"]: x for x in rows if x["kernel"] != "gemm"}
    check(set(by) == {"rms_norm_fwd", "swiglu_fwd", "copy_d2d", "nccl_all_reduce"},
          f"memory-bound and NCCL rows written: {sorted(by)}")
    norm = by.get("rms_norm_fwd", {})
    check(norm.get("time_us") == "30.000" and float(norm.get("bytes", 0)) == 2 * 4096 * 4096 * 2 + 4096 * 2,
          "RMSNorm: 30 us, bytes = read x + write y + weight")
    sw = by.get("swiglu_fwd", {})
    check(float(sw.get("time_us", 0)) == 113.0 and float(sw.get("bytes", 0)) == 3 * 4096 * 14336 * 2,
          "SwiGLU: median 113 us, bytes = read [m, 2n] + write [m, n]")
    cp = by.get("copy_d2d", {})
    check(float(cp.get("bytes", 0)) == 2 * 268435456 and float(cp.get("time_us", 0)) == 80.0,
          "copy_d2d: read + write bytes, 80 us")
    ar = by.get("nccl_all_reduce", {})
    busbw = 134217728 / 1515e-6 / 1e9 * 2 * 7 / 8
    check(ar.get("batch") == "8" and abs(float(ar.get("achieved_gbps", 0)) - busbw) < 1e-3 * busbw,
          f"all-reduce: 8 GPUs, median 1515 us, busbw {busbw:.2f} GB/s")
    s = r.stdout
    check("attention_fwd" in s and "attention_bwd" in s and "no attention rows" in s,
          "summary: attention matched, not written, with the reason")
    check("dtype fp16 has no calibration rows" in s, "summary: the fp16 GEMM and why")
    check("outside the largest full bf16 grid" in s, "summary: backward GEMMs outside the grid")
    check("4 x host <-> device copy" in s and "4 x no launch with its correlation id" in s,
          "summary: unmatched kernels by reason")
    check("host-costs.csv" in s and "launch calls" in s, "summary: host costs beside fleetsim's")
    out2 = tmp / "small2.csv"
    run("calibrate", "import-trace", TRACES / "kineto-h100-small.json", "--out", out2,
        "--date", "2026-12-01T00:00:00Z")
    check(out.read_bytes() == out2.read_bytes(), "byte-identical on a rerun")
    r = run("calibrate", "import", out, "--set", tmp / "set")
    check(r.returncode == 0, f"calibrate import accepts the file ({r.stderr.strip()})")


def broken():
    r = run("calibrate", "import-trace", TRACES / "kineto-h100-small-truncated.json", "--out",
            "/dev/null")
    check(r.returncode == 2 and "truncated" in r.stderr and "kineto-h100-small-truncated.json" in r.stderr,
          f"truncated trace: exit 2 with the reason ({r.stderr.strip()})")
    r = run("calibrate", "import-trace", TRACES / "kineto-h100-small-no-shapes.json", "--out",
            "/dev/null")
    check(r.returncode == 2 and "record_shapes=True" in r.stderr,
          f"trace without shapes: exit 2 with the reason ({r.stderr.strip()})")
    r = run("calibrate", "import-trace", TRACES / "no-such-trace.json")
    check(r.returncode == 2, "missing file: exit 2")


def round_trip(tmp):
    scen = ROOT / "scenarios" / "quickstart.json"
    r = run("run", scen, "--out", tmp / "q", "--trace", tmp / "q" / "trace.json")
    check(r.returncode == 0, f"fleetsim run --trace ({r.stderr.strip()})")
    gen = [sys.executable, HERE / "kineto_from_fleetsim.py", tmp / "q" / "trace.json", scen,
           tmp / "kineto.json", tmp / "expected.json"]
    subprocess.run(list(map(str, gen)), check=True)
    out = tmp / "rt.csv"
    r = run("calibrate", "import-trace", tmp / "kineto.json", "--out", out, "--date",
            "2026-12-01T00:00:00Z")
    check(r.returncode == 0, f"round-trip trace imports ({r.stderr.strip()})")
    if r.returncode != 0:
        return
    expected = json.loads((tmp / "expected.json").read_text())
    med = {}
    for e in expected:
        key = (e["cls"], e.get("m"), e.get("n"), e.get("k"))
        med.setdefault(key, []).append(e["time_us"])
    rows = rows_of(out)
    check(len(rows) >= 4, f"{len(rows)} rows written")
    worst = 0.0
    for x in rows:
        key = (x["kernel"], int(x["m"]), int(x["n"]), int(x["k"]) if x["k"] else None)
        want = statistics.median(med[key])
        worst = max(worst, abs(float(x["time_us"]) - want))
    check(worst <= 0.0005 + 1e-9, f"imported times = the medians written, worst |diff| {worst:.6f} us")
    check(any(x["kernel"] == "gemm" and x["dtype"] == "fp8" for x in rows), "fp8 GEMM rows (fp8_cs)")


def compare(tmp):
    """run --compare-trace: per-stream compute / communication per profiler step, recomputed
    here from the fixture's kernel intervals clipped to the steps' window."""
    path = TRACES / "kineto-h100-small.json"
    r = run("run", "scenarios/quickstart.json", "--out", tmp / "cmp", "--compare-trace", path)
    check(r.returncode == 0, f"run --compare-trace ({r.stderr.strip()})")
    ev = json.loads(path.read_text())["traceEvents"]
    steps = [e for e in ev if e["name"].startswith("ProfilerStep#")]
    lo = min(e["ts"] for e in steps)
    hi = max(e["ts"] + e["dur"] for e in steps)
    busy = {}
    for e in ev:
        if e.get("cat") != "kernel":
            continue
        key = ("comm" if "nccl" in e["name"].lower() else "compute", e["args"]["stream"])
        busy[key] = busy.get(key, 0) + max(0, min(hi, e["ts"] + e["dur"]) - max(lo, e["ts"]))
    lines = {l.split("  ")[1].strip(): l.split() for l in r.stdout.splitlines()
             if l.startswith("  compute (+") or l.startswith("  communication")}
    comp = float(lines["compute (+ optimizer)"][-2]) if lines else -1
    comm = float(lines["communication (exposed)"][-1]) if lines else -1
    want_comp = busy[("compute", 7)] / len(steps) * 1e-6
    want_comm = busy[("comm", 20)] / len(steps) * 1e-6
    check(abs(comp - want_comp) < 6e-5 and abs(comm - want_comm) < 6e-5,
          f"stream 7 compute {comp} s (want {want_comp:.5f}), stream 20 NCCL {comm} s "
          f"(want {want_comm:.5f}) per step")
    r = run("run", "scenarios/allreduce-2x-p6-b200.json", "--out", tmp / "cmp2",
            "--compare-trace", path)
    check(r.returncode == 2 and "--compare-trace" in r.stderr, "collective scenario: exit 2")


BIN = str(Path(sys.argv[1]).resolve())
with tempfile.TemporaryDirectory() as d:
    tmp = Path(d)
    fixture(tmp)
    broken()
    round_trip(tmp)
    compare(tmp)
print(f"{len(fails)} failure(s)")
sys.exit(1 if fails else 0)
