#!/usr/bin/env python3
"""Fits fleetsim's global framework parameters on end-to-end throughput rows, and measures how
well the fit generalises: leave-one-family-out (LOFO).

The only parameters fitted on end-to-end measurements (DESIGN.md, "Accuracy") are those in
calibration/framework.json: the fraction of its isolated-benchmark speed a kernel sustains inside
a training step (`kernel_efficiency`) and, while the step simulator still has it, the host gap
per kernel (`kernel_gap`). Same values for every model, system, precision and release.

One `fleetsim validate --csv` pass per grid point (run in parallel, -j) gives every row's
prediction at that point; everything else is arithmetic on those tables:
- the global fit: the grid point with the lowest MAPE over all compared rows;
- LOFO: for each model family, the grid point with the lowest MAPE over the *other* families'
  rows, and that point's error on the family; the LOFO MAPE is the mean of the families'
  held-out MAPEs (the pooled MAPE over every held-out row is printed beside it);
- the per-family bias table (mean signed error, MAPE) at the global fit.

    /usr/bin/python3 calibration/fit_framework.py --fleetsim build/release/fleetsim \
        --reference validation/nemo_performance_summary.csv [-j 2] [--report FILE.md]

Writes calibration/framework.json (unless --no-write) and, with --report, the tables as
Markdown (docs/calibration.md quotes them).
"""
import argparse
import concurrent.futures
import csv
import json
import os
import pathlib
import subprocess
import sys
import tempfile

# Model families for leave-one-family-out: zoo model name prefix -> family.
FAMILIES = [
    ("llama", "Llama"),
    ("gpt3", "GPT-3"),
    ("nemotron3-nano", "Nemotron hybrid"),
    ("nemotron3.5", "Nemotron hybrid"),
    ("nemotron-h", "Nemotron hybrid"),
    ("nemotron3-", "Nemotron dense"),
    ("nemotron4-", "Nemotron dense"),
    ("mixtral", "Mixtral"),
    ("deepseek", "DeepSeek-V3"),
    ("qwen3", "Qwen3-MoE"),
]


def family_of(model):
    for prefix, fam in FAMILIES:
        if model.startswith(prefix):
            return fam
    return model


def run_point(fleetsim, reference, point, workdir):
    """Per-row (line, family, hardware, error_pct) of one validate pass at `point`."""
    name = "_".join(f"{k}{v}" for k, v in sorted(point.items()))
    out_csv = os.path.join(workdir, name + ".csv")
    cmd = [fleetsim, "validate", "--reference", reference, "--json", "--csv", out_csv]
    if "kernel_gap_us" in point:
        cmd += ["--kernel-gap-us", str(point["kernel_gap_us"])]
    cmd += ["--kernel-efficiency", str(point["kernel_efficiency"])]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1) or not os.path.exists(out_csv):
        sys.exit(f"fleetsim validate failed at {point}: rc {proc.returncode}\n{proc.stderr}")
    rep = json.loads(proc.stdout)
    rows = []
    with open(out_csv, newline="") as fh:
        for r in csv.DictReader(fh):
            if r["status"] != "compared" or not r["family"]:
                continue
            rows.append((int(r["line"]), family_of(r["family"]), r["hardware"],
                         float(r["error_pct"])))
    return rows, rep["mape_pct"], rep["n_rows"]


def mape(errs):
    return sum(abs(e) for e in errs) / len(errs) if errs else float("nan")


def bias(errs):
    return sum(errs) / len(errs) if errs else float("nan")


def fmt_point(p):
    s = f"efficiency {p['kernel_efficiency']:.3f}"
    if "kernel_gap_us" in p:
        s = f"gap {p['kernel_gap_us']:g} us, " + s
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fleetsim", default="build/release/fleetsim")
    ap.add_argument("--reference", default="validation/nemo_performance_summary.csv")
    ap.add_argument("--out", default=str(pathlib.Path(__file__).with_name("framework.json")))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--report", help="write the tables as Markdown to this file")
    ap.add_argument("--no-write", action="store_true", help="do not rewrite framework.json")
    ap.add_argument("--eff-min", type=float, default=0.55)
    ap.add_argument("--eff-max", type=float, default=0.95)
    ap.add_argument("--eff-step", type=float, default=0.025)
    ap.add_argument("--gaps", default="0,2,5",
                    help="kernel_gap grid in us (while framework.json has kernel_gap)")
    args = ap.parse_args()

    current = json.loads(pathlib.Path(args.out).read_text()) if os.path.exists(args.out) else {}
    fit_gap = "kernel_gap" in current  # fitted only while the simulator still has it
    n_eff = int(round((args.eff_max - args.eff_min) / args.eff_step)) + 1
    effs = [round(args.eff_min + args.eff_step * i, 4) for i in range(n_eff)]
    gaps = tuple(float(g) for g in args.gaps.split(",")) if fit_gap else (None,)
    points = []
    for g in gaps:
        for e in effs:
            p = {"kernel_efficiency": e}
            if g is not None:
                p["kernel_gap_us"] = g
            points.append(p)

    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda p: run_point(args.fleetsim, args.reference, p, tmp),
                                points))

    # errs[i][line] = (family, hardware, error) at grid point i.
    tables = []
    for p, (rows, rep_mape, n) in zip(points, results):
        tables.append({line: (fam, hw, e) for line, fam, hw, e in rows})
        print(f"{fmt_point(p)}  MAPE {rep_mape:6.2f}% ({n} rows)")
    lines = sorted(set.intersection(*(set(t) for t in tables)))
    families = sorted({tables[0][l][0] for l in lines})

    def errs(i, keep):
        return [tables[i][l][2] for l in lines if keep(tables[i][l][0])]

    all_mape = [mape(errs(i, lambda f: True)) for i in range(len(points))]
    best = min(range(len(points)), key=lambda i: all_mape[i])
    print(f"\nglobal fit: {fmt_point(points[best])}: MAPE {all_mape[best]:.2f}% "
          f"over {len(lines)} rows")

    lofo = {}
    held_out = []
    for fam in families:
        train = [mape(errs(i, lambda f, fam=fam: f != fam)) for i in range(len(points))]
        i = min(range(len(points)), key=lambda k: train[k])
        e = errs(i, lambda f, fam=fam: f == fam)
        held_out += e
        lofo[fam] = (points[i], mape(e), bias(e), len(e))
    lofo_mean = sum(v[1] for v in lofo.values()) / len(lofo)
    lofo_pooled = mape(held_out)
    print(f"leave-one-family-out MAPE: {lofo_mean:.2f}% (mean of {len(families)} families), "
          f"{lofo_pooled:.2f}% pooled over {len(held_out)} held-out rows\n")

    md = ["# Framework fit (written by `make calibrate`: calibration/fit_framework.py --report)", ""]
    grid = f"kernel_efficiency {effs[0]:g}-{effs[-1]:g} step {args.eff_step:g}"
    if fit_gap:
        grid = "kernel_gap " + " / ".join(f"{g:g}" for g in gaps) + " us x " + grid
    md.append(f"Grid: {grid} ({len(points)} validate passes).")
    md.append("")
    md.append(f"Global fit: **{fmt_point(points[best])}**, MAPE **{all_mape[best]:.2f} %** over "
              f"{len(lines)} compared rows of `{pathlib.Path(args.reference).name}`. "
              f"Leave-one-family-out MAPE: **{lofo_mean:.2f} %** (mean over {len(families)} "
              f"families; {lofo_pooled:.2f} % pooled over the {len(held_out)} held-out rows).")
    md.append("")
    md.append("| family | rows | bias % (global fit) | MAPE % (global fit) | LOFO: fitted without it "
              "| LOFO MAPE % | LOFO bias % |")
    md.append("|---|---:|---:|---:|---|---:|---:|")
    for fam in families:
        e = errs(best, lambda f, fam=fam: f == fam)
        p, lm, lb, n = lofo[fam]
        md.append(f"| {fam} | {n} | {bias(e):+.1f} | {mape(e):.1f} | {fmt_point(p)} | {lm:.1f} "
                  f"| {lb:+.1f} |")
    md.append("")
    md.append("| family × hardware | rows | bias % | MAPE % |")
    md.append("|---|---:|---:|---:|")
    cells = sorted({(tables[best][l][0], tables[best][l][1]) for l in lines})
    for fam, hw in cells:
        e = [tables[best][l][2] for l in lines if tables[best][l][:2] == (fam, hw)]
        md.append(f"| {fam} × {hw} | {len(e)} | {bias(e):+.1f} | {mape(e):.1f} |")
    text = "\n".join(md) + "\n"
    print(text)
    if args.report:
        pathlib.Path(args.report).write_text(text)

    if not args.no_write:
        p = points[best]
        doc = {}
        if fit_gap:
            doc["kernel_gap"] = f"{p['kernel_gap_us']}us"
        doc["kernel_efficiency"] = p["kernel_efficiency"]
        doc["fitted_by"] = ("calibration/fit_framework.py (grid search, minimum MAPE; "
                            "leave-one-family-out in docs/calibration.md)")
        doc["fitted_on"] = f"{pathlib.Path(args.reference).name}: {len(lines)} training rows"
        doc["mape_pct"] = round(all_mape[best], 2)
        for k in current:
            if k not in doc and k not in ("kernel_gap",):
                doc[k] = current[k]
        pathlib.Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
        print(f"-> {args.out}")


if __name__ == "__main__":
    main()
