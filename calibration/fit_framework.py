#!/usr/bin/env python3
"""Fits fleetsim's global framework parameters on end-to-end throughput rows.

The only parameters fitted on end-to-end measurements (DESIGN.md, "Accuracy"): the host-side gap
per kernel and the fraction of its isolated-benchmark speed a kernel sustains inside a training
step. Same values for every model, system and precision. Grid search minimising the MAPE of
`fleetsim validate --reference nemo_performance_summary.csv`; writes calibration/framework.json.

    /usr/bin/python3 calibration/fit_framework.py --fleetsim build/release/fleetsim \
        --reference validation/nemo_performance_summary.csv
"""
import argparse
import json
import pathlib
import subprocess


def mape(fleetsim, reference, gap_us, eff):
    out = subprocess.run(
        [fleetsim, "validate", "--reference", reference, "--json",
         "--kernel-gap-us", str(gap_us), "--kernel-efficiency", str(eff)],
        check=True, capture_output=True, text=True).stdout
    rep = json.loads(out)
    return rep["mape_pct"], rep["n_rows"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fleetsim", default="build/release/fleetsim")
    ap.add_argument("--reference", default="validation/nemo_performance_summary.csv")
    ap.add_argument("--out", default=str(pathlib.Path(__file__).with_name("framework.json")))
    args = ap.parse_args()
    best = None
    for gap in (0.0, 2.0, 5.0):
        for i in range(13):
            eff = round(0.55 + 0.025 * i, 3)
            m, n = mape(args.fleetsim, args.reference, gap, eff)
            print(f"gap {gap:4.1f} us  efficiency {eff:.3f}  MAPE {m:6.2f}% ({n} rows)")
            if best is None or m < best[0]:
                best = (m, gap, eff, n)
    m, gap, eff, n = best
    doc = {
        "kernel_gap": f"{gap}us",
        "kernel_efficiency": eff,
        "fitted_by": "calibration/fit_framework.py (grid search, minimum MAPE)",
        "fitted_on": f"{pathlib.Path(args.reference).name}: {n} training rows",
        "mape_pct": round(m, 2),
    }
    pathlib.Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    print(f"best: gap {gap} us, efficiency {eff}: MAPE {m:.2f}% -> {args.out}")


if __name__ == "__main__":
    main()
