# fleetsim: `make run` and `make test` are all the set-up a fresh Debian 12 machine needs.
JOBS ?= $(shell nproc)
SCENARIO ?= scenarios/quickstart.json

.PHONY: deps build run test bench dev-test calibrate validate format clean fuzz lint update-goldens
# Seconds each fuzz target runs: in `make test` (bounded, where clang is installed) and `make fuzz`.
FUZZ_TEST_SECONDS ?= 20
FUZZ_SECONDS ?= 300

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

run: build
	./build/release/fleetsim run $(SCENARIO)

# The ci suite, the format check, the same suite under ASan + UBSan (dev preset, without the
# benchmarks), then every fuzz target for FUZZ_TEST_SECONDS (skipped with a note without clang).
test: deps
	@cmake --preset ci >/dev/null
	@cmake --build --preset ci -j $(JOBS)
	@ctest --preset ci -j $(JOBS)
	@bash scripts/lint.sh --format-only
	@cmake --preset dev -DFLEETSIM_BUILD_BENCH=OFF >/dev/null
	@cmake --build --preset dev -j $(JOBS)
	@ctest --preset dev -j $(JOBS)
	@bash scripts/fuzz.sh --if-available --seconds $(FUZZ_TEST_SECONDS) --jobs $(JOBS)

# libFuzzer targets (fuzz/README.md), each for FUZZ_SECONDS.
fuzz: deps
	@bash scripts/fuzz.sh --seconds $(FUZZ_SECONDS) --jobs $(JOBS)

# clang-format check and clang-tidy (curated checks of .clang-tidy) on sim/.
lint: deps
	@cmake --preset ci >/dev/null
	@bash scripts/lint.sh --build build/ci --jobs $(JOBS)

# The only way the determinism goldens (tests/robustness/expected/) change.
update-goldens: deps
	@cmake --preset ci >/dev/null
	@cmake --build --preset ci -j $(JOBS) --target fleetsim
	/usr/bin/python3 tests/robustness/goldens.py build/ci/fleetsim --update

dev-test: deps
	@cmake --preset dev >/dev/null
	@cmake --build --preset dev -j $(JOBS)
	@ctest --preset dev -j $(JOBS)

bench: build
	./build/release/tests/bench/fleetsim_bench
	./build/release/tests/bench/fleetsim_bench_step
	./build/release/tests/bench/fleetsim_bench_sweep
	./build/release/tests/bench/fleetsim_bench_run
	./build/release/tests/bench/fleetsim_bench_scale build/release/fleetsim
	@if [ -d build/release/python/fleetsim ]; then /usr/bin/python3 tests/bench/bench_python_sweep.py build/release; fi

# Reference measurements live in validation/ and calibration/sources/ (validation/README.md);
# nothing here reads outside the repository. To refresh from a newer copy of the measurements,
# pass the file explicitly, e.g. `make calibrate KERNEL_TIMINGS=/path/to/kernel-timings.csv`.
VALIDATION_DIR ?= validation
KERNEL_TIMINGS ?= calibration/sources/kernel-timings.csv

validate: build
	./build/release/fleetsim validate --reference $(VALIDATION_DIR)/nccl_collectives.csv
	./build/release/fleetsim validate --reference $(VALIDATION_DIR)/nemo_performance_summary.csv

calibrate: build
	/usr/bin/python3 calibration/fit_collectives.py --reference $(KERNEL_TIMINGS) --out calibration/collectives.json
	/usr/bin/python3 calibration/import_kernels.py --reference $(KERNEL_TIMINGS)
	/usr/bin/python3 calibration/fit_framework.py --fleetsim build/release/fleetsim --reference $(VALIDATION_DIR)/nemo_performance_summary.csv --report calibration/framework-fit.md

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf build
