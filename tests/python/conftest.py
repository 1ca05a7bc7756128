"""Shared set-up of the Python module's tests: the repository root as working folder, the fleetsim
binary to compare with (FLEETSIM_BIN, set by ctest) and the module on sys.path (FLEETSIM_PYTHONPATH,
else build/ci/python or build/release/python of this checkout)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module_dir():
    env = os.environ.get("FLEETSIM_PYTHONPATH")
    cands = [Path(env)] if env else [ROOT / "build/ci/python", ROOT / "build/release/python"]
    for c in cands:
        if (c / "fleetsim" / "__init__.py").is_file():
            return c
    raise RuntimeError(f"no built fleetsim module in {[str(c) for c in cands]}: build the "
                       "fleetsim_python target (cmake --build --preset ci --target fleetsim_python)")


sys.path.insert(0, str(_module_dir()))
os.chdir(ROOT)


@pytest.fixture(scope="session")
def cli():
    """Runs the fleetsim binary; returns the CompletedProcess (check=False)."""
    exe = os.environ.get("FLEETSIM_BIN") or str(ROOT / "build/ci/fleetsim")
    assert os.access(exe, os.X_OK), f"no fleetsim binary at {exe} (set FLEETSIM_BIN)"

    def run(*args):
        return subprocess.run([exe, *map(str, args)], cwd=ROOT, capture_output=True, text=True)

    return run
