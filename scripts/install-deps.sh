#!/usr/bin/env bash
# Installs the Debian packages fleetsim needs to build and test. Idempotent and quick when
# everything is present (one dpkg query); runs apt-get only for what is missing.
set -euo pipefail
packages=(g++ cmake make ccache libboost-graph-dev libeigen3-dev nlohmann-json3-dev libcli11-dev catch2
          python3-numpy python3-jsonschema
          python3-dev pybind11-dev python3-pybind11 python3-pytest python3-venv python3-wheel  # import fleetsim (sim/python), tests/python
          slurmctld slurmd slurm-client munge)  # the sweep's Slurm round-trip test
# fuzzing (clang's libFuzzer with ASan / UBSan runtimes), format check and clang-tidy
packages+=(clang libclang-rt-14-dev clang-format clang-tidy)
# notebooks (tests/notebooks)
packages+=(jupyter-nbconvert python3-matplotlib python3-pandas python3-nbformat python3-nbclient python3-ipykernel)
# HTML reports rendered in headless Chromium (tests/report/test_html_render.sh; PIL reads the PNG)
packages+=(chromium python3-pil)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
