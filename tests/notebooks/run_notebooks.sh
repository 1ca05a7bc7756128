#!/usr/bin/env bash
# Executes every notebooks/*.ipynb headless with nbconvert, against the given fleetsim binary.
# A notebook must be stored without outputs and execution counts (checked first), and every cell
# must run without an error (the notebooks assert invariants of fleetsim's outputs).
# Usage: run_notebooks.sh FLEETSIM_BIN   (run from anywhere; paths resolve from this file)
set -u
if [ $# -ne 1 ]; then echo "usage: $0 FLEETSIM_BIN" >&2; exit 2; fi
bin=$(realpath "$1") || { echo "no such fleetsim binary: $1" >&2; exit 2; }
[ -x "$bin" ] || { echo "not executable: $bin" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
py=/usr/bin/python3

if ! "$py" -c "import nbconvert, nbformat, nbclient, ipykernel, matplotlib, pandas" 2>/dev/null; then
  echo "FAIL: $py lacks nbconvert / nbformat / nbclient / ipykernel / matplotlib / pandas:" \
       "run make deps (scripts/install-deps.sh installs jupyter-nbconvert python3-matplotlib" \
       "python3-pandas python3-nbformat python3-nbclient python3-ipykernel)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Headless and self-contained: no display, caches and kernel files inside $tmp.
# The Python module next to the binary (build/<preset>/python), for notebooks that import it.
export FLEETSIM_PYTHONPATH="${FLEETSIM_PYTHONPATH:-$(dirname "$bin")/python}"
export FLEETSIM_BIN="$bin" MPLBACKEND=Agg MPLCONFIGDIR="$tmp/mpl" IPYTHONDIR="$tmp/ipython" \
       JUPYTER_RUNTIME_DIR="$tmp/runtime" JUPYTER_DATA_DIR="$tmp/data" PYDEVD_DISABLE_FILE_VALIDATION=1

shopt -s nullglob
notebooks=("$root"/notebooks/*.ipynb)
if [ ${#notebooks[@]} -eq 0 ]; then echo "FAIL: no notebooks in $root/notebooks" >&2; exit 1; fi

fail=0
for nb in "${notebooks[@]}"; do
  name=$(basename "$nb")
  # (a) stored without outputs: every code cell has outputs [] and execution_count null.
  if ! msg=$("$py" - "$nb" <<'EOF' 2>&1
import json, sys
nb = json.load(open(sys.argv[1], encoding="utf-8"))
bad = []
for i, c in enumerate(nb.get("cells", [])):
    if c.get("cell_type") != "code":
        continue
    if c.get("outputs"):
        bad.append(f"cell {i} has outputs")
    if c.get("execution_count") is not None:
        bad.append(f"cell {i} has execution_count {c['execution_count']}")
if nb.get("nbformat") != 4:
    bad.append(f"nbformat {nb.get('nbformat')} (expected 4)")
if bad:
    print("; ".join(bad))
    sys.exit(1)
EOF
  ); then
    echo "FAIL $name: stored with outputs: $msg (clear them: jupyter nbconvert --clear-output --inplace)"
    fail=1
    continue
  fi
  # (b) execute; nbconvert runs the kernel in the notebook's folder, so ../scenarios resolves.
  start=$(date +%s%N)
  (cd "$root/notebooks" &&
   "$py" -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
         --ExecutePreprocessor.kernel_name=python3 --output-dir "$tmp" "$nb" >"$tmp/$name.log" 2>&1)
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  secs=$(printf '%d.%d' $((ms / 1000)) $(((ms % 1000) / 100)))
  if [ $rc -eq 0 ]; then
    printf 'ok   %-36s %6s s\n' "$name" "$secs"
  else
    printf 'FAIL %-36s %6s s (nbconvert exit %d)\n' "$name" "$secs" "$rc"
    # The failing cell and its error (nbclient's own traceback and colour codes left out).
    if grep -q "CellExecutionError: An error occurred" "$tmp/$name.log"; then
      sed -n '/CellExecutionError: An error occurred/,$p' "$tmp/$name.log" | sed 's/\x1b\[[0-9;]*m//g' | tail -n 60
    else
      tail -n 40 "$tmp/$name.log"
    fi
    fail=1
  fi
done
exit $fail
