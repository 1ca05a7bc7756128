"""pip install of the Python module from this source tree (docs/python.md):

    /usr/bin/python3 -m venv --system-site-packages .venv
    .venv/bin/pip install --no-build-isolation .

Drives the project's CMake build (Release, only the fleetsim_python target, for the interpreter
running pip) and installs the package fleetsim (sim/python/fleetsim) with its extension. Offline:
--no-build-isolation uses the installed setuptools and wheel (Debian's, seen through
--system-site-packages) instead of downloading them. The module reads
topologies/, workloads/ and calibration/ from this source tree (or FLEETSIM_DATA_DIR).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = ROOT / "build" / "pip"
        subprocess.check_call([
            "cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG", f"-DPython3_EXECUTABLE={sys.executable}",
            "-DFLEETSIM_BUILD_TESTS=OFF", "-DFLEETSIM_BUILD_BENCH=OFF", "-DFLEETSIM_BUILD_CUDA=OFF"])
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", str(build), "--target", "fleetsim_python",
                               "-j", jobs])
        built = sorted((build / "python" / "fleetsim").glob("_core*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one _core module in {build}/python/fleetsim, got {built}")
        dest = Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], dest)


setup(
    name="fleetsim",
    version="0.1.0",
    description="Discrete-event simulator of LLM training clusters (Python module)",
    python_requires=">=3.9",
    packages=["fleetsim"],
    package_dir={"fleetsim": "sim/python/fleetsim"},
    ext_modules=[Extension("fleetsim._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
