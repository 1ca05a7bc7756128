"""Component-level check: fleetsim's step breakdown against validation/moe-component-measured.csv.

Usage: check_component_rows.py FLEETSIM ROOT

Each row names a scenario, the EP-overlap switch it ran with and one quantity of a measured
profile. The scenario is simulated (with framework.ep_comm_overlap set as the row says) and the
quantity is read off report.json:
  step_time_s           step_time_s
  gpu_active_s          step - host_exposed - bubble (any kernel, communication included, runs)
  gpu_idle_s            host_exposed + bubble
  compute_s             breakdown compute + optimizer
  comm_time_s           collective_time_s summed over the dimensions (every collective the rank
                        issues, hidden or exposed)
  comm_hidden_fraction  1 - (tp + cp + ep + pp + dp exposed) / comm_time_s
The run's peak allocated memory (62.166 GiB) is compared in validation/memory-measured.csv (line
133, with the recipe's memory options: fleetsim validate's memory rows), not here, so the
repository gives one prediction for it.
Rows with a tolerance_pct must agree within it (|predicted / measured - 1|); rows without one are
printed only (derived quantities with a stated uncertainty, or quantities other checks own).
Exit 0 all within tolerance, 1 a row outside it, 2 a malformed CSV row.
"""
import csv
import json
import pathlib
import subprocess
import sys
import tempfile

QUANTITIES = ("step_time_s", "gpu_active_s", "gpu_idle_s", "compute_s", "comm_time_s",
              "comm_hidden_fraction")


def predicted(report, quantity):
    b = report["breakdown_s"]
    step = report["step_time_s"]
    idle = b["host_exposed"] + b["bubble"]
    if quantity == "step_time_s":
        return step
    if quantity == "gpu_active_s":
        return step - idle
    if quantity == "gpu_idle_s":
        return idle
    if quantity == "compute_s":
        return b["compute"] + b["optimizer"]
    comm = sum(report["collective_time_s"].values())
    if quantity == "comm_time_s":
        return comm
    if quantity == "comm_hidden_fraction":
        exposed = sum(b[k] for k in ("tp_exposed", "cp_exposed", "ep_exposed", "pp_exposed",
                                     "dp_exposed"))
        return 1.0 - exposed / comm if comm > 0 else 0.0
    raise ValueError(quantity)


def run(fleetsim, root, scenario, overlap, cache, tmp):
    key = (scenario, overlap)
    if key in cache:
        return cache[key]
    sc = json.loads((root / scenario).read_text())
    sc["workload"]["framework"]["ep_comm_overlap"] = overlap
    path = pathlib.Path(tmp) / f"s{len(cache)}.json"
    path.write_text(json.dumps(sc))
    out = pathlib.Path(tmp) / f"o{len(cache)}"
    subprocess.run([fleetsim, "run", str(path), "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    cache[key] = json.loads((out / "report.json").read_text())
    return cache[key]


def main():
    fleetsim, root = sys.argv[1], pathlib.Path(sys.argv[2])
    path = root / "validation/moe-component-measured.csv"
    rows = list(csv.DictReader(path.open()))
    cache, failed = {}, 0
    print(f"{'line':>4}  {'overlap':7}  {'quantity':22} {'measured':>10} {'fleetsim':>10} "
          f"{'error':>8}  tolerance")
    with tempfile.TemporaryDirectory() as tmp:
        for i, r in enumerate(rows, start=2):
            q, ov = r["quantity"], r["ep_comm_overlap"]
            if q not in QUANTITIES or ov not in ("true", "false"):
                print(f"{path}: line {i}: quantity '{q}' / ep_comm_overlap '{ov}': expected one of "
                      f"{', '.join(QUANTITIES)} and true / false", file=sys.stderr)
                return 2
            try:
                meas = float(r["measured"])
                tol = float(r["tolerance_pct"]) if r["tolerance_pct"] else None
            except ValueError:
                print(f"{path}: line {i}: measured / tolerance_pct: expected numbers",
                      file=sys.stderr)
                return 2
            overlap = ov == "true"
            pred = predicted(run(fleetsim, root, r["scenario"], overlap, cache, tmp), q)
            err = (pred / meas - 1.0) * 100.0 if meas != 0 else float("nan")
            verdict = "reported" if tol is None else ("ok" if abs(err) <= tol else "OUTSIDE")
            failed += verdict == "OUTSIDE"
            tol_s = "" if tol is None else f"{tol:g} %"
            print(f"{i:>4}  {ov:7}  {q:22} {meas:>10.4g} {pred:>10.4g} {err:>+7.1f}%  "
                  f"{tol_s} {verdict}")
    print(f"{failed} row(s) outside tolerance")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
