#!/usr/bin/env bash
# Static checks: clang-format (--dry-run --Werror on every tracked C++ file) and clang-tidy with
# the curated checks of .clang-tidy on every tracked sim/ source, using a build folder's
# compile_commands.json. `make lint` runs both; `make test` runs the format check.
#
#   scripts/lint.sh [--format-only] [--build DIR] [--jobs N]
set -euo pipefail
cd "$(dirname "$0")/.."
format_only=0 build=build/ci jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --format-only) format_only=1; shift ;;
    --build) build="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    *) echo "lint.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if ! command -v clang-format >/dev/null; then
  echo "lint.sh: clang-format not found (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
git ls-files -z '*.cpp' '*.h' | xargs -0 clang-format --dry-run --Werror
echo "clang-format: $(git ls-files '*.cpp' '*.h' | wc -l) files clean"
[ "$format_only" -eq 1 ] && exit 0
if [ ! -f "$build/compile_commands.json" ]; then
  echo "lint.sh: $build/compile_commands.json missing; configure that build first (cmake --preset ci)" >&2
  exit 2
fi
git ls-files -z 'sim/*.cpp' | xargs -0 -n 1 -P "$jobs" clang-tidy -p "$build" --quiet 2>&1 |
  grep -v -E '^[0-9]+ warnings? generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter' |
  tee "$build/clang-tidy.log"
if grep -q -E 'error:|warning:' "$build/clang-tidy.log"; then
  echo "clang-tidy: findings above" >&2
  exit 1
fi
echo "clang-tidy: $(git ls-files 'sim/*.cpp' | wc -l) files clean"
