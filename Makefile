# fleetsim: `make run` and `make test` are all the set-up a fresh Debian 12 machine needs.
JOBS ?= $(shell nproc)
SCENARIO ?= scenarios/quickstart.json

.PHONY: deps build run test bench dev-test calibrate validate format clean

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

run: build
	./build/release/fleetsim run $(SCENARIO)

test: deps
	@cmake --preset ci >/dev/null
	@cmake --build --preset ci -j $(JOBS)
	@ctest --preset ci -j $(JOBS)

dev-test: deps
	@cmake --preset dev >/dev/null
	@cmake --build --preset dev -j $(JOBS)
	@ctest --preset dev -j $(JOBS)

bench: build
	./build/release/tests/bench/fleetsim_bench
	./build/release/tests/bench/fleetsim_bench_step
	./build/release/tests/bench/fleetsim_bench_sweep
	./build/release/tests/bench/fleetsim_bench_run

validate: build
	./build/release/fleetsim validate --reference ../shared/reference/nccl_collectives.csv
	./build/release/fleetsim validate --reference ../shared/reference/nemo_performance_summary.csv

calibrate: build
	/usr/bin/python3 calibration/fit_collectives.py --reference ../shared/reference/kernel-timings.csv --out calibration/collectives.json
	/usr/bin/python3 calibration/import_kernels.py
	/usr/bin/python3 calibration/fit_framework.py --fleetsim build/release/fleetsim --reference ../shared/reference/nemo_performance_summary.csv

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf build
