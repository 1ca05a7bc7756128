"""fleetsim from Python: the simulator's study layer in-process, with the CLI's numbers.

    import fleetsim
    rep = fleetsim.run("scenarios/quickstart.json")      # report.json as a dict
    rep["step_time_s"]
    rows = fleetsim.sweep("scenarios/sweeps/quickstart-parallelism.json", threads=2)
    df = rows.to_pandas()                                 # when pandas is importable

Scenarios and sweeps are a path (str or os.PathLike) or a dict in the scenario / sweep format
(relative paths inside a dict resolve from the current folder). Bad input raises
fleetsim.InputError (a ValueError) with .file, .pointer and .message, the cases where the CLI
exits with 2; work over a limit (max_gpus, max_passes, max_flows, max_run_events,
max_sim_memory, and for sweeps max_points keyword arguments) is such an input error, refused before it starts, and running
out of memory anyway raises MemoryError naming those limits. The GIL is released while simulating, so Python threads run in parallel.
Reference: docs/python.md.
"""
import json
import os

from . import _core
from ._core import InputError

__all__ = ["InputError", "Rows", "run", "run_json", "memory", "validate", "sweep"]


class Rows(list):
    """A list of result rows (dicts) with the rest of the result in .info (a dict)."""

    def __init__(self, rows, info=None):
        super().__init__(rows)
        self.info = info or {}

    def to_pandas(self):
        """The rows as a pandas DataFrame (columns in the order of the CLI's CSV)."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("Rows.to_pandas() needs pandas (pip install pandas)") from e
        return pd.DataFrame(list(self))


def _source(doc, what):
    """(is_path, name, text) for _core from a path or a dict."""
    if isinstance(doc, dict):
        return False, f"<{what} dict>", json.dumps(doc)
    if isinstance(doc, (str, os.PathLike)):
        return True, os.fspath(doc), ""
    raise TypeError(f"expected a {what} path or dict, got {type(doc).__name__}")


_LIMITS = ("max_gpus", "max_passes", "max_flows", "max_run_events", "max_sim_memory",
           "max_points")


def _limits(limits):
    """The work limits for _core (the CLI's --max-* flags; max_sim_memory in bytes): each keyword
    argument given, else the default. Work over a limit raises InputError before it starts."""
    unknown = set(limits) - set(_LIMITS)
    if unknown:
        raise TypeError(f"unknown limit(s) {sorted(unknown)}; expected {list(_LIMITS)}")
    return tuple(getattr(_core, "default_" + k) if limits.get(k) is None else int(limits[k])
                 for k in _LIMITS)


def run_json(scenario, *, seed=None, threads=0, **limits):
    """`fleetsim run`'s report.json as text, byte for byte (threads: run-level Monte Carlo).

    limits: max_gpus, max_passes, max_flows, max_run_events, max_sim_memory (bytes), as the
    CLI's --max-* flags."""
    return _core.run_json(*_source(scenario, "scenario"), seed, int(threads), _limits(limits))


def run(scenario, *, seed=None, threads=0, **limits):
    """Simulates a scenario; returns the report.json object as a dict (docs/report.md keys)."""
    return json.loads(run_json(scenario, seed=seed, threads=threads, **limits))


def memory(scenario, **limits):
    """Per-GPU memory breakdown of a training scenario (`fleetsim memory --json`), no simulation."""
    return json.loads(_core.memory_json(*_source(scenario, "scenario"), _limits(limits)))


def validate(csv, *, kernel_efficiency=None):
    """Compares simulated with measured rows of a reference CSV (`fleetsim validate --json`).

    Returns Rows (one dict per CSV row, skipped rows with their reason); .info holds the
    summary (mape_pct, n_rows, mape_by_hardware, ...).
    """
    rep = json.loads(_core.validate_json(
        os.fspath(csv), -1.0 if kernel_efficiency is None else float(kernel_efficiency)))
    rows = rep.pop("rows")
    return Rows(rows, rep)


def sweep(sweep, *, threads=1, **limits):
    """Runs every point of a sweep on `threads` threads, nothing written to disk.

    Returns Rows: the rows of the CLI's results.jsonl in point order (point, key, status, the
    axis columns by JSON pointer, the metrics, error); .info holds name, combinations, columns
    and skipped. The numbers do not depend on `threads`.

    limits: as run(), and max_points (the CLI's --max-points: points the sweep may expand to
    before filters, default 1,000,000).
    """
    if int(threads) < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    res = json.loads(_core.sweep_json(*_source(sweep, "sweep"), int(threads),
                                      _limits(limits)))
    rows = res.pop("rows")
    return Rows(rows, res)
